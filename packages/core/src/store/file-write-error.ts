/**
 * A failed write as one line that names the file: `<doing> <path>: no space left on device
 * (ENOSPC)` rather than node's `ENOSPC: no space left on device, write`, which does not say
 * which file. Keeps the error's `code`; the original is its `cause`.
 */
export function fileWriteError(doing: string, path: string, error: unknown): Error {
  const e = error as NodeJS.ErrnoException | undefined;
  let reason = e instanceof Error ? e.message : String(error);
  const code = typeof e?.code === "string" ? e.code : undefined;
  if (code !== undefined && reason.startsWith(`${code}: `)) {
    // "ENOSPC: no space left on device, write" → "no space left on device (ENOSPC)"
    reason = `${reason.slice(code.length + 2).replace(/, [a-z]+( '.*)?$/, "")} (${code})`;
  }
  const out: NodeJS.ErrnoException = new Error(
    `${doing} ${path}: ${reason.replace(/\s*\n\s*/g, " ")}`,
    { cause: error },
  );
  if (code !== undefined) out.code = code;
  return out;
}
