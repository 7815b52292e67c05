import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { integerValue } from "../config/setting-parsers.js";
import type { SettingDefinitions, SettingValues } from "../config/settings-schema.js";
import type { Logger } from "../logging/logger.js";
import type { ConcurrencyLimiter } from "../orchestrator/concurrency-limiter.js";
import type { RuntimeOrchestrator } from "../orchestrator/types.js";
import { oneLine } from "../runner/message-text.js";
import type { AgentRunner } from "../runner/types.js";
import type { Store } from "../store/create-store.js";
import { canonicalThreadId, SUBAGENTS_DIR, subagentThreadId } from "../store/thread-layout.js";
import type { ServiceTools } from "../tools/create-tools.js";
import { createSendMessageTool } from "../tools/send-message-tool.js";
import { createSpawnTool } from "../tools/spawn-tool.js";
import { createSubagentTool } from "../tools/subagent-tool.js";
import type { SubagentInfo } from "../types.js";
import { createSubagentJournal } from "./subagent-journal.js";
import { type ChildResult, describeResult, resultsPrompt } from "./subagent-result.js";

export interface SubagentsOptions {
  store: Store;
  logger: Logger;
  /** The run slots the orchestrator uses (GUPPY_MAX_CONCURRENT): a spawned child takes one. */
  limiter: ConcurrencyLimiter;
  /** GUPPY_MAX_SUBAGENTS: children running at once per parent thread. */
  maxSubagents: number;
  /** GUPPY_TOOL_RESULT_MAX_CHARS: a longer answer reaches the parent spilled to a file. */
  toolResultMaxChars: number;
  /** `<home>/subagents.jsonl`, or a `guppy chat` session's own. */
  journalPath: string;
  /**
   * A child's runner: its own context in `childId`'s folder, the parent's workspace and sandbox
   * view, the parent's tools without spawn/subagent (`childTools`, passed as its services).
   */
  createRunner(childId: string, parentId: string, childTools: ServiceTools): AgentRunner;
}

/** The subagent service of a gateway (or a `guppy chat`): its children, their slots and results. */
export interface Subagents {
  /** Takes the orchestrator: results are prompts to it; a parent's abort stops its children. */
  attach(orchestrator: RuntimeOrchestrator): void;
  /** The service tools of a thread: send_message, spawn and subagent. */
  tools(threadId: string): ServiceTools;
  /** Starts a background child; its answer comes back to the parent as a prompt. */
  spawn(parentId: string, task: string, label?: string): string;
  /** Runs a child on the parent's run slot and resolves to its answer (the `subagent` tool). */
  run(parentId: string, task: string, signal?: AbortSignal): Promise<ChildResult>;
  /** A thread's children of this process, for its status. */
  list(threadId: string): SubagentInfo[] | undefined;
  /** Stops the children of a thread (its run was aborted). */
  abortChildren(parentId: string): number;
  /** After the orchestrator's start: results a killed process did not hand over go now. */
  recover(): void;
  /** Stops every child (shutdown): their results are handed over at the next start. */
  stop(): void;
}

interface Child {
  id: string;
  parent: string;
  label?: string;
  state: SubagentInfo["state"];
  runner?: AgentRunner;
  aborted: boolean;
  /** Background (`spawn`): its result becomes a prompt; else the `subagent` tool returns it. */
  background: boolean;
}

/** Children handed over after which the journal is rewritten without them. */
const COMPACT_AFTER = 256;

/** How often results held for a running parent are checked again. */
const RECHECK_MS = 1000;

/** Finished children a parent's status keeps showing. */
const KEEP_FINISHED = 8;

