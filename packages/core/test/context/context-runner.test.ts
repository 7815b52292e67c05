import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import {
  type Context,
  type FauxProviderRegistration,
  fauxAssistantMessage,
  fauxToolCall,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import { Type } from "typebox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { computeBudget } from "../../src/context/compaction.js";
import { repairPairing } from "../../src/context/llm-messages.js";
import { SUMMARY_SYSTEM_PROMPT } from "../../src/context/summarise.js";
import { createTokenCounter, loadEncoder } from "../../src/context/token-counter.js";
import type { Logger } from "../../src/logging/logger.js";
import { createAgentRunner } from "../../src/runner/create-agent-runner.js";
import { createSandbox } from "../../src/sandbox/sandbox.js";
import { createStore, type Store } from "../../src/store/create-store.js";
import { createReadTool } from "../../src/tools/read-tool.js";
import type { RunnerEvent } from "../../src/types.js";

const WINDOW = 6_000;
const REPLY = 500;

const words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];
/** `chars` of varied text, numbered lines (so head and tail differ). */
function output(chars: number, seed: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < chars; i++) {
    const line = `${seed}:${i} ${words[(i * 7 + seed) % 8]} ${words[(i * 3) % 8]} ${i * 31}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n").slice(0, chars);
}

const dumpTool: AgentTool = {
  name: "dump",
  label: "dump",
  description: "prints a lot",
  parameters: Type.Object({ chars: Type.Integer(), seed: Type.Integer() }),
  async execute(_id, params) {
    const p = params as { chars: number; seed: number };
    return { content: [{ type: "text", text: output(p.chars, p.seed) }], details: {} };
  },
};

interface Seen {
  context: Context;
  summary: boolean;
}

describe("context engine in the runner (faux provider)", () => {
  let home: string;
  let store: Store;
  let faux: FauxProviderRegistration;
  let seen: Seen[];
  let warnings: string[];
  /** Decides each non-summary answer; `n` counts the main requests. */
  let main: (ctx: Context, n: number) => ReturnType<typeof fauxAssistantMessage>;
  let summaryAnswer: (
    ctx: Context,
    n: number,
    signal?: AbortSignal,
  ) => ReturnType<typeof fauxAssistantMessage> | Promise<ReturnType<typeof fauxAssistantMessage>>;

  const logger: Logger = {
    debug() {},
    info() {},
    warn(message: string) {
      warnings.push(message);
    },
    error(message: string) {
      warnings.push(message);
    },
  } as unknown as Logger;

  beforeEach(async () => {
    await loadEncoder();
    home = mkdtempSync(join(tmpdir(), "guppy-ctx-"));
    store = createStore({ home });
    seen = [];
    warnings = [];
    faux = registerFauxProvider({
      models: [{ id: "faux-ctx", contextWindow: WINDOW, maxTokens: REPLY }],
    });
    let mainCount = 0;
    let summaryCount = 0;
    summaryAnswer = (_ctx, n) =>
      fauxAssistantMessage(
        `## Goal\n- run the dump session\n## Progress\n- SUMMARY-${n} written\n## Open items\n- none`,
      );
    const step = (ctx: Context, options?: { signal?: AbortSignal }) => {
      const summary = ctx.systemPrompt === SUMMARY_SYSTEM_PROMPT;
      seen.push({ context: JSON.parse(JSON.stringify(ctx)) as Context, summary });
      return summary ? summaryAnswer(ctx, ++summaryCount, options?.signal) : main(ctx, ++mainCount);
    };
    faux.setResponses(Array.from({ length: 400 }, () => step));
  });
  afterEach(() => {
    faux.unregister();
    rmSync(home, { recursive: true, force: true });
  });

  const makeRunner = (
    toolResultMaxChars = 3_000,
    streamIdleTimeoutSeconds = 0,
    systemPrompt = "You are a test.",
  ) =>
    createAgentRunner({
      streamIdleTimeoutSeconds,
      threadId: "cli:local:ctx",
      store,
      model: faux.getModel(),
      apiKey: "faux",
      systemPrompt,
      tools: [dumpTool],
      maxToolRounds: 100,
      maxRetries: 0,
      maxTokens: REPLY,
      toolResultMaxChars,
      logger,
    });

  /** `rounds` tool calls of `chars` each, then a final answer. */
  const toolSession = (rounds: number, chars: (i: number) => number) => {
    main = (_ctx, n) =>
      n <= rounds
        ? fauxAssistantMessage(fauxToolCall("dump", { chars: chars(n), seed: n }), {
            stopReason: "toolUse",
          })
        : fauxAssistantMessage(`finished after ${n - 1} rounds`);
  };

  const budget = computeBudget({
    contextWindow: WINDOW,
    maxTokens: REPLY,
    reserveTokens: 16_384,
    keepRecentTokens: 20_000,
  });
  const counter = createTokenCounter();
  const requestTokens = (ctx: Context) =>
    counter.system(ctx.systemPrompt ?? "") +
    counter.tools(ctx.tools ?? []) +
    ctx.messages.reduce((n, m) => n + counter.message(m), 0);
  const firstText = (ctx: Context) => {
    const m = ctx.messages[0];
    if (m?.role !== "user") return "";
    return typeof m.content === "string"
      ? m.content
      : m.content.map((b) => (b.type === "text" ? b.text : "")).join("");
  };

  it("compacts a long tool session with LLM summaries, within budget, pairs intact, updating the earlier summary", async () => {
    toolSession(30, (i) => 5_000 + ((i * 7919) % 45_000));
    const runner = makeRunner();
    const events: RunnerEvent[] = [];
    runner.subscribe((e) => events.push(e));
    const result = await runner.prompt({ text: "start the dump session" });
    expect(result.stopReason).toBe("stop");
    expect(result.text).toBe("finished after 30 rounds");

    const mains = seen.filter((s) => !s.summary);
    const summaries = seen.filter((s) => s.summary);
    expect(mains).toHaveLength(31);
    expect(summaries.length).toBeGreaterThanOrEqual(2);
    for (const s of mains) {
      expect(requestTokens(s.context)).toBeLessThanOrEqual(budget.input);
      expect(repairPairing(s.context.messages).fixes).toEqual([]);
    }
    for (const s of summaries) expect(requestTokens(s.context)).toBeLessThanOrEqual(budget.input);
    // The second summary request carries the first summary to update.
    expect(firstText(summaries[1]!.context)).toContain("<previous-summary>");
    expect(firstText(summaries[1]!.context)).toContain("SUMMARY-1");
    // Requests after the last compaction start with the latest summary.
    expect(firstText(mains.at(-1)!.context)).toContain(`SUMMARY-${summaries.length}`);

    const stats = runner.stats().context;
    expect(stats.compactions).toBe(summaries.length);
    expect(stats.fallbacks).toBe(0);
    expect(stats.window).toBe(WINDOW);
    expect(stats.tokens).toBeGreaterThan(0);
    expect(stats.tokens).toBeLessThanOrEqual(budget.input);
    expect(events.filter((e) => e.type === "compaction")).toHaveLength(summaries.length);
    expect(events.filter((e) => e.type === "context").length).toBe(31);

    // context.jsonl was rewritten with the summary first; log.jsonl keeps the whole exchange.
    const stored = store.loadContext("cli:local:ctx");
    expect((stored[0] as { role: string }).role).toBe("compaction");
    expect(stored.length).toBe(runner.messages().length);
    expect(store.readLog("cli:local:ctx").map((e) => e.text)).toEqual([
      "start the dump session",
      "finished after 30 rounds",
    ]);
    // Every long result was spilled to a file under the thread's artifacts/.
    const spilled = readFileSync(join(store.threadDir("cli:local:ctx"), "context.jsonl"), "utf8");
    expect(spilled).toMatch(/artifacts\/dump-/);
  });

  it("keeps each request an append-only extension of the previous one between compactions", async () => {
    toolSession(20, () => 6_000);
    const runner = makeRunner();
    await runner.prompt({ text: "go" });
    const mains = seen.filter((s) => !s.summary).map((s) => s.context);
    let extended = 0;
    for (let i = 1; i < mains.length; i++) {
      const prev = mains[i - 1]!;
      const cur = mains[i]!;
      expect(cur.systemPrompt).toBe(prev.systemPrompt);
      expect(JSON.stringify(cur.tools)).toBe(JSON.stringify(prev.tools));
      const compactedBetween = firstText(cur) !== firstText(prev);
      if (compactedBetween) continue;
      expect(JSON.stringify(cur.messages.slice(0, prev.messages.length))).toBe(
        JSON.stringify(prev.messages),
      );
      extended++;
    }
    expect(extended).toBeGreaterThan(10);
  });

  it.each([
    ["fails", "summary service down"],
    ["returns nothing", "the model returned an empty summary"],
  ])(
    "falls back to dropping whole oldest turns when the summary request %s, and says so",
    async (how, said) => {
      toolSession(15, () => 8_000);
      summaryAnswer = () =>
        how === "fails"
          ? fauxAssistantMessage("", { stopReason: "error", errorMessage: said })
          : fauxAssistantMessage("   ");
      const runner = makeRunner();
      const result = await runner.prompt({ text: "go" });
      expect(result.stopReason).toBe("stop");
      const stats = runner.stats().context;
      expect(stats.fallbacks).toBeGreaterThanOrEqual(1);
      expect(stats.lastCompaction?.method).toBe("dropped");
      expect(warnings.join("\n")).toContain(`summary failed (${said}); dropped`);
      for (const s of seen.filter((x) => !x.summary)) {
        expect(requestTokens(s.context)).toBeLessThanOrEqual(budget.input);
        expect(repairPairing(s.context.messages).fixes).toEqual([]);
      }
    },
  );

  it("recovers from a provider's 'context too long' by compacting and retrying once", async () => {
    let failed = false;
    main = (_ctx, n) => {
      if (n === 6 && !failed) {
        failed = true;
        return fauxAssistantMessage("", {
          stopReason: "error",
          errorMessage: "prompt is too long: 9100 tokens > 6000 maximum",
        });
      }
      return n <= 8
        ? fauxAssistantMessage(fauxToolCall("dump", { chars: 1_500, seed: n }), {
            stopReason: "toolUse",
          })
        : fauxAssistantMessage("done");
    };
    const runner = makeRunner();
    const events: RunnerEvent[] = [];
    runner.subscribe((e) => events.push(e));
    const result = await runner.prompt({ text: "go" });
    expect(result.stopReason).toBe("stop");
    expect(result.text).toBe("done");
    const order = seen.map((s) => (s.summary ? "S" : "M")).join("");
    expect(order).toMatch(/^M{6}SM+$/);
    expect(events).toContainEqual(
      expect.objectContaining({ type: "compaction", reason: "overflow", method: "summary" }),
    );
    expect(events.some((e) => e.type === "error")).toBe(false);
    // The error answer is not kept in the context.
    expect(JSON.stringify(runner.messages())).not.toContain("prompt is too long");
  });

  it("/compact forces a compaction and the next request starts with the summary", async () => {
    main = (_ctx, n) => fauxAssistantMessage(`answer ${n}`);
    const runner = makeRunner();
    for (let i = 0; i < 4; i++) await runner.prompt({ text: `question ${i} ${"x ".repeat(300)}` });
    const outcome = await runner.compact();
    expect(outcome.compacted).toBe(true);
    expect(runner.stats().context.compactions).toBe(1);
    expect(runner.stats().context.lastCompaction?.reason).toBe("manual");
    await runner.prompt({ text: "after" });
    const last = seen.filter((s) => !s.summary).at(-1)!.context;
    expect(firstText(last)).toContain("SUMMARY-1");
    expect(firstText(last)).not.toContain("question 0");
    // A new runner on the same thread loads the compacted context.
    const again = makeRunner();
    expect(again.stats().context.compactions).toBe(1);
    // Usage of the removed replies and of the summary request survives the restart.
    expect(runner.stats().totals.requests).toBe(6); // 5 answers + 1 summary
    expect(again.stats().totals).toEqual(runner.stats().totals);
  });

  it("leaves room for later turns after a compaction, even with a long system prompt", async () => {
    // A system prompt of about half the threshold, as guppy's is with a small local model.
    const system = `You are a test. ${"rule ".repeat(1_500)}`;
    const fixed = counter.system(system) + counter.tools([dumpTool]);
    expect(fixed).toBeGreaterThan(budget.compactAt * 0.4);
    main = (_ctx, n) => fauxAssistantMessage(`answer ${n}`);
    const runner = makeRunner(3_000, 0, system);
    for (let i = 0; i < 12; i++) await runner.prompt({ text: `question ${i} ${"x ".repeat(250)}` });
    const summaries = seen.filter((s) => s.summary).length;
    // Each turn adds ~270 tokens; kept at half the threshold, every turn was compacted again.
    expect(summaries).toBeGreaterThan(0);
    expect(summaries).toBeLessThanOrEqual(4);
    for (const s of seen.filter((x) => !x.summary)) {
      expect(requestTokens(s.context)).toBeLessThanOrEqual(budget.input);
    }
  });

  it("Ctrl+C during /compact stops it without dropping anything", async () => {
    main = (_ctx, n) => fauxAssistantMessage(`answer ${n}`);
    const runner = makeRunner();
    for (let i = 0; i < 3; i++) await runner.prompt({ text: `question ${i} ${"y ".repeat(300)}` });
    const before = runner.messages().length;
    summaryAnswer = (_ctx, _n, signal) =>
      new Promise((resolve) => {
        signal?.addEventListener("abort", () =>
          resolve(fauxAssistantMessage("", { stopReason: "aborted", errorMessage: "aborted" })),
        );
      });
    const pending = runner.compact();
    await new Promise((r) => setTimeout(r, 20));
    expect(runner.running).toBe(true);
    runner.abort();
    const outcome = await pending;
    expect(outcome.compacted).toBe(false);
    expect(runner.messages()).toHaveLength(before);
    expect(runner.stats().context.compactions).toBe(0);
  });

  it("/compact whose summary goes quiet for the idle timeout drops the oldest turns instead, and says why", async () => {
    main = (_ctx, n) => fauxAssistantMessage(`answer ${n}`);
    const runner = makeRunner(3_000, 1);
    for (let i = 0; i < 3; i++) await runner.prompt({ text: `question ${i} ${"z ".repeat(300)}` });
    let summaryAborted = false;
    summaryAnswer = (_ctx, _n, signal) =>
      new Promise((resolve) => {
        signal?.addEventListener("abort", () => {
          summaryAborted = true;
          resolve(fauxAssistantMessage("", { stopReason: "aborted", errorMessage: "aborted" }));
        });
      });
    const outcome = await runner.compact();
    expect(summaryAborted).toBe(true);
    expect(outcome.compacted).toBe(true);
    expect(runner.stats().context.lastCompaction?.method).toBe("dropped");
    expect(warnings.join("\n")).toContain(
      "summary failed (The model sent nothing for 1 s, so its request was stopped",
    );
    expect(runner.running).toBe(false);
  });

  it("cuts a turn too big for the window in what is sent, never in what is stored", async () => {
    toolSession(1, () => 40_000);
    const runner = makeRunner(100_000); // no spill: the one result alone is ~3× the window
    const result = await runner.prompt({ text: "go" });
    expect(result.stopReason).toBe("stop");
    const last = seen.filter((s) => !s.summary).at(-1)!.context;
    expect(requestTokens(last)).toBeLessThanOrEqual(budget.input);
    expect(JSON.stringify(last.messages)).toContain("chars omitted");
    expect(warnings.join("\n")).toContain("long texts were cut");
    const stored = JSON.stringify(store.loadContext("cli:local:ctx"));
    expect(stored).toContain(JSON.stringify(output(40_000, 1)).slice(1, -1));
  });

  it("spills any tool's long result under artifacts/, readable with the read tool", async () => {
    toolSession(1, () => 25_000);
    const runner = makeRunner();
    await runner.prompt({ text: "go" });
    const toolResult = seen.at(-1)!.context.messages.find((m) => m.role === "toolResult");
    const text =
      toolResult?.role === "toolResult" ? (toolResult.content[0] as { text: string }).text : "";
    expect(text.length).toBeLessThanOrEqual(3_000);
    const path = /saved at (\S+);/.exec(text)?.[1];
    expect(path).toBeDefined();
    expect(path!.startsWith(join(store.threadDir("cli:local:ctx"), "artifacts"))).toBe(true);
    expect(existsSync(path!)).toBe(true);
    expect(readFileSync(path!, "utf8")).toBe(output(25_000, 1));
    const read = createReadTool({
      workspaceDir: store.workspaceDir("cli:local:ctx"),
      artifactsDir: () => store.artifactsDir("cli:local:ctx"),
      sandbox: createSandbox({ type: "host" }),
      toolResultMaxChars: 10_000,
      bashTimeoutSeconds: 5,
    });
    const page = await read.execute("r1", { path: path!, offset: 500, limit: 2 });
    expect((page.content[0] as { text: string }).text).toContain(
      output(25_000, 1).split("\n")[499],
    );
  });
});
