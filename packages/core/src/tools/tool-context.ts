import { closeSync, fstatSync, readSync, type Stats, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { AgentToolResult } from "@mariozechner/pi-agent-core";
import { NoFollowError, openNoFollow, writeNoFollow } from "../fs/no-follow.js";
import type { Redactor } from "../logging/redact.js";
import { type PathMode, type PathPolicy, realPath } from "../sandbox/path-policy.js";
import type { Sandbox } from "../sandbox/sandbox.js";

/** What the built-in tools need from the thread they run in. */
export interface ToolContext {
  /** The thread's workspace: relative paths resolve here, and bash starts here. */
  workspaceDir: string;
  /** Directory for saved full outputs (created on demand). */
  artifactsDir: () => string;
  sandbox: Sandbox;
  /** Longest tool output kept in context. */
  toolResultMaxChars: number;
  /** Default bash timeout. */
  bashTimeoutSeconds: number;
  /**
   * What the file tools may touch (the sandbox's rule set, a guest's workspace, guppy's secret
   * files refused); absent: anything.
   */
  pathPolicy?: PathPolicy;
  /**
   * Configured secrets, taken out of a long output before the tool cuts it to an excerpt (the
   * tool-result hook redacts the result again, whole values only).
   */
  redactor?: Redactor;
}

/**
 * A path given by the model, as a host path (a sandbox that mounts folders elsewhere, such as
 * Docker's /workspace, translates it), resolved (see resolveToolPath) and checked against the
 * context's policy: the real path a file tool may `mode`, or a one-line error naming what is
 * allowed.
 */
export function toolPath(
  ctx: Pick<ToolContext, "workspaceDir" | "pathPolicy"> & {
    sandbox?: Pick<Sandbox, "toHostPath">;
  },
  given: string,
  mode: PathMode,
  tool: string,
): string {
  const trimmed = given.trim();
  const host = ctx.sandbox?.toHostPath?.(trimmed) ?? trimmed;
  const path = resolveToolPath(ctx.workspaceDir, host);
  return ctx.pathPolicy ? ctx.pathPolicy.check(path, mode, tool) : realPath(path);
}

/** A plain-text tool result. */
export function textResult<T>(text: string, details: T): AgentToolResult<T> {
  return { content: [{ type: "text", text }], details };
}

/** Resolves a path given by the model: `~` is the user's home, relative paths are against the workspace. */
export function resolveToolPath(workspaceDir: string, path: string): string {
  const trimmed = path.trim();
  if (trimmed === "~") return homedir();
  if (trimmed.startsWith("~/")) return join(homedir(), trimmed.slice(2));
  return isAbsolute(trimmed) ? resolve(trimmed) : resolve(workspaceDir, trimmed);
}

/**
 * The stat of what is at `path` (symlinks followed), or undefined when there is nothing there
 * (or it cannot be looked at). Anything but a regular file is refused with a one-line error
 * naming what it is, before anything opens it: opening a FIFO waits for a writer, and reading a
 * device such as /dev/zero or /dev/stdin may never end — either would block the thread every
 * agent runs on, where not even SIGTERM is handled any more.
 */
export function regularFileStat(path: string, tool: string): Stats | undefined {
  let stat: Stats;
  try {
    stat = statSync(path);
  } catch {
    return undefined;
  }
  refuseIrregular(path, stat, tool);
  return stat;
}

function refuseIrregular(path: string, stat: Stats, tool: string): void {
  if (stat.isDirectory()) throw new Error(`${path} is a directory, not a file.`);
  if (!stat.isFile()) {
    throw new Error(
      `${path} is ${kindOf(stat)}, not a regular file; ${tool} works on regular files only.`,
    );
  }
}

function kindOf(stat: Stats): string {
  if (stat.isFIFO()) return "a FIFO (named pipe)";
  if (stat.isSocket()) return "a socket";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  return "a special file";
}

/** How much of a file's start is looked at to tell binary from text. */
const SNIFF_BYTES = 8192;

/** True for bytes that look binary: a NUL among the first 8 KiB. read and edit refuse these. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, SNIFF_BYTES).includes(0);
}

/** looksBinary for an open regular file, reading only its first 8 KiB. */
export function fileLooksBinary(fd: number): boolean {
  const head = Buffer.alloc(SNIFF_BYTES);
  return looksBinary(head.subarray(0, readSync(fd, head, 0, head.length, 0)));
}

/**
 * Opens for reading the file a tool checked (`path`, the real path `toolPath` gave): that very
 * file, every part of the path opened without following a symlink, so a folder swapped for a
 * symlink since the check cannot send the read elsewhere. Undefined when nothing is there;
 * anything but a regular file is refused as `regularFileStat` says it. The caller closes `fd`.
 */
export function openChecked(path: string, tool: string): { fd: number; stat: Stats } | undefined {
  let fd: number;
  try {
    fd = openNoFollow("/", path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw swapped(error, tool, "read");
  }
  try {
    const stat = fstatSync(fd);
    refuseIrregular(path, stat, tool);
    return { fd, stat };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * Writes the whole file a tool checked (`path`, the real path `toolPath` gave) the same way:
 * folders opened (or made) without following a symlink, the bytes written to a new file in the
 * opened folder and renamed over the name there (see `writeNoFollow`).
 */
export function writeChecked(path: string, content: string, tool: string): void {
  try {
    writeNoFollow("/", path, content);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOTDIR" || notAFolder(error)) {
      const file = fileOnTheWay(path);
      if (file) throw new Error(`Cannot write ${path}: ${file} is a file, not a directory.`);
    }
    throw swapped(error, tool, "written");
  }
}

function notAFolder(error: unknown): boolean {
  return error instanceof NoFollowError && error.reason.includes("not a folder");
}

/** The nearest folder above `path` that is a file, if one is. */
function fileOnTheWay(path: string): string | undefined {
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
    let stat: Stats;
    try {
      stat = statSync(dir);
    } catch {
      continue; // missing, or under a file: look further up
    }
    if (!stat.isDirectory()) return dir;
  }
  return undefined;
}

function swapped(error: unknown, tool: string, done: "read" | "written"): Error {
  if (!(error instanceof NoFollowError)) return error as Error;
  return new Error(
    `${tool}: ${error.path} changed while in use (a part of it ${error.reason.replace(/^goes/, "now goes")}); nothing was ${done}.`,
  );
}

/**
 * The bytes as UTF-8 text, or the offset of the first byte that is not valid UTF-8: decoding
 * turns such bytes into U+FFFD, so writing the text back would change them, not only the part
 * that was meant to change. Valid means decoding then encoding gives the same bytes.
 */
export function decodeUtf8(bytes: Buffer): { text: string } | { invalidAt: number } {
  const text = bytes.toString("utf8");
  const again = Buffer.from(text, "utf8");
  if (again.equals(bytes)) return { text };
  // Up to the first invalid sequence both are the same bytes.
  let at = 0;
  while (at < bytes.length && bytes[at] === again[at]) at++;
  return { invalidAt: at };
}
