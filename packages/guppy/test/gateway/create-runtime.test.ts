import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadConfig, resolveModel } from "@guppy/core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { guppySettings } from "../../src/channels/registry.js";
import {
  createRuntime,
  type Runtime,
  type RuntimeOptions,
} from "../../src/gateway/create-runtime.js";
import { until } from "../channels/helpers/until.js";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { tempHome } from "../helpers/run-cli.js";

describe("createRuntime, the composition root", () => {
  let llm: MockLlm;
  const cleanups: (() => void)[] = [];
  beforeAll(async () => {
    llm = await startMockLlm(() => ({ content: "hello back" }));
  });
  afterAll(() => llm.stop());
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  async function build(options: Omit<RuntimeOptions, "resolved" | "sandbox">) {
    const { home, cleanup } = tempHome();
    cleanups.push(cleanup);
    const env = { ...llm.env("openai-completions"), GUPPY_HOME: home };
    const config = loadConfig({ env, home, settings: guppySettings });
    const resolved = await resolveModel(config, { env });
    return createRuntime(config, { ...options, resolved, sandbox: { type: "host" } });
  }

  async function ask(runtime: Runtime, threadId: string): Promise<string> {
    let answer: string | undefined;
    runtime.orchestrator.subscribe((event) => {
      if (event.type === "runner" && event.event.type === "run_end") answer = event.event.text;
    });
    const result = runtime.orchestrator.send(threadId, {
      type: "prompt",
      text: "hi",
      thread: { threadId, notice: () => {} },
    });
    expect(result.status).toBe("queued");
    return until("the run's end", () => answer);
  }

  it("a gateway's runtime journals in the home's inbox and runs no event bus unless asked", async () => {
    const runtime = await build({ scope: { type: "gateway" }, events: false, heartbeat: false });
    expect(runtime.events).toBeUndefined();
    await runtime.start();
    expect(await ask(runtime, "test:runtime:1")).toBe("hello back");
    expect(existsSync(join(runtime.config.home, "inbox.jsonl"))).toBe(true);
    await runtime.stop(1000);
  });

  it("a gateway's runtime with events has a bus, stopped with it", async () => {
    const runtime = await build({ scope: { type: "gateway" }, events: true, heartbeat: true });
    await runtime.start();
    expect(runtime.events?.list()).toEqual([]);
    await runtime.stop(1000);
  });

  it("a chat's runtime runs its thread through its own inbox, removed at stop once answered", async () => {
    const threadId = "cli:default";
    const runtime = await build({
      scope: { type: "chat", threadId },
      events: false,
      heartbeat: false,
    });
    await runtime.start();
    expect(await ask(runtime, threadId)).toBe("hello back");
    const inbox = join(runtime.store.threadDir(threadId), "chat-inbox.jsonl");
    expect(existsSync(inbox)).toBe(true);
    expect(existsSync(join(runtime.config.home, "inbox.jsonl"))).toBe(false);
    await runtime.stop(0);
    expect(existsSync(inbox)).toBe(false);
  });
});
