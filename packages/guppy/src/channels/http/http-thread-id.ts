/**
 * The thread of a chat completion, `http:<user>:<thread>`. A `%` or `:` in the user is
 * percent-encoded (`%25`, `%3A`) so that the id's parts are told apart again: user `alice:x` on
 * thread `default` is not user `alice` on thread `x:default`, and each (user, thread) pair has a
 * thread of its own. The thread name may hold colons (it is everything after the second one).
 */
export function chatThreadId(user: string, thread: string): string {
  return `http:${user.replace(/[%:]/g, (c) => (c === "%" ? "%25" : "%3A"))}:${thread}`;
}

/**
 * A thread id as the HTTP API writes it where only visible ASCII may go (a path's `{id}`, the
 * X-Guppy-Thread-Id header): URL-encoded as UTF-8, colons kept. `decodeURIComponent` gives the id
 * back, and the value may be put in `/v1/threads/{id}/…` as it is.
 */
export function threadIdInPath(threadId: string): string {
  return encodeURIComponent(threadId).replace(/%3A/g, ":");
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The X-Guppy-Thread header as text: Node hands a header's bytes over one character per byte
 * (Latin-1), and clients such as curl send a non-ASCII name as its UTF-8 bytes, which are read
 * as such. Bytes that are not UTF-8 are refused rather than taken for another name.
 */
export function threadHeader(
  raw: string | undefined,
): { ok: true; name: string } | { ok: false; message: string } {
  const value = raw ?? "";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII is taken as it is
  if (/^[\x00-\x7f]*$/.test(value)) return { ok: true, name: value };
  try {
    return { ok: true, name: utf8.decode(Buffer.from(value, "latin1")) };
  } catch {
    return {
      ok: false,
      message:
        "The X-Guppy-Thread header is not UTF-8 text: send the thread name as ASCII or as its UTF-8 bytes.",
    };
  }
}
