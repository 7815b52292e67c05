// A search query as people type one: words, all of which must appear (in any case, anywhere in a
// message: "deploy" finds "Deployment"), and "quoted phrases", which must appear as written, word
// for word in that order (case and runs of spaces aside).

/** A parsed query: lower-cased terms, each of which a message must contain. */
export interface SearchQuery {
  /** Words and phrases, lower-cased, inner whitespace collapsed to one space. */
  terms: string[];
}

/** Parses `query`; undefined when it holds no term (empty, or only quotes and spaces). */
export function parseSearchQuery(query: string): SearchQuery | undefined {
  const terms: string[] = [];
  // A quote left open runs to the end: "deploy friday → the phrase `deploy friday`.
  const re = /"([^"]*)"?|(\S+)/g;
  for (const m of query.matchAll(re)) {
    const term = normalise(m[1] ?? m[2] ?? "").replace(/^"+|"+$/g, "");
    if (term !== "" && !terms.includes(term)) terms.push(term);
  }
  return terms.length > 0 ? { terms } : undefined;
}

function normalise(text: string): string {
  return text.toLowerCase().replace(/\s+/g, " ").trim();
}

/**
 * Where `text` matches `query`: the index (in `text`) of the first term found, or -1 when a term
 * is missing.
 */
export function matchQuery(query: SearchQuery, text: string): number {
  const flat = text.toLowerCase().replace(/\s/g, " ");
  let first = -1;
  for (const term of query.terms) {
    const at = term.includes(" ") ? phraseIndex(flat, term) : flat.indexOf(term);
    if (at === -1) return -1;
    if (first === -1 || at < first) first = at;
  }
  return first;
}

/** A phrase's index in `flat`, runs of spaces between its words counting as one. */
function phraseIndex(flat: string, phrase: string): number {
  const pattern = phrase
    .split(" ")
    .map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(" +");
  return flat.search(new RegExp(pattern));
}

/**
 * A short excerpt of `text` around index `at`: at most about `width` characters, whitespace
 * collapsed, "…" where it was cut.
 */
export function excerptAround(text: string, at: number, width = 160): string {
  if (text.length <= width) return collapse(text);
  const start = Math.max(0, Math.min(at - Math.floor(width / 3), text.length - width));
  const end = Math.min(text.length, start + width);
  return `${start > 0 ? "…" : ""}${collapse(text.slice(start, end))}${end < text.length ? "…" : ""}`;
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * A cheap first test of a raw log line (its JSON text) before it is parsed: false only when the
 * line cannot hold a match — a word of a term is missing from it. Words JSON would escape
 * (quotes, backslashes, control characters) are not tested here.
 */
export function rawLineFilter(query: SearchQuery): (line: string) => boolean {
  const words = query.terms
    .flatMap((term) => term.split(" "))
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what JSON escapes
    .filter((word) => word !== "" && !/["\\\u0000-\u001f]/.test(word));
  if (words.length === 0) return () => true;
  return (line) => {
    const lower = line.toLowerCase();
    return words.every((word) => lower.includes(word));
  };
}
