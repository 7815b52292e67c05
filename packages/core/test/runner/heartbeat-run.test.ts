import { mkdtempSync, readFileSync, rmSync } from "node:fs";
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
import { createAgentRunner } from "../../src/runner/create-agent-runner.js";
import { createStore, type Store } from "../../src/store/create-store.js";
import type { RunnerEvent } from "../../src/types.js";

const THREAD = "telegram:42:default";
const HEARTBEAT = { kind: "heartbeat" } as const;

const lookTool: AgentTool = {
  name: "look",
  label: "look",
  description: "looks at something",
  parameters: Type.Object({}),
  execute: async () => ({ content: [{ type: "text", text: "all fine" }], details: {} }),
};

/** Every user text of a request, in order. */
function userTexts(context: Context): string[] {
  return context.messages.flatMap((m) =>
    m.role === "user"
      ? [
          typeof m.content === "string"
            ? m.content
            : m.content.map((c) => ("text" in c ? c.text : "")).join(""),
        ]
      : [],
  );
}

describe("agent runner: heartbeat runs and time stamps (faux provider)", () => {
  let home: string;
  let store: Store;
  let faux: FauxProviderRegistration;
  /** What each request carried: its message count and user texts. */
  let seen: Array<{ messages: number; users: string[]; lastRole?: string }>;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "guppy-heartbeat-run-"));
    store = createStore({ home });
    faux = registerFauxProvider({ models: [{ id: "faux-1", contextWindow: 100_000 }] });
    seen = [];
  });
  afterEach(() => {
    faux.unregister();
    rmSync(home, { recursive: true, force: true });
  });

  /** Answers `answers` in order, recording each request. */
  const script = (...answers: Array<string | "tool">) =>
    faux.setResponses(
      answers.map((answer) => (context: Context) => {
        seen.push({
          messages: context.messages.length,
          users: userTexts(context),
          lastRole: context.messages.at(-1)?.role,
        });
        return answer === "tool"
          ? fauxAssistantMessage(fauxToolCall("look", {}), { stopReason: "toolUse" })
          : fauxAssistantMessage(answer);
      }),
    );

  const makeRunner = (timeStamp?: (now: Date) => string) =>
    createAgentRunner({
      threadId: THREAD,
      store,
      model: faux.getModel(),
      apiKey: "faux",
      systemPrompt: "test",
      tools: [lookTool],
      maxToolRounds: 5,
      maxRetries: 0,
      ...(timeStamp ? { timeStamp } : {}),
    });

  const files = () => {
    const read = (name: string) => {
      try {
        return readFileSync(join(store.threadDir(THREAD), name), "utf8");
      } catch {
        return "";
      }
    };
    return { context: read("context.jsonl"), log: read("log.jsonl") };
  };

  it("leaves nothing of a quiet heartbeat (HEARTBEAT_OK): messages, context.jsonl and log.jsonl unchanged, no text shown", async () => {
    script("hello back", "HEARTBEAT_OK", "tool", "HEARTBEAT_OK.", "HEARTBEAT_OK");
    const runner = makeRunner();
    await runner.prompt({ text: "hello" });
    const before = { messages: runner.messages().length, files: files() };
    expect(before.messages).toBe(2);

    const events: RunnerEvent[] = [];
    runner.subscribe((e) => events.push(e));
    // Three quiet beats, one of them after a tool round.
    for (let i = 0; i < 3; i++) {
      const result = await runner.prompt({ text: "check the list", origin: HEARTBEAT });
      expect(result).toMatchObject({ text: "", stopReason: "stop" });
    }

    expect(runner.messages().length).toBe(before.messages);
    expect(files()).toEqual(before.files);
    // Each beat's first request carried what the first did: the context did not grow.
    const beats = seen.slice(1).filter((r) => r.lastRole === "user");
    expect(beats.map((r) => r.messages)).toEqual([3, 3, 3]);
    // No chat saw anything but the quiet ends: no start, no text, no tool call.
    expect(events.filter((e) => !["usage", "context"].includes(e.type))).toEqual([
      { type: "run_end", text: "", stopReason: "stop", quiet: true },
      { type: "run_end", text: "", stopReason: "stop", quiet: true },
      { type: "run_end", text: "", stopReason: "stop", quiet: true },
    ]);
    expect(events.some((e) => e.type === "text_delta")).toBe(false);
  });

  it("keeps a heartbeat that says something: context, log and the streamed answer, like any run", async () => {
    script("Your train leaves in 20 minutes.");
    const runner = makeRunner();
    const events: RunnerEvent[] = [];
    runner.subscribe((e) => events.push(e));
    const result = await runner.prompt({
      text: "check the list",
      userId: "guppy",
      userName: "heartbeat",
      origin: HEARTBEAT,
    });
    expect(result).toMatchObject({ text: "Your train leaves in 20 minutes.", stopReason: "stop" });
    expect(runner.messages().length).toBe(2);
    expect(store.loadContext(THREAD).length).toBe(2);
    expect(store.readLog(THREAD).map((e) => [e.userName, e.text])).toEqual([
      ["heartbeat", "check the list"],
      ["guppy", "Your train leaves in 20 minutes."],
    ]);
    const types = events.map((e) => e.type).filter((t) => t !== "usage" && t !== "context");
    expect(types[0]).toBe("run_start");
    expect(types).toContain("text_delta");
    expect(types.at(-1)).toBe("run_end");
    const end = events.at(-1);
    expect(end).toMatchObject({ type: "run_end", text: "Your train leaves in 20 minutes." });
    expect(end && "quiet" in end).toBe(false);
  });

  it("keeps an ordinary run that answers HEARTBEAT_OK: only a heartbeat's is dropped", async () => {
    script("HEARTBEAT_OK");
    const runner = makeRunner();
    await runner.prompt({ text: "say HEARTBEAT_OK" });
    expect(runner.messages().length).toBe(2);
    expect(store.readLog(THREAD).length).toBe(2);
  });

  it("drops a heartbeat whose request failed: no error reaches the chat, nothing is kept", async () => {
    faux.setResponses([
      () => fauxAssistantMessage("", { stopReason: "error", errorMessage: "503 overloaded" }),
    ]);
    const runner = makeRunner();
    const events: RunnerEvent[] = [];
    runner.subscribe((e) => events.push(e));
    const result = await runner.prompt({ text: "check", origin: HEARTBEAT });
    expect(result.stopReason).toBe("error");
    expect(runner.messages().length).toBe(0);
    expect(files()).toEqual({ context: "", log: "" });
    expect(events.filter((e) => e.type !== "usage" && e.type !== "context")).toEqual([
      { type: "run_end", text: "", stopReason: "error", quiet: true },
    ]);
  });

  it("keeps a heartbeat a person steered, even when it ends HEARTBEAT_OK: their words and its answer stay, shown as they go", async () => {
    let entered = () => {};
    let release = () => {};
    const inTool = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const wait = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slowLook: AgentTool = {
      ...lookTool,
      execute: async () => {
        entered();
        await wait;
        return { content: [{ type: "text", text: "all fine" }], details: {} };
      },
    };
    script("tool", "HEARTBEAT_OK");
    const runner = createAgentRunner({
      threadId: THREAD,
      store,
      model: faux.getModel(),
      apiKey: "faux",
      systemPrompt: "test",
      tools: [slowLook],
      maxToolRounds: 5,
      maxRetries: 0,
    });
    const events: RunnerEvent[] = [];
    runner.subscribe((e) => events.push(e));
    const run = runner.prompt({ text: "check the list", userName: "heartbeat", origin: HEARTBEAT });
    await inTool;
    // Held so far: nothing shown.
    expect(events.filter((e) => e.type === "run_start")).toEqual([]);
    expect(runner.steer("what time is my train?")).toBe(true);
    // Released by the steer: what the beat did so far is shown at once.
    expect(events.map((e) => e.type)).toContain("run_start");
    release();
    const result = await run;
    expect(result.text).toBe("HEARTBEAT_OK");
    expect(seen.at(-1)?.users).toEqual(["check the list", "what time is my train?"]);
    const kept = store.loadContext(THREAD).map((m) => m.role);
    expect(kept).toEqual(["user", "assistant", "toolResult", "user", "assistant"]);
    expect(runner.messages().length).toBe(5);
    expect(store.readLog(THREAD).map((e) => e.userName)).toContain("heartbeat");
    const end = events.at(-1);
    expect(end).toMatchObject({ type: "run_end", text: "HEARTBEAT_OK" });
    expect(end && "quiet" in end).toBe(false);
  });

  it("stamps each user message with its local time in the context as stored; log.jsonl keeps the text as typed", async () => {
    script("one", "two");
    const stamps = ["[Fri 2026-11-27 09:14 Europe/Berlin]", "[Fri 2026-11-27 09:20 Europe/Berlin]"];
    let i = 0;
    const runner = makeRunner(() => stamps[i++] ?? "?");
    await runner.prompt({ text: "remind me in two hours" });
    await runner.prompt({ text: "and now?" });
    // The second request resends the first message with the same bytes (the prompt cache holds).
    expect(seen.map((r) => r.users)).toEqual([
      ["[Fri 2026-11-27 09:14 Europe/Berlin] remind me in two hours"],
      [
        "[Fri 2026-11-27 09:14 Europe/Berlin] remind me in two hours",
        "[Fri 2026-11-27 09:20 Europe/Berlin] and now?",
      ],
    ]);
    expect(store.loadContext(THREAD)[0]).toMatchObject({
      role: "user",
      content: [
        { type: "text", text: "[Fri 2026-11-27 09:14 Europe/Berlin] remind me in two hours" },
      ],
    });
    expect(store.readLog(THREAD).map((e) => e.text)).toEqual([
      "remind me in two hours",
      "one",
      "and now?",
      "two",
    ]);
  });
});
