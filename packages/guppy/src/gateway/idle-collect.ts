import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** A full garbage collection of the calling thread's heap, got without `node --expose-gc`. */
function fullCollection(): (() => void) | undefined {
  try {
    setFlagsFromString("--expose-gc");
    const collect = runInNewContext("gc") as unknown;
    return typeof collect === "function" ? (collect as () => void) : undefined;
  } catch {
    return undefined;
  } finally {
    // Contexts made later (tools', workers') do not get a `gc` global.
    setFlagsFromString("--no-expose-gc");
  }
}

export interface IdleCollector {
  /** Something happened: the thread is busy, and a collection is due once it is quiet again. */
  touch(): void;
  stop(): void;
}

/**
 * Runs one full garbage collection of this thread's heap once it has been quiet for `quietMs`
 * after activity. After a load V8 collects an idle heap rarely or never (nothing allocates, so
 * nothing triggers a GC): the HTTP worker kept ~13 MB of the load's garbage, and its grown heap,
 * for as long as the gateway stayed idle (bench/memory). Two collections per quiet spell, costing
 * a few milliseconds of a thread that has nothing else to do.
 */
export function createIdleCollector(quietMs: number): IdleCollector {
  const collect = fullCollection();
  let last = 0;
  let due = false;
  const timer = setInterval(
    () => {
      if (!due || Date.now() - last < quietMs) return;
      due = false;
      if (!collect) return;
      collect();
      // Again a moment later: what the first one's finalizers and weak callbacks let go (native
      // handles' wrappers, caches keyed weakly) goes in the second.
      setTimeout(collect, 100).unref();
    },
    Math.max(100, Math.floor(quietMs / 2)),
  );
  timer.unref();
  return {
    touch() {
      last = Date.now();
      due = true;
    },
    stop: () => clearInterval(timer),
  };
}
