import type { Dirent } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";

/**
 * The ids of the threads with a directory under GUPPY_HOME, as the store's `listThreads` gives
 * them (canonical: `adapter:channel:thread`, the defaults filled in), read without blocking: the
 * HTTP worker lists them itself for GET /v1/threads instead of asking the agents' thread, for
 * which the walk of 20,000 directories took ~0.2 s. The worker loads nothing of @guppy/core, so
 * the rules of the data layout (README "Where your data lives") are followed here again: a
 * directory name is a URL-encoded id part (`%00empty` for an empty one), a shortened one (a
 * prefix, `~` and a hash) has the full id in the thread's `thread-id` file, and `skills`,
 * `memory`, `logs`, `access` and hidden directories hold no threads. The test checks this
 * against the store's own listing.
 */
export async function listThreadDirs(home: string): Promise<string[]> {
  const ids: string[] = [];
  for (const adapter of await dirs(home)) {
    if (NOT_ADAPTERS.has(adapter) || adapter.startsWith(".")) continue;
    const channels = (await dirs(join(home, adapter))).filter((c) => c !== "skills");
    const listed = await Promise.all(
      channels.map(async (channel) => {
        const threads = (await dirs(join(home, adapter, channel))).filter((t) => t !== "skills");
        return Promise.all(threads.map((thread) => threadIdOf(home, adapter, channel, thread)));
      }),
    );
    for (const id of listed.flat()) if (id !== undefined) ids.push(id);
  }
  return ids;
}

const NOT_ADAPTERS = new Set(["skills", "memory", "logs", "access"]);
const ADAPTER_RE = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const shortened = (name: string) => /~[0-9a-f]{16}$/.test(name);
const decode = (name: string) => (name === "%00empty" ? "" : decodeURIComponent(name));

async function threadIdOf(
  home: string,
  adapter: string,
  channel: string,
  thread: string,
): Promise<string | undefined> {
  try {
    const id =
      shortened(channel) || shortened(thread)
        ? (await readFile(join(home, adapter, channel, thread, "thread-id"), "utf8")).trim()
        : `${adapter}:${decode(channel)}:${decode(thread)}`;
    return canonical(id);
  } catch {
    return undefined; // a name of the user's, not a thread's
  }
}

/** `adapter:channel:thread` with a missing part "default"; undefined when not a thread id. */
function canonical(id: string): string | undefined {
  const first = id.indexOf(":");
  const adapter = first === -1 ? id : id.slice(0, first);
  if (!ADAPTER_RE.test(adapter)) return undefined;
  const rest = first === -1 ? "" : id.slice(first + 1);
  const second = rest.indexOf(":");
  const channel = second === -1 ? rest : rest.slice(0, second);
  const thread = second === -1 ? "" : rest.slice(second + 1);
  return `${adapter}:${channel || "default"}:${thread || "default"}`;
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
