import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import {
  type FauxProviderRegistration,
  fauxAssistantMessage,
  fauxText,
  fauxToolCall,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import { Type } from "typebox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAgentRunner } from "../../src/runner/create-agent-runner.js";
import { createStore, type Store } from "../../src/store/create-store.js";
import type { RunnerEvent } from "../../src/types.js";

const echoTool: AgentTool = {
  name: "echo",
  label: "echo",
  description: "echo text",
  parameters: Type.Object({ text: Type.String() }),
  async execute(_id, params) {
    const text = (params as { text: string }).text;
    if (text === "boom") throw new Error("echo exploded");
    return { content: [{ type: "text", text: `echo:${text}` }], details: {} };
  },
};

const slowTool: AgentTool = {
  name: "slow",
  label: "slow",
  description: "waits until aborted",
  parameters: Type.Object({}),
  execute: (_id, _params, signal) =>
    new Promise((_resolve, reject) => {
      signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
    }),
};

describe("agent runner (faux provider)", () => {
  let home: string;
  let store: Store;
  let faux: FauxProviderRegistration;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "guppy-runner-"));
    store = createStore({ home });
    faux = registerFauxProvider({
      models: [{ id: "faux-1", contextWindow: 100_000, maxTokens: 1000 }],
    });
  });
  afterEach(() => {
    faux.unregister();
    rmSync(home, { recursive: true, force: true });
  });

  const makeRunner = (
    overrides: {
      maxToolRounds?: number;
      threadId?: string;
      streamIdleTimeoutSeconds?: number;
      model?: FauxProviderRegistration;
    } = {},
  ) =>
    createAgentRunner({
      threadId: overrides.threadId ?? "cli:local:test",
      store,
      model: (overrides.model ?? faux).getModel(),
      apiKey: "faux",
      systemPrompt: "You are a test.",
      tools: [echoTool, slowTool],
      maxToolRounds: overrides.maxToolRounds ?? 25,
      maxRetries: 0,
      ...(overrides.streamIdleTimeoutSeconds !== undefined
        ? { streamIdleTimeoutSeconds: overrides.streamIdleTimeoutSeconds }
        : {}),
    });

  it("runs the tool loop to a final answer and reports typed events", async () => {
    faux.setResponses([
      fauxAssistantMessage(fauxToolCall("echo", { text: "hi" }), { stopReason: "toolUse" }),
      (context) => {
        const last = context.messages[context.messages.length - 1];
        const seen = last?.role === "toolResult" ? (last.content[0] as { text: string }).text : "?";
        return fauxAssistantMessage(`tool said ${seen}`);
      },
    ]);
    const runner = makeRunner();
    const events: RunnerEvent[] = [];
    runner.subscribe((e) => events.push(e));
    const result = await runner.prompt({ text: "say hi" });
    expect(result).toMatchObject({ text: "tool said echo:hi", stopReason: "stop" });
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("run_start");
    expect(types).toContain("thinking_start");
    expect(types).toContain("text_delta");
    expect(types.at(-1)).toBe("run_end");
    expect(events.find((e) => e.type === "tool_call")).toMatchObject({
      name: "echo",
      args: { text: "hi" },
    });
    expect(events.find((e) => e.type === "tool_result")).toMatchObject({
      isError: false,
      text: "echo:hi",
    });
    expect(events.filter((e) => e.type === "usage")).toHaveLength(2);
    expect(runner.running).toBe(false);
  });

  it("turns a thrown tool, bad arguments and an unknown tool into error results the model sees", async () => {
    const seenResults: string[] = [];
    faux.setResponses([
      fauxAssistantMessage(
        [
          fauxToolCall("echo", { text: "boom" }),
          fauxToolCall("echo", { wrong: 1 }),
          fauxToolCall("nonexistent", {}),
        ],
        { stopReason: "toolUse" },
      ),
      (context) => {
        for (const m of context.messages) {
          if (m.role === "toolResult")
            seenResults.push(`${m.isError}:${(m.content[0] as { text: string }).text}`);
        }
        return fauxAssistantMessage("recovered");
      },
    ]);
    const result = await makeRunner().prompt({ text: "break things" });
    expect(result.text).toBe("recovered");
    expect(seenResults).toHaveLength(3);
    expect(seenResults[0]).toMatch(/^true:.*echo exploded/);
    expect(seenResults[1]).toMatch(/^true:/);
    expect(seenResults[2]).toMatch(/^true:.*not found/);
  });

  it("stops after maxToolRounds with a clear message and without another model request", async () => {
    const loop = () =>
      fauxAssistantMessage(fauxToolCall("echo", { text: "again" }), { stopReason: "toolUse" });
    faux.setResponses([loop, loop, loop, loop, loop]);
    const runner = makeRunner({ maxToolRounds: 3 });
    const events: RunnerEvent[] = [];
    runner.subscribe((e) => events.push(e));
    const result = await runner.prompt({ text: "loop forever" });
    expect(result.stopReason).toBe("max_tool_rounds");
    expect(result.text).toMatch(/stopped after 3 tool rounds/);
    expect(faux.state.callCount).toBe(3);
    expect(events.some((e) => e.type === "error" && e.kind === "tool_rounds")).toBe(true);
    // The thread stays usable.
    faux.setResponses([fauxAssistantMessage("fine again")]);
    expect((await runner.prompt({ text: "hello?" })).text).toBe("fine again");
  });

  it("reports a provider error without throwing and stays usable", async () => {
    faux.setResponses([
      fauxAssistantMessage("", { stopReason: "error", errorMessage: "500 upstream exploded" }),
      fauxAssistantMessage("back"),
    ]);
    const runner = makeRunner();
    const failed = await runner.prompt({ text: "one" });
    expect(failed.stopReason).toBe("error");
    expect(failed.errorMessage).toContain("500 upstream exploded");
    expect(runner.running).toBe(false);
    expect((await runner.prompt({ text: "two" })).text).toBe("back");
  });

  it("stops a model answer that sends nothing for the idle timeout and ends the run with an error", async () => {
    let requestAborted = false;
    faux.setResponses([
      // Headers came, then nothing: the request only ends when it is aborted.
      (_context, options) =>
        new Promise((resolve) =>
          options?.signal?.addEventListener("abort", () => {
            requestAborted = true;
            resolve(fauxAssistantMessage("", { stopReason: "aborted" }));
          }),
        ),
      fauxAssistantMessage("answering again"),
    ]);
    const runner = makeRunner({ streamIdleTimeoutSeconds: 1 });
    const errors: string[] = [];
    runner.subscribe((e) => {
      if (e.type === "error") errors.push(e.message);
    });
    const started = performance.now();
    const stalled = await runner.prompt({ text: "hello?" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
    expect(requestAborted).toBe(true);
    expect(stalled.stopReason).toBe("error");
    expect(stalled.errorMessage).toContain("The model sent nothing for 1 s");
    expect(errors).toEqual([stalled.errorMessage]);
    expect(runner.running).toBe(false);
    expect((await runner.prompt({ text: "and now?" })).text).toBe("answering again");
  });

  it("lets a slow answer that keeps sending run past the idle timeout", async () => {
    // 4 characters a chunk, 5 chunks a second: ~2 s in all, never 1 s without an event.
    const slow = registerFauxProvider({
      models: [{ id: "faux-slow", contextWindow: 100_000, maxTokens: 1000 }],
      tokensPerSecond: 5,
      tokenSize: { min: 1, max: 1 },
    });
    try {
      const text = "abcd".repeat(10);
      slow.setResponses([fauxAssistantMessage(text)]);
      const result = await makeRunner({ streamIdleTimeoutSeconds: 1, model: slow }).prompt({
        text: "take your time",
      });
      expect(result).toMatchObject({ stopReason: "stop", text });
    } finally {
      slow.unregister();
    }
  });

  it("abort stops a running tool, keeps the partial answer and leaves the thread usable", async () => {
    faux.setResponses([
      fauxAssistantMessage([fauxText("Working on it. "), fauxToolCall("slow", {})], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("never reached"),
    ]);
    const runner = makeRunner();
    runner.subscribe((e) => {
      if (e.type === "tool_call") setTimeout(() => runner.abort(), 20);
    });
    const result = await runner.prompt({ text: "go slow" });
    expect(result.stopReason).toBe("aborted");
    expect(runner.running).toBe(false);
    const texts = runner.messages().map((m) => JSON.stringify(m));
    expect(texts.some((t) => t.includes("Working on it."))).toBe(true);
    faux.setResponses([fauxAssistantMessage("still here")]);
    expect((await runner.prompt({ text: "you ok?" })).text).toBe("still here");
  });

  it("persists the conversation so a new runner on the same thread continues it", async () => {
    faux.setResponses([fauxAssistantMessage("first answer")]);
    await makeRunner().prompt({ text: "remember 42" });
    let sawHistory = false;
    faux.setResponses([
      (context) => {
        sawHistory = JSON.stringify(context.messages).includes("remember 42");
        return fauxAssistantMessage("second answer");
      },
    ]);
    const again = makeRunner();
    expect(again.messages().length).toBe(2);
    await again.prompt({ text: "what did I say?" });
    expect(sawHistory).toBe(true);
    const log = store.readLog("cli:local:test");
    expect(log.map((e) => [e.isBot, e.text])).toEqual([
      [false, "remember 42"],
      [true, "first answer"],
      [false, "what did I say?"],
      [true, "second answer"],
    ]);
  });

  it("hands a prompt's events to its own listener first, for that run only", async () => {
    faux.setResponses([fauxAssistantMessage("one"), fauxAssistantMessage("two")]);
    const runner = makeRunner();
    const order: string[] = [];
    runner.subscribe((e) => order.push(`sub:${e.type}`));
    const own: RunnerEvent[] = [];
    await runner.prompt({
      text: "first",
      onEvent: (e) => {
        own.push(e);
        order.push(`own:${e.type}`);
      },
    });
    expect(own[0]?.type).toBe("run_start");
    expect(own.at(-1)).toMatchObject({ type: "run_end", text: "one" });
    expect(order.slice(0, 2)).toEqual(["own:run_start", "sub:run_start"]);
    const seen = own.length;
    await runner.prompt({ text: "second" });
    expect(own).toHaveLength(seen);
    expect(order.at(-1)).toBe("sub:run_end");
  });

  it("steer is refused when idle", () => {
    expect(makeRunner().steer("hey")).toBe(false);
  });
});
