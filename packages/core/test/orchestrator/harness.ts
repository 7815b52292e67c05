import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import {
  type Context,
  type FauxProviderRegistration,
  type FauxResponseFactory,
  fauxAssistantMessage,
  fauxToolCall,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import { Type } from "typebox";
import { afterEach, beforeEach } from "vitest";
import {
  createOrchestrator,
  type OrchestratorOptions,
} from "../../src/orchestrator/create-orchestrator.js";
import type { RuntimeOrchestrator } from "../../src/orchestrator/types.js";
import { createAgentRunner } from "../../src/runner/create-agent-runner.js";
import { createStore, type Store } from "../../src/store/create-store.js";
import type { CompactResult, RunnerEvent, ThreadHandle } from "../../src/types.js";

/**
 * Shared setup of the orchestrator's tests: a faux model, a store in a throwaway home, and
 * orchestrators made through `createOrchestrator` (the public seam) and shut down after each test.
 */

/** A tool that blocks until the test opens its gate (or the run is aborted). */
function createGate() {
  let open: () => void = () => {};
  let opened = new Promise<void>((r) => {
    open = r;
  });
  let entered: () => void = () => {};
  let enteredP = new Promise<void>((r) => {
    entered = r;
  });
  const tool: AgentTool = {
    name: "gate",
    label: "gate",
    description: "waits for the test",
    parameters: Type.Object({}),
    execute: (_id, _params, signal) =>
      new Promise((resolve, reject) => {
        entered();
        signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
        opened.then(() => resolve({ content: [{ type: "text", text: "gate open" }], details: {} }));
      }),
  };
  return {
    tool,
    open: () => open(),
    entered: () => enteredP,
    reset() {
      opened = new Promise<void>((r) => {
        open = r;
      });
      enteredP = new Promise<void>((r) => {
        entered = r;
      });
    },
  };
}

function lastUserText(context: Context): string {
  for (let i = context.messages.length - 1; i >= 0; i--) {
    const m = context.messages[i];
    if (m?.role === "user")
      return typeof m.content === "string"
        ? m.content
        : m.content.map((c) => ("text" in c ? c.text : "")).join("");
  }
  return "";
}

/** Echoes the last user message; "gate" asks for the gate tool first. */
export function script(context: Context) {
  const last = context.messages[context.messages.length - 1];
  if (last?.role === "toolResult")
    return fauxAssistantMessage(`after tool: ${lastUserText(context)}`);
  const text = lastUserText(context);
  if (text.includes("gate"))
    return fauxAssistantMessage(fauxToolCall("gate", {}), { stopReason: "toolUse" });
  return fauxAssistantMessage(`re: ${text}`);
}

export function recordingHandle(threadId: string) {
  const events: RunnerEvent[] = [];
  const notices: string[] = [];
  const handle: ThreadHandle = {
    threadId,
    onEvent: (e) => events.push(e),
    notice: (t) => {
      notices.push(t);
    },
  };
  return { handle, events, notices, finals: () => events.filter((e) => e.type === "run_end") };
}

/** What `/compact` said: its report, or "duplicate". */
export const reportOf = async (result: Promise<CompactResult>): Promise<string> => {
  const done = await result;
  return done.status === "compacted" ? done.report : done.status;
};

export const until = async (predicate: () => boolean, ms = 5000) => {
  const t0 = Date.now();
  while (!predicate()) {
    if (Date.now() - t0 > ms) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 5));
  }
};

/**
 * A summary that comes after 5 s, unless its request is aborted first — or was made aborted, as a
 * real provider's request would fail at once (a cold compaction may ask only after the abort).
 */
export const stoppableSummary: FauxResponseFactory = (_context, options) =>
  new Promise((resolve) => {
    const aborted = () => resolve(fauxAssistantMessage("", { stopReason: "aborted" }));
    if (options?.signal?.aborted) return aborted();
    const timer = setTimeout(() => resolve(fauxAssistantMessage("too late")), 5000);
    options?.signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      aborted();
    });
  });

