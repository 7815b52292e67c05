import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
import { createDeliveredWatch } from "../../src/messaging/delivered-answer.js";
import { createConcurrencyLimiter } from "../../src/orchestrator/concurrency-limiter.js";
import { createThreadRunner } from "../../src/runner/create-thread-runner.js";
import { loadConfig } from "../../src/settings.js";
import { createStore } from "../../src/store/create-store.js";
import {
  canonicalThreadId,
  subagentOf,
  subagentThreadId,
  threadDirOf,
} from "../../src/store/thread-layout.js";
import { createSubagents } from "../../src/subagents/create-subagents.js";
import { useFauxHome } from "../helpers/faux-home.js";

describe("a subagent's thread id and folder", () => {
  it("adds ~sub-<n> to the parent's thread part and lives under the parent's folder", () => {
    expect(subagentThreadId("http:api", 3)).toBe("http:api:default~sub-3");
    expect(subagentOf("http:api:t1~sub-2")).toEqual({ parentId: "http:api:t1", n: 2 });
    expect(threadDirOf("/h", "http:api:t1~sub-2")).toBe("/h/http/api/t1/subagents/sub-2");
    expect(canonicalThreadId("http:api:t1~sub-2")).toBe("http:api:t1~sub-2");
  });

  it("takes ~ as a child's mark only at the end of the thread part", () => {
    for (const id of ["http:api:a~sub-x", "http:api:a~b", "http:api~sub-1:t", "http:api:~sub-1"]) {
      expect(subagentOf(id), id).toBeUndefined();
    }
    expect(threadDirOf("/h", "http:api:a~b")).toBe("/h/http/api/a%7Eb");
  });
});

describe("send_message's final answer is not sent twice", () => {
  it("knows the last own-thread message a run sent", () => {
    const watch = createDeliveredWatch("http:api:t");
    const send = (id: string, args: unknown, isError = false) => {
      watch.see({ type: "tool_call", toolCallId: id, name: "send_message", args });
      watch.see({ type: "tool_result", toolCallId: id, name: "send_message", isError, text: "" });
    };
    expect(watch.delivered("done")).toBe(false);
    send("1", { text: "done" });
    expect(watch.delivered("done ")).toBe(true);
    send("2", { text: "elsewhere", to: "http:api:other" });
    expect(watch.delivered("elsewhere")).toBe(false);
    send("3", { text: "failed" }, true);
    expect(watch.delivered("failed")).toBe(false);
    send("4", { text: "to me by name", to: "http:api:t" });
    expect(watch.delivered("to me by name")).toBe(true);
    expect(watch.delivered("done")).toBe(false);
  });
});

describe("subagent runs (faux provider)", () => {
  const f = useFauxHome();

  const setup = (maxSubagents = 4) => {
    const config = loadConfig({ env: { GUPPY_TIMEZONE: "UTC" }, home: f.t.home });
    const store = createStore({ home: f.t.home });
    const resolved = {
      ref: "faux/faux-1",
      model: f.faux.getModel(),
      apiKey: "faux",
      maxTokens: 1000,
      custom: false,
    };
    const subagents = createSubagents({
      store,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
      limiter: createConcurrencyLimiter(1),
      maxSubagents,
      toolResultMaxChars: 10_000,
      journalPath: join(f.t.home, "subagents.jsonl"),
      createRunner: (childId, parentId, childTools) =>
        createThreadRunner({
          threadId: childId,
          workspaceThreadId: parentId,
          config,
          resolved,
          store,
          services: childTools,
        }),
    });
    const parent = (threadId: string) =>
      createThreadRunner({
        threadId,
        config,
        resolved,
        store,
        services: subagents.tools(threadId),
      });
    return { subagents, parent };
  };

  it("gives the owner send_message, spawn and subagent, a guest none, a child no spawn or subagent", async () => {
    const { subagents, parent } = setup();
    const runner = parent("cli:local:roles");
    const offered: string[][] = [];
    const record = (context: Context) => {
      offered.push((context.tools ?? []).map((tool) => tool.name));
      return fauxAssistantMessage("ok");
    };
    f.faux.setResponses([record, record, record]);
    await runner.prompt({ text: "hi", role: "owner" });
    await runner.prompt({ text: "hi", role: "guest" });
    await subagents.run("cli:local:roles", "say ok");
    expect(offered[0]).toEqual(expect.arrayContaining(["send_message", "spawn", "subagent"]));
    for (const names of [offered[1], offered[2]]) {
      expect(names).not.toContain("spawn");
      expect(names).not.toContain("subagent");
    }
    expect(offered[1]).not.toContain("send_message");
    expect(offered[2]).toContain("send_message");
  });

  it("runs a child in its parent's workspace, with its own context under the parent's folder", async () => {
    const { subagents } = setup();
    f.faux.setResponses([
      fauxAssistantMessage([fauxToolCall("write", { path: "found.txt", content: "42" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("wrote found.txt"),
    ]);
    const result = await subagents.run("cli:local:work", "find the answer");
    expect(result).toMatchObject({ id: "cli:local:work~sub-1", state: "done" });
    expect(result.answer).toBe("wrote found.txt");
    const parentDir = createStore({ home: f.t.home }).threadDir("cli:local:work");
    expect(readFileSync(join(parentDir, "scratch", "found.txt"), "utf8")).toBe("42");
    expect(existsSync(join(parentDir, "subagents", "sub-1", "context.jsonl"))).toBe(true);
    expect(subagents.list("cli:local:work")).toEqual([
      { id: "cli:local:work~sub-1", state: "done" },
    ]);
    // Numbered on: the next child is sub-2.
    f.faux.setResponses([fauxAssistantMessage("again")]);
    expect((await subagents.run("cli:local:work", "again")).id).toBe("cli:local:work~sub-2");
  });

  it("refuses a child past GUPPY_MAX_SUBAGENTS running at once, naming the setting", async () => {
    const { subagents } = setup(1);
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    f.faux.setResponses([
      async () => {
        await held;
        return fauxAssistantMessage("first");
      },
    ]);
    const first = subagents.run("cli:local:cap", "one");
    expect(() => subagents.spawn("cli:local:cap", "two")).toThrow(/GUPPY_MAX_SUBAGENTS \(1\)/);
    release();
    expect((await first).answer).toBe("first");
  });
});
