/**
 * The text without its trailing "\n"s. A loop from the end: `text.replace(/\n+$/, "")` tries a
 * match at every run of newlines and scans each to its end, which is quadratic in a text of many
 * newline runs (a 1 MB model answer or command output of them took seconds).
 */
export function trimTrailingNewlines(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 10) end--;
  return end === text.length ? text : text.slice(0, end);
}
