import { excerptLengths, type SpillResult } from "../artifacts/spill-output.js";
import type { OutputOverflow } from "../sandbox/exec.js";

/**
 * The excerpt of a command output too long to hold in memory (the sandbox kept its `head` and
 * its tail and streamed it to a file): its real first and last chars within about `maxChars`,
 * and a note giving its true size and the file that holds it — or how much of it, or why none.
 */
export function overflowExcerpt(
  head: string,
  overflow: OutputOverflow,
  maxChars: number,
): SpillResult {
  const lengths = excerptLengths(maxChars);
  const shownHead = head.slice(0, lengths.head);
  const shownTail = overflow.tail.slice(Math.max(0, overflow.tail.length - lengths.tail));
  const omitted = overflow.totalBytes - Buffer.byteLength(shownHead) - Buffer.byteLength(shownTail);
  const size = `${overflow.totalBytes} bytes, ${overflow.lines} lines`;
  const { file } = overflow;
  let where: string;
  if (file?.cut) {
    where =
      ` The output (${size}) was too long to save whole: ${file.path} holds its first ` +
      `${file.cut.headBytes} bytes, then a line saying how many bytes were left out, then its ` +
      `last ${file.cut.tailBytes} bytes; read it with the read tool (offset/limit) if you need more.`;
  } else if (file) {
    where = ` The full output (${size}) is saved at ${file.path}; read it with the read tool (offset/limit) if you need the middle.`;
  } else {
    where = ` The full output (${size}) could not be saved: ${overflow.fileError ?? "no file was given"}.`;
  }
  return {
    text: `${shownHead}\n\n[... ${omitted} bytes omitted ...${where}]\n\n${shownTail}`,
    ...(file ? { path: file.path } : {}),
  };
}
