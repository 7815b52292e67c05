import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, isAbsolute, relative, sep } from "node:path";
import { writeFully } from "./write.js";

// Opening files that a sandboxed tool can reach without following a symlink out of their place.
//
// A check of a path and a later open of it are two steps: between them a command in the sandbox
// can swap a folder for a symlink (renameat2 RENAME_EXCHANGE), and an open by path then lands
// wherever the link points. These functions resolve a path one component at a time from a
// trusted root, each with O_NOFOLLOW, through the descriptor of the folder opened last
// (`/proc/self/fd/<fd>/<name>` is openat(2) for Node), so what they open is the file inside the
// root the path names, or nothing: a symlink anywhere below the root refuses the open.

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = constants;

/** An open refused because a part of the path is a symlink or not what it should be. */
export class NoFollowError extends Error {
  readonly code = "ENOFOLLOW";
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path} ${reason}`);
    this.name = "NoFollowError";
  }
}

/** Whether descriptors can be opened through (Linux's /proc); elsewhere paths are opened as given. */
const procFd = existsSync("/proc/self/fd");

const at = (dirFd: number, name: string) => `/proc/self/fd/${dirFd}/${name}`;

/** `path`'s components below `root`, or undefined when it is not under it. */
function partsBelow(root: string, path: string): string[] | undefined {
  const rel = relative(root, path);
  if (rel === "") return [];
  if (rel.startsWith("..") || isAbsolute(rel)) return undefined;
  return rel.split(sep).filter((part) => part !== "" && part !== ".");
}

/** The real path of `root` (symlinks above the root are the owner's own and are followed). */
function realRoot(root: string): string {
  try {
    return realpathSync(root);
  } catch {
    return root;
  }
}

function refusal(path: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ELOOP") return new NoFollowError(path, "goes through a symlink, which is refused");
  if (code === "ENOTDIR") return new NoFollowError(path, "goes through something not a folder");
  return error as Error;
}

/**
 * Opens the folder `dir` (under `root`) one component at a time without following a symlink,
 * creating missing folders when `create` is set; its descriptor. Throws ENOENT for a missing
 * folder (not creating), NoFollowError for a symlink on the way.
 */
function openFolder(root: string, dir: string, create: boolean, shown: string): number {
  const parts = partsBelow(root, dir);
  if (!parts) throw new NoFollowError(shown, `is outside ${root}`);
  let fd = openSync(realRoot(root), O_RDONLY | O_DIRECTORY);
  try {
    for (const part of parts) {
      let next: number;
      try {
        next = openSync(at(fd, part), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT" || !create) throw error;
        try {
          mkdirSync(at(fd, part));
        } catch (made) {
          if ((made as NodeJS.ErrnoException).code !== "EEXIST") throw made;
        }
        next = openSync(at(fd, part), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      }
      closeSync(fd);
      fd = next;
    }
    return fd;
  } catch (error) {
    closeSync(fd);
    throw refusal(shown, error);
  }
}

function splitLast(path: string): { dir: string; name: string } {
  const cut = path.lastIndexOf(sep);
  return { dir: path.slice(0, cut) || sep, name: path.slice(cut + 1) };
}

/**
 * Opens the file at `path` for reading, every component below `root` opened without following a
 * symlink, and without blocking on a FIFO. Throws ENOENT when nothing is there, NoFollowError for
 * a symlink on the way. The caller closes the descriptor.
 */
export function openNoFollow(root: string, path: string): number {
  if (!procFd) return openSync(path, O_RDONLY | O_NONBLOCK);
  const { dir, name } = splitLast(path);
  const dirFd = openFolder(root, dir, false, path);
  try {
    return openSync(at(dirFd, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    throw refusal(path, error);
  } finally {
    closeSync(dirFd);
  }
}

/**
 * The whole of the regular file at `path` (see `openNoFollow`); undefined when there is none.
 * Anything but a regular file is refused with a NoFollowError.
 */
export function readNoFollow(root: string, path: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openNoFollow(root, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new NoFollowError(path, "is not a regular file");
    return readAll(fd, stat.size);
  } finally {
    closeSync(fd);
  }
}

/** What the descriptor's file holds, read to its end. */
export function readAll(fd: number, sizeHint: number): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.max(8192, sizeHint - total + 1));
    const n = readSync(fd, chunk, 0, chunk.length, total);
    if (n === 0) break;
    chunks.push(chunk.subarray(0, n));
    total += n;
  }
  return Buffer.concat(chunks, total);
}

/**
 * Writes `data` as the whole file at `path`, every component below `root` opened without
 * following a symlink (missing folders are made the same way). The bytes go to a new file in the
 * opened folder, which is then renamed over the name within that same folder: a swap of any
 * folder on the way cannot send the write elsewhere, and a reader never sees half a file. An
 * existing file keeps its permission bits. A symlink or a folder at the name is refused.
 */
export function writeNoFollow(root: string, path: string, data: string | Uint8Array): void {
  if (!procFd) {
    // No descriptor paths to open through (not Linux, where no bubblewrap runs either): by path.
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, data);
    return;
  }
  const { dir, name } = splitLast(path);
  const dirFd = openFolder(root, dir, true, path);
  try {
    let mode: number | undefined;
    try {
      const fd = openSync(at(dirFd, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
      try {
        const stat = fstatSync(fd);
        if (!stat.isFile()) throw new NoFollowError(path, "is not a regular file");
        mode = stat.mode & 0o7777;
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw refusal(path, error);
    }
    const temp = `.${name}.${randomBytes(6).toString("hex")}.tmp`;
    const fd = openSync(at(dirFd, temp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666);
    try {
      if (mode !== undefined) fchmodSync(fd, mode);
      writeFully(fd, data, 0);
    } catch (error) {
      closeSync(fd);
      rmSync(at(dirFd, temp), { force: true });
      throw error;
    }
    closeSync(fd);
    try {
      renameSync(at(dirFd, temp), at(dirFd, name));
    } catch (error) {
      rmSync(at(dirFd, temp), { force: true });
      throw error;
    }
  } finally {
    closeSync(dirFd);
  }
}

/**
 * `readNoFollow` as UTF-8 text, throwing ENOENT when nothing is there (as `readFileSync` does):
 * for guppy's own files in a folder a tool may write (event files, HEARTBEAT.md).
 */
export function readTextNoFollow(root: string, path: string): string {
  const bytes = readNoFollow(root, path);
  if (bytes === undefined) {
    throw Object.assign(new Error(`ENOENT: no such file, open '${path}'`), { code: "ENOENT" });
  }
  return bytes.toString("utf8");
}
