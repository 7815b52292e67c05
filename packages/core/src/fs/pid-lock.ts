import { closeSync, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { uptime } from "node:os";
import { ConfigError } from "../config/config-error.js";
import { fileWriteError, writeFully } from "./write.js";

/**
 * A lock file holding its owner's pid: one process at a time may hold `path`. A lock is taken
 * over when its process is gone (killed), when it was written before this boot (a power cut: its
 * pid may belong to anything now), or when that pid runs something other than node. The same
 * process taking it again gets it (tests run several owners in one process). While another live
 * process holds it, `held(pid)` gives the error thrown. Returns the release function (also run at
 * the process's exit).
 */
export function lockByPid(path: string, held: (owner: number) => Error): () => void {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, "wx");
      try {
        writeFully(fd, `${process.pid}\n`);
      } catch (error) {
        // A full disk: no empty lock left behind, and one line that says which file.
        try {
          rmSync(path, { force: true });
        } catch {
          // A lock that names no pid is taken over by the next start anyway.
        }
        throw fileWriteError("Could not write", path, error);
      } finally {
        closeSync(fd);
      }
      const release = () => {
        process.off("exit", release);
        if (ownerOf(path) === process.pid) rmSync(path, { force: true });
      };
      process.on("exit", release);
      return release;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const owner = ownerOf(path);
    if (owner === process.pid) return () => {};
    if (owner !== undefined && pidAlive(owner) && !stale(path, owner)) throw held(owner);
    // Left by a process that is gone: take it over.
    rmSync(path, { force: true });
  }
  throw new ConfigError(`Could not take the lock ${path}: another process keeps replacing it.`);
}

/** The live process holding the lock at `path` (by the rules above), or undefined: none. */
export function lockHolder(path: string): number | undefined {
  const owner = ownerOf(path);
  return owner !== undefined && pidAlive(owner) && !stale(path, owner) ? owner : undefined;
}

function ownerOf(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Written before the machine booted, or held by a pid that is not a node process now. */
function stale(path: string, pid: number): boolean {
  try {
    if (statSync(path).mtimeMs < Date.now() - uptime() * 1000) return true;
  } catch {
    return true;
  }
  try {
    // Linux: what the pid runs now. Elsewhere there is no /proc and the pid is trusted.
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    return !/node|guppy/.test(command);
  } catch {
    return false;
  }
}

/** Whether a process with this pid exists (EPERM: it does, but belongs to someone else). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
