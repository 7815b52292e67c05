/**
 * What happens when stdout or stderr is closed under guppy (a pipe whose reader exited, as in
 * `guppy config | head`, or a terminal that hung up). A one-shot command exits quietly; a
 * long-running one (`guppy serve`) says otherwise with `whenOutputCloses` and keeps going.
 */
export type OutputClosedHandler = (
  stream: "stdout" | "stderr",
  error: NodeJS.ErrnoException,
) => void;

const exitQuietly: OutputClosedHandler = () => process.exit(process.exitCode ?? 0);
let handler = exitQuietly;

/** Error codes of a write to an output nobody reads any more. */
export const CLOSED_OUTPUT_CODES: ReadonlySet<string> = new Set(["EPIPE", "EIO"]);

export function whenOutputCloses(next: OutputClosedHandler): void {
  handler = next;
}

export function outputClosed(stream: "stdout" | "stderr", error: NodeJS.ErrnoException): void {
  handler(stream, error);
}
