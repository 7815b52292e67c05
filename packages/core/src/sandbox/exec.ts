import { closeSync, openSync, unlinkSync } from "node:fs";
import { writeFully } from "../fs/write.js";

// What running a command takes and gives, and how its output is captured.

export interface ExecOptions {
  cwd: string;
  /** Milliseconds (1 to MAX_EXEC_TIMEOUT_MS); the whole process tree is killed when it passes. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Combined stdout+stderr chunks as they arrive. */
  onOutput?: (chunk: string) => void;
  /**
   * Bytes of output kept in memory (default 10 MiB). A longer output keeps its first and last
   * half of them, and goes whole to the `spillTo` file as it comes.
   */
  maxBufferBytes?: number;
  /** The file an output longer than `maxBufferBytes` is saved to (called only then). */
  spillTo?: () => string;
  /**
   * Most bytes of such an output's start the file holds (default 1 GiB); past it, only its end
   * (the last half of `maxBufferBytes`) follows, after a line saying how much was left out.
   */
  maxSpillBytes?: number;
  /** The command's environment (default: guppy's), always without guppy's own secrets. */
  env?: NodeJS.ProcessEnv;
}

export interface ExecResult {
  /** Combined stdout and stderr in arrival order: all of it, or its head (see `overflow`). */
  output: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** Set when the output passed `maxBufferBytes`: its tail, its size and where it was saved. */
  overflow?: OutputOverflow;
}

/** The longest a Node timer waits (2^31 − 1 ms, ~24.8 days); a longer one fires at once. */
export const MAX_EXEC_TIMEOUT_MS = 2 ** 31 - 1;

export interface OutputCaptureOptions {
  /** Bytes kept in memory: all of the output up to this; past it, its first and last half. */
  memoryBytes: number;
  /**
   * The file the whole output is written to, from its start, once it passes `memoryBytes`
   * (called then, once). Without it the middle of such an output is only counted.
   */
  spillTo?: () => string;
  /**
   * Most bytes of the output's start the file holds. An output beyond it keeps only that
   * start, a line saying how many bytes were left out, and its last `memoryBytes / 2` bytes.
   */
  maxFileBytes: number;
}

/** Where an output too long for memory was saved. */
export interface SpilledFile {
  path: string;
  /**
   * Set when the output passed `maxFileBytes`: the file holds the output's first `headBytes`,
   * then a line saying how many bytes were left out, then its last `tailBytes`.
   */
  cut?: { headBytes: number; tailBytes: number };
}

/** An output longer than fits in memory: its head is the capture's `text`. */
export interface OutputOverflow {
  /** The output's last bytes (up to `memoryBytes / 2`), decoded. */
  tail: string;
  /** Bytes of the output between the head and `tail`: in memory neither. */
  omittedBytes: number;
  totalBytes: number;
  /** Lines as `read` counts them: a last newline does not start another one. */
  lines: number;
  /** The file holding the output, when one was asked for and could be written. */
  file?: SpilledFile;
  /** Why the output could not be saved (the partial file is removed). */
  fileError?: string;
}

export interface CapturedOutput {
  /** All of the output when it fit in memory; otherwise its first bytes. */
  text: string;
  overflow?: OutputOverflow;
}

export interface OutputCapture {
  push(data: Buffer): void;
  /** Ends the capture (later pushes are ignored) and closes the file. */
  finish(): CapturedOutput;
}

const NEWLINE = 0x0a;

/**
 * A command's output as it arrives, in bounded memory: up to `memoryBytes` it is all kept (no
 * file, nothing counted). Past that only a head and a rolling tail stay in memory, and the whole
 * output (from its start) is streamed to the `spillTo` file, so a long log keeps both its real
 * end — where the error usually is — and everything before it.
 * Long by design: one closure per command whose push and finish share the buffers and file.
 */
