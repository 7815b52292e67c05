import type { Store } from "../store/create-store.js";
import { canonicalThreadId } from "../store/thread-layout.js";
import { threadFigures } from "../store/thread-status-file.js";
import type { SavedThreadStatus, ThreadEventInfo, ThreadStatus, ThreadUsage } from "../types.js";
import type { ThreadActor } from "./thread-actor.js";

/** Threads' status.json kept read: past this the cache starts over (ids come from users too). */
const MAX_SAVED_STATUSES = 65_536;

/**
 * Threads' status.json as read for `status` while no agent of theirs was loaded (null: none), by
 * canonical id. An entry goes when its actor saves a new one.
 */
export class SavedStatuses {
  private readonly store: Store;
  private readonly read = new Map<string, SavedThreadStatus | null>();

  constructor(store: Store) {
    this.store = store;
  }

  get(key: string): SavedThreadStatus | undefined {
    let saved = this.read.get(key);
    if (saved === undefined) {
      saved = this.store.readStatus(key) ?? null;
      if (this.read.size >= MAX_SAVED_STATUSES) this.read.clear();
      this.read.set(key, saved);
    }
    return saved ?? undefined;
  }

  forget(key: string): void {
    this.read.delete(key);
  }
}

/** The canonical spelling of `threadId` (its actor's and saved status's key); none if invalid. */
export function keyOf(threadId: string): string | undefined {
  try {
    return canonicalThreadId(threadId);
  } catch {
    return undefined;
  }
}

/** A thread's status: from its actor and runner when loaded, else from its status.json. */
export function threadStatus(
  threadId: string,
  actors: ReadonlyMap<string, ThreadActor>,
  saved: SavedStatuses,
  defaults: {
    modelName?: string;
    contextWindow?: number;
    sandbox?: string;
    threadEvents?(threadId: string): ThreadEventInfo[];
    threadUsage?(threadId: string): ThreadUsage;
  },
): ThreadStatus {
  const key = keyOf(threadId);
  const actor = key === undefined ? undefined : actors.get(key);
  const runner = actor?.runner;
  // No agent loaded and no figures of this process: what the thread saved last time.
  const file = key === undefined || runner || actor?.snapshot ? undefined : saved.get(key);
  const snap = runner ? threadFigures(runner.stats()) : (actor?.snapshot ?? file);
  const lastActivity = actor ? new Date(actor.lastActivity).toISOString() : file?.lastActivity;
  const queued = actor ? actor.waiting() : 0;
  const events = defaults.threadEvents?.(threadId);
  const usage = defaults.threadUsage?.(threadId);
  // "running" once the run has begun, as the shutdown sees it (a prompt with its slot but not its
  // files yet is not run by a shutdown that comes meanwhile).
  const waiting = queued > 0 || actor?.current !== undefined || actor?.compacting !== undefined;
  return {
    threadId: actor?.threadId ?? threadId,
    state: actor?.running ? "running" : waiting ? "waiting" : runner ? "idle" : "inactive",
    queued,
    ...(lastActivity ? { lastActivity } : {}),
    // provider/model-id either way, as configured: a loaded thread gave the bare id.
    model: runner ? `${runner.model.provider}/${runner.model.id}` : (defaults.modelName ?? ""),
    messages: snap?.messages ?? 0,
    contextTokens: snap?.contextTokens ?? 0,
    contextWindow: snap?.contextWindow ?? defaults.contextWindow ?? 0,
    compactions: snap?.compactions ?? 0,
    ...(snap?.compactionFallbacks ? { compactionFallbacks: snap.compactionFallbacks } : {}),
    cost: snap?.cost ?? 0,
    ...(snap?.lastUsage ? { lastUsage: snap.lastUsage } : {}),
    ...(defaults.sandbox ? { sandbox: defaults.sandbox } : {}),
    ...(events && events.length > 0 ? { events } : {}),
    ...(usage ? { usage } : {}),
  };
}
