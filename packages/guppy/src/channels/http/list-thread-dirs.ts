import type { Dirent } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  isAdapterDirName,
  isThreadPartName,
  needsThreadIdFile,
  THREAD_ID_FILE,
  threadIdOfDir,
} from "@guppy/core/thread-layout";

/**
 * The ids of the threads with a directory under GUPPY_HOME, as the store's `listThreads` gives
 * them, read without blocking: the HTTP worker lists them itself for GET /v1/threads instead of
 * asking the agents' thread. The layout rules come from core's thread-layout module.
 */
export async function listThreadDirs(home: string): Promise<string[]> {
  const ids: string[] = [];
  for (const adapter of (await dirs(home)).filter(isAdapterDirName)) {
    const channels = (await dirs(join(home, adapter))).filter(isThreadPartName);
    const listed = await Promise.all(
      channels.map(async (channel) => {
        const threads = (await dirs(join(home, adapter, channel))).filter(isThreadPartName);
        return Promise.all(threads.map((thread) => threadIdOf(home, adapter, channel, thread)));
      }),
    );
    for (const id of listed.flat()) if (id !== undefined) ids.push(id);
  }
  return ids;
}

async function threadIdOf(
  home: string,
  adapter: string,
  channel: string,
  thread: string,
): Promise<string | undefined> {
  const idFile = needsThreadIdFile(channel, thread)
    ? await readFile(join(home, adapter, channel, thread, THREAD_ID_FILE), "utf8").catch(
        () => undefined,
      )
    : undefined;
  return threadIdOfDir(adapter, channel, thread, idFile);
}

/** The directories in `dir` (links to directories too); none when it cannot be read. */
async function dirs(dir: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const names = await Promise.all(
    entries.map(async (entry) => {
      if (entry.isDirectory()) return entry.name;
      if (!entry.isSymbolicLink()) return undefined;
      const target = await stat(join(dir, entry.name)).catch(() => undefined);
      return target?.isDirectory() ? entry.name : undefined;
    }),
  );
  return names.filter((name): name is string => name !== undefined);
}