export function createOutputCapture(options: OutputCaptureOptions): OutputCapture {
  const half = Math.floor(options.memoryBytes / 2);
  /** All of the output while it fits; after the overflow, its first `half` bytes. */
  let kept: Buffer[] = [];
  let keptBytes = 0;
  const tail: Buffer[] = [];
  let tailBytes = 0;
  let overflowed = false;
  let totalBytes = 0;
  let newlines = 0;
  let lastByte = -1;
  let done = false;

  let fd: number | undefined;
  let path: string | undefined;
  let fileBytes = 0;
  let fileDropped = false;
  let fileError: string | undefined;

  const fail = (error: unknown) => {
    fileError = error instanceof Error ? error.message : String(error);
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // The file goes anyway.
      }
      fd = undefined;
    }
    if (path !== undefined) {
      try {
        // A partial file on a full disk only takes what the store needs.
        unlinkSync(path);
      } catch {
        // Already gone, or never made.
      }
    }
  };

  const toFile = (data: Buffer) => {
    if (fd === undefined) return;
    const room = options.maxFileBytes - fileBytes;
    const part = data.length <= room ? data : data.subarray(0, Math.max(0, room));
    if (part.length < data.length) fileDropped = true;
    if (part.length === 0) return;
    try {
      writeFully(fd, part);
      fileBytes += part.length;
    } catch (error) {
      fail(error);
    }
  };

  const count = (data: Buffer) => {
    for (let i = data.indexOf(NEWLINE); i !== -1; i = data.indexOf(NEWLINE, i + 1)) newlines++;
  };

  /** Past the overflow: fills the head up to `half`, then keeps the last `half` bytes. */
  const keep = (data: Buffer) => {
    let rest = data;
    if (keptBytes < half) {
      const head = rest.subarray(0, half - keptBytes);
      kept.push(head);
      keptBytes += head.length;
      rest = rest.subarray(head.length);
    }
    if (rest.length === 0) return;
    tail.push(rest);
    tailBytes += rest.length;
    while (tail.length > 1 && tailBytes - (tail[0]?.length ?? 0) >= half) {
      tailBytes -= tail.shift()?.length ?? 0;
    }
  };

  const overflow = () => {
    overflowed = true;
    if (options.spillTo) {
      try {
        path = options.spillTo();
        fd = openSync(path, "w");
      } catch (error) {
        fail(error);
      }
    }
    const earlier = kept;
    kept = [];
    keptBytes = 0;
    for (const chunk of earlier) {
      count(chunk);
      toFile(chunk);
      keep(chunk);
    }
  };

  const finishFile = (tailStart: number, tailBuffer: Buffer): SpilledFile | undefined => {
    if (fd === undefined || path === undefined) return undefined;
    let cut: SpilledFile["cut"];
    try {
      if (fileDropped) {
        if (tailStart > fileBytes) {
          const note = `\n[... ${tailStart - fileBytes} bytes of output were not saved here ...]\n`;
          writeFully(fd, note);
          writeFully(fd, tailBuffer);
          cut = { headBytes: fileBytes, tailBytes: tailBuffer.length };
        } else {
          // The tail reaches back into what the file holds: the file is whole after all.
          writeFully(fd, tailBuffer.subarray(fileBytes - tailStart));
        }
      }
      closeSync(fd);
      fd = undefined;
    } catch (error) {
      fail(error);
      return undefined;
    }
    return cut ? { path, cut } : { path };
  };

  return {
    push(data) {
      if (done || data.length === 0) return;
      totalBytes += data.length;
      if (!overflowed) {
        kept.push(data);
        keptBytes += data.length;
        if (keptBytes <= options.memoryBytes) return;
        overflow();
      } else {
        count(data);
        toFile(data);
        keep(data);
      }
      lastByte = data[data.length - 1] ?? lastByte;
    },

    finish() {
      done = true;
      if (!overflowed) return { text: Buffer.concat(kept).toString("utf8") };
      const tailAll = Buffer.concat(tail);
      const tailBuffer = tailAll.subarray(Math.max(0, tailAll.length - half));
      const tailStart = totalBytes - tailBuffer.length;
      const file = finishFile(tailStart, tailBuffer);
      const head = wholeCharsEnd(Buffer.concat(kept));
      const end = wholeCharsStart(tailBuffer);
      return {
        text: head.toString("utf8"),
        overflow: {
          tail: end.toString("utf8"),
          omittedBytes: totalBytes - head.length - end.length,
          totalBytes,
          lines: newlines + (lastByte === NEWLINE ? 0 : 1),
          ...(file ? { file } : {}),
          ...(fileError !== undefined ? { fileError } : {}),
        },
      };
    },
  };
}

/** `bytes` without a UTF-8 character cut off at its end. */
function wholeCharsEnd(bytes: Buffer): Buffer {
  for (let i = bytes.length - 1; i >= Math.max(0, bytes.length - 4); i--) {
    const b = bytes[i] ?? 0;
    if ((b & 0xc0) === 0x80) continue;
    const size = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return bytes.length - i >= size ? bytes : bytes.subarray(0, i);
  }
  return bytes;
}

/** `bytes` without the end of a UTF-8 character cut off at its start. */
function wholeCharsStart(bytes: Buffer): Buffer {
  let i = 0;
  while (i < 3 && i < bytes.length && ((bytes[i] ?? 0) & 0xc0) === 0x80) i++;
  return bytes.subarray(i);
}
