import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** The per-thread inbox of earlier versions (`<thread dir>/inbox.jsonl`), imported once. */
const LEGACY_INBOX_FILE = "inbox.jsonl";

/** Non-empty `<home>/<adapter>/<channel>/<thread>/inbox.jsonl` files of earlier versions. */
export function findLegacyInboxes(home: string): string[] {
  const out: string[] = [];
  for (const adapter of dirs(home)) {
    if (adapter.startsWith(".")) continue;
    for (const channel of dirs(join(home, adapter))) {
      for (const thread of dirs(join(home, adapter, channel))) {
        const file = join(home, adapter, channel, thread, LEGACY_INBOX_FILE);
        if (statSync(file, { throwIfNoEntry: false })?.isFile()) out.push(file);
      }
    }
  }
  return out;
}

function dirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    return [];
  }
}
