/**
 * What happens when writing to stdout or stderr fails. A one-shot command exits quietly when
 * nobody reads any more (a pipe whose reader exited, as in `guppy config | head`, or a terminal
 * that hung up) and says in one line what else went wrong; a long-running one (`guppy serve`)
 * installs its own handler with `whenOutputFails` and keeps going.
 */
export type OutputErrorHandler = (
  stream: "stdout" | "stderr",
  error: NodeJS.ErrnoException,
) => void;

/** Error codes of a write to an output nobody reads any more. */
const CLOSED_OUTPUT_CODES: ReadonlySet<string> = new Set(["EPIPE", "EIO"]);

/** Whether the output failed because nobody reads it any more. */
function outputClosed(error: NodeJS.ErrnoException): boolean {
  return error.code !== undefined && CLOSED_OUTPUT_CODES.has(error.code);
}

export const oneShot: OutputErrorHandler = (stream, error) => {
  if (outputClosed(error)) process.exit(process.exitCode ?? 0);
  // Anything else (a full disk under `guppy config > file`): one line, not a stack trace.
  if (stream === "stdout") {
    try {
      process.stderr.write(`guppy: could not write the output: ${error.message}\n`);
    } catch {
      // stderr is gone too: the exit code says it.
    }
  }
  process.exit(1);
};
let handler = oneShot;

export function whenOutputFails(next: OutputErrorHandler): void {
  handler = next;
}

export function outputFailed(stream: "stdout" | "stderr", error: NodeJS.ErrnoException): void {
  handler(stream, error);
}
