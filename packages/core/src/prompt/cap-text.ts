/** Longest text taken from any one file into the system prompt. */
export const DEFAULT_FILE_MAX_CHARS = 20_000;

/** Cuts `text` to `max` characters with a note telling the agent where the rest is. */
export function capText(text: string, max: number, path: string): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n\n[truncated: showing the first ${max} of ${text.length} characters of ${path}; read the file for the rest]`;
}
