import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { NoFollowError, readTextNoFollow } from "../fs/no-follow.js";
import { writeFileAtomic } from "../fs/write.js";
import { canonicalThreadId } from "../store/thread-layout.js";
import { type EventSpec, eventFileText, eventIdOf, parseEventFile } from "./event-file.js";

/** The event files in `dir` that read, and the problems of those that do not. */
export interface EventFiles {
  events: EventSpec[];
  problems: Array<{ file: string; problem: string }>;
}

/**
 * Reads every `*.json` event file in `dir` (a missing folder: none). For `guppy events list`,
 * the `schedule` tool and a `guppy chat`'s status, which read the files — the source of truth —
 * rather than ask a running gateway.
 */
export function readEventFiles(dir: string): EventFiles {
  const out: EventFiles = { events: [], problems: [] };
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return out;
  }
  for (const name of names) {
    const id = eventIdOf(name);
    if (id === undefined) continue;
    let text: string;
    try {
      text = readTextNoFollow(dir, join(dir, name));
    } catch (error) {
      if (error instanceof NoFollowError) out.problems.push({ file: name, problem: error.message });
      continue;
    }
    const parsed = parseEventFile(id, text);
    if (parsed.ok) out.events.push(parsed.event);
    else out.problems.push({ file: name, problem: parsed.problem });
  }
  return out;
}

/** The events of `files` that target `threadId`, whichever way either spells it. */
export function eventsForThread(events: readonly EventSpec[], threadId: string): EventSpec[] {
  const key = canonicalThreadId(threadId);
  return events.filter((e) => {
    if (!("threadId" in e)) return false;
    try {
      return canonicalThreadId(e.threadId) === key;
    } catch {
      return false;
    }
  });
}

export function eventPath(dir: string, id: string): string {
  return join(dir, `${id}.json`);
}

export function eventExists(dir: string, id: string): boolean {
  return existsSync(eventPath(dir, id));
}

/**
 * Writes an event's file whole (a temp file and a rename: the watcher never sees half of it).
 */
export function writeEventFile(dir: string, event: EventSpec): string {
  const path = eventPath(dir, event.id);
  mkdirSync(dir, { recursive: true });
  writeFileAtomic(path, eventFileText(event));
  return path;
}

/** Removes an event's file; false if there was none. */
export function removeEventFile(dir: string, id: string): boolean {
  const path = eventPath(dir, id);
  if (!existsSync(path)) return false;
  rmSync(path, { force: true });
  return true;
}

/** A new event id: `<type>-<6 random base-36 chars>`, unused in `dir`. */
export function newEventId(dir: string, type: string): string {
  for (;;) {
    const id = `${type}-${Math.random().toString(36).slice(2, 8).padEnd(6, "0")}`;
    if (!eventExists(dir, id)) return id;
  }
}