export function createSubagents(options: SubagentsOptions): Subagents {
  const { store, logger, limiter } = options;
  const journal = createSubagentJournal(options.journalPath, logger);
  /** Children by parent (canonical id), oldest first. */
  const byParent = new Map<string, Child[]>();
  /** Results waiting for their parent's run to end, by parent. */
  const pending = new Map<string, ChildResult[]>();
  let orchestrator: RuntimeOrchestrator | undefined;
  let stopping = false;
  /** Children handed over since the journal was last rewritten: it is kept short. */
  let handedSince = 0;
  const handed = (ids: string[]) => {
    journal.write({ t: "handed", ids });
    handedSince += ids.length;
    if (handedSince >= COMPACT_AFTER) {
      handedSince = 0;
      journal.compact();
    }
  };

  const childrenOf = (parent: string) => {
    let list = byParent.get(parent);
    if (!list) {
      list = [];
      byParent.set(parent, list);
    }
    return list;
  };

  /** The next free number: one past every `sub-<n>` folder the parent has, and this process's. */
  const nextNumber = (parent: string): number => {
    let max = 0;
    const dir = join(store.threadDir(parent), SUBAGENTS_DIR);
    if (existsSync(dir)) {
      for (const name of readdirSync(dir)) {
        const m = /^sub-(\d+)$/.exec(name);
        if (m) max = Math.max(max, Number(m[1]));
      }
    }
    for (const child of byParent.get(parent) ?? []) {
      const m = /~sub-(\d+)$/.exec(child.id);
      if (m) max = Math.max(max, Number(m[1]));
    }
    return max + 1;
  };

  const begin = (parentSpelling: string, label: string | undefined, background: boolean) => {
    if (stopping) throw new Error("guppy is shutting down: no subagent starts now");
    const parent = canonicalThreadId(parentSpelling);
    const list = childrenOf(parent);
    const running = list.filter((c) => c.state === "running").length;
    if (running >= options.maxSubagents) {
      throw new Error(
        `this thread has ${running} subagents running already, the most GUPPY_MAX_SUBAGENTS (${options.maxSubagents}) allows; wait for one to end`,
      );
    }
    const child: Child = {
      id: subagentThreadId(parent, nextNumber(parent)),
      parent,
      ...(label ? { label } : {}),
      state: "running",
      aborted: false,
      background,
    };
    list.push(child);
    while (list.length > KEEP_FINISHED && list[0]?.state !== "running") list.shift();
    journal.write({
      t: "spawned",
      id: child.id,
      parent,
      ...(label ? { label } : {}),
      at: new Date().toISOString(),
    });
    logger.info(`Subagent ${child.id} started${background ? "" : " (its parent waits)"}`);
    return child;
  };

  /** Runs the child's task to its end; `lent`: on its waiting parent's slot, else on its own. */
  const execute = async (child: Child, task: string, lent: boolean): Promise<ChildResult> => {
    let answer = "";
    let state: ChildResult["state"] = "done";
    let slot = false;
    try {
      if (!lent) {
        await limiter.acquire();
        slot = true;
      }
      if (child.aborted) state = "aborted";
      else {
        const runner = options.createRunner(child.id, child.parent, childTools(child));
        child.runner = runner;
        const result = await runner.prompt({
          text: childPrompt(child, task),
          messageId: `task-${Date.now()}`,
          userId: "guppy",
          userName: "parent agent",
          role: "owner",
        });
        answer = result.text;
        if (child.aborted || result.stopReason === "aborted") state = "aborted";
        else if (result.stopReason === "error") {
          state = "failed";
          answer = result.errorMessage ?? "the run failed";
        }
      }
    } catch (error) {
      state = "failed";
      answer = oneLine(String((error as Error)?.message ?? error));
      logger.error(`Subagent ${child.id} failed`, { error: answer });
    } finally {
      if (slot) limiter.release();
      child.runner = undefined;
      try {
        store.closeFiles(child.id);
      } catch {
        // Closing is bookkeeping: the next use opens them again.
      }
    }
    child.state = state;
    journal.write({ t: "ended", id: child.id, state, answer });
    logger.info(`Subagent ${child.id} ended: ${state}`);
    return { id: child.id, ...(child.label ? { label: child.label } : {}), state, answer };
  };

  /** Parents whose waiting results are checked again soon (see `handOver`). */
  const rechecks = new Set<string>();

  /** Sends the parent its waiting results in one prompt, unless a run of it is under way. */
  const handOver = (parent: string, force: boolean) => {
    const results = pending.get(parent);
    if (!results || results.length === 0 || !orchestrator || stopping) return;
    if (!force && orchestrator.status(parent).state === "running") {
      // Sent when that run ends (its run_end); checked again meanwhile as well, for a child that
      // ended between the run's end event and the actor's marking it ended.
      if (!rechecks.has(parent)) {
        rechecks.add(parent);
        setTimeout(() => {
          rechecks.delete(parent);
          handOver(parent, false);
        }, RECHECK_MS).unref();
      }
      return;
    }
    const texts = results.map((r) =>
      describeResult(r, options.toolResultMaxChars, () => store.artifactsDir(parent)),
    );
    const ids = results.map((r) => r.id);
    const sent = orchestrator.send(parent, {
      type: "prompt",
      text: resultsPrompt(texts),
      userId: "guppy",
      userName: "subagents",
      origin: { kind: "subagent", children: ids },
    });
    if (sent.status === "queued") {
      pending.delete(parent);
      handed(ids);
      logger.info(`Handed ${ids.length} subagent result(s) to ${parent}`, { ids });
    } else {
      // Kept: tried again when the parent's next run ends, or at the next start.
      logger.warn(`The subagent results for ${parent} wait: the prompt was ${sent.status}`);
    }
  };

  const childTools = (child: Child): ServiceTools => ({
    // No nesting: a child has no spawn or subagent. Its messages go to its parent's thread.
    send_message: () =>
      createSendMessageTool({
        threadId: child.parent,
        from: child.id,
        post: (target, text, from) =>
          orchestrator
            ? orchestrator.postMessage(target, text, from)
            : Promise.resolve({ status: "failed", reason: "guppy is not ready" }),
      }),
  });

  const service: Subagents = {
    attach(next) {
      orchestrator = next;
      next.subscribe((event) => {
        // A /stop of the thread stops its children too, whether or not a run of it was under way.
        if (event.type === "aborted") {
          service.abortChildren(event.threadId);
        } else if (event.type === "runner" && event.event.type === "run_end") {
          const key = keyOf(event.threadId);
          if (key && pending.has(key)) handOver(key, true);
        }
      });
    },

    tools(threadId) {
      const post = (...args: Parameters<RuntimeOrchestrator["postMessage"]>) =>
        orchestrator
          ? orchestrator.postMessage(...args)
          : Promise.resolve({ status: "failed" as const, reason: "guppy is not ready" });
      return {
        send_message: () => createSendMessageTool({ threadId, post }),
        spawn: () =>
          createSpawnTool({
            spawn: (task, label) => service.spawn(threadId, task, label),
            maxSubagents: options.maxSubagents,
          }),
        subagent: () =>
          createSubagentTool({ run: (task, signal) => service.run(threadId, task, signal) }),
      };
    },

    spawn(parentId, task, label) {
      const child = begin(parentId, label, true);
      void execute(child, task, false).then((result) => {
        const list = pending.get(child.parent) ?? [];
        list.push(result);
        pending.set(child.parent, list);
        handOver(child.parent, false);
      });
      return child.id;
    },

    async run(parentId, task, signal) {
      const child = begin(parentId, undefined, false);
      const stop = () => {
        child.aborted = true;
        child.runner?.abort();
      };
      signal?.addEventListener("abort", stop, { once: true });
      if (signal?.aborted) stop();
      try {
        const result = await execute(child, task, true);
        // The tool's result carries it: nothing to hand over.
        handed([child.id]);
        return result;
      } finally {
        signal?.removeEventListener("abort", stop);
      }
    },

    list(threadId) {
      const key = keyOf(threadId);
      const list = key ? byParent.get(key) : undefined;
      if (!list || list.length === 0) return undefined;
      return list.map((c) => ({
        id: c.id,
        ...(c.label ? { label: c.label } : {}),
        state: c.state,
      }));
    },

    abortChildren(parentId) {
      const key = keyOf(parentId);
      let n = 0;
      for (const child of (key && byParent.get(key)) || []) {
        if (child.state !== "running" || child.aborted) continue;
        child.aborted = true;
        child.runner?.abort();
        n++;
      }
      if (n > 0) logger.info(`Stopped ${n} subagent(s) of ${parentId} with its run`);
      return n;
    },

    recover() {
      const left = journal.unhanded();
      if (left.length === 0) return;
      for (const child of left) {
        const list = pending.get(child.parent) ?? [];
        list.push(
          child.ended
            ? {
                id: child.id,
                ...(child.label ? { label: child.label } : {}),
                ...child.ended,
              }
            : {
                id: child.id,
                ...(child.label ? { label: child.label } : {}),
                state: "aborted",
                answer: "",
                interrupted: true,
              },
        );
        pending.set(child.parent, list);
      }
      for (const parent of [...pending.keys()]) handOver(parent, false);
      journal.compact();
    },

    stop() {
      stopping = true;
      for (const list of byParent.values()) {
        for (const child of list) {
          if (child.state !== "running") continue;
          child.aborted = true;
          child.runner?.abort();
        }
      }
    },
  };
  return service;
}

/** The task as the child's prompt: what it is, and that its final answer is its report. */
function childPrompt(child: Child, task: string): string {
  return `You are a subagent of thread ${child.parent}${child.label ? ` ("${child.label}")` : ""}, working in its workspace. Do this task; your final answer goes back to the agent that started you, so make it the complete result.\n\nTask: ${task}`;
}

function keyOf(threadId: string): string | undefined {
  try {
    return canonicalThreadId(threadId);
  } catch {
    return undefined;
  }
}

/** How many subagents a thread may run at once. */
export const subagentSettings = {
  maxSubagents: {
    env: "GUPPY_MAX_SUBAGENTS",
    parse: integerValue(1, 64),
    default: 4,
    description: "Subagents (spawn, subagent tools) running at once per thread",
  },
} satisfies SettingDefinitions;

export type SubagentSettingValues = SettingValues<typeof subagentSettings>;