/** One test's world; its fields are set afresh before each test. */
export interface OrchestratorHarness {
  home: string;
  store: Store;
  faux: FauxProviderRegistration;
  gate: ReturnType<typeof createGate>;
  /** The last user text of every request the faux model answered, in order. */
  requests: string[];
  /** The faux model's agent runner for a thread, as `make` creates it unless told otherwise. */
  runnerFor(
    threadId: string,
    options?: Partial<Parameters<typeof createAgentRunner>[0]>,
  ): ReturnType<typeof createAgentRunner>;
  /** An orchestrator on the test's store and faux model, shut down after the test. */
  make(overrides?: Partial<OrchestratorOptions>): RuntimeOrchestrator;
  /** An orchestrator (as `make` makes it), started. */
  started(overrides?: Partial<OrchestratorOptions>): Promise<RuntimeOrchestrator>;
  /**
   * An orchestrator (as `make` makes it) started with a channel that hands out `handle` for every
   * thread: what it replays at the start reports to that handle.
   */
  startLinked(
    handle: ThreadHandle,
    overrides?: Partial<OrchestratorOptions>,
  ): Promise<RuntimeOrchestrator>;
  /**
   * A thread with three answered prompts, on an orchestrator whose runners compact all but the
   * last 10 tokens (so /compact has something to summarise).
   */
  threadWithHistory(
    name: string,
    overrides?: Partial<OrchestratorOptions>,
  ): Promise<{ o: RuntimeOrchestrator; t: ReturnType<typeof recordingHandle>; id: string }>;
}

/**
 * Registers the orchestrator tests' `beforeEach`/`afterEach` in the calling `describe` (or file)
 * and returns the harness they fill in.
 */
export function useOrchestratorHarness(): OrchestratorHarness {
  let orchestrators: RuntimeOrchestrator[] = [];
  const h: OrchestratorHarness = {
    home: "",
    store: undefined as unknown as Store,
    faux: undefined as unknown as FauxProviderRegistration,
    gate: createGate(),
    requests: [],
    runnerFor: (threadId, options = {}) =>
      createAgentRunner({
        threadId,
        store: h.store,
        model: h.faux.getModel(),
        apiKey: "faux",
        systemPrompt: "test",
        tools: [h.gate.tool],
        maxToolRounds: 5,
        maxRetries: 0,
        ...options,
      }),
    make: (overrides = {}) => {
      const o = createOrchestrator({
        store: h.store,
        maxConcurrent: 8,
        queueDepth: 5,
        idleTimeoutMs: 60_000,
        createRunner: (threadId) => h.runnerFor(threadId),
        ...overrides,
      });
      orchestrators.push(o);
      return o;
    },
    started: async (overrides = {}) => {
      const o = h.make(overrides);
      await o.start();
      return o;
    },
    startLinked: async (handle, overrides = {}) => {
      const o = h.make(overrides);
      o.registerChannel({ adapterId: "test", threadHandle: () => handle });
      await o.start();
      return o;
    },
    threadWithHistory: async (name, overrides = {}) => {
      const o = await h.started({
        createRunner: (threadId) =>
          h.runnerFor(threadId, { tools: [], compactKeepRecentTokens: 10 }),
        ...overrides,
      });
      const t = recordingHandle(`test:c:${name}`);
      for (const text of ["one", "two", "three"]) {
        o.send(t.handle.threadId, { type: "prompt", text, thread: t.handle });
      }
      await until(() => t.finals().length === 3);
      return { o, t, id: t.handle.threadId };
    },
  };

  beforeEach(() => {
    h.home = mkdtempSync(join(tmpdir(), "guppy-orch-"));
    h.store = createStore({ home: h.home });
    h.faux = registerFauxProvider({ models: [{ id: "faux-1", contextWindow: 100_000 }] });
    h.gate = createGate();
    orchestrators = [];
    h.requests = [];
    const requests = h.requests;
    h.faux.setResponses(
      Array.from({ length: 400 }, () => (context: Context) => {
        requests.push(lastUserText(context));
        return script(context);
      }),
    );
  });
  afterEach(async () => {
    h.gate.open();
    for (const o of orchestrators) await o.shutdown(0);
    h.faux.unregister();
    rmSync(h.home, { recursive: true, force: true });
  });

  return h;
}
