import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  uniqueMarker,
  waitNoneWith,
  waitRunning,
} from "../../../core/test/helpers/process-state.js";
import { type InProcessGateway, startGateway } from "../helpers/gateway-fixture.js";
import { tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  readSse,
  type ServeProcess,
  startAsyncMockLlm,
  startServe,
  stopServes,
  threadMessages,
  waitFor,
} from "./serve-harness.js";

/**
 * The scripted model. A subagent's request is known by its first user message (the task prompt
 * guppy writes: "You are a subagent …"). Parent prompts: "msg-other THREAD TEXT" (send_message
 * to THREAD), "progress TEXT" (send_message to its own thread, then TEXT as the answer), "spawn
 * TASK", "wait TASK" (subagent), "spawn-then-sleep CHILDPID PARENTPID" (spawn a child that
 * sleeps, and sleep too). A child's task "gated-…" waits for the test to open its gate.
 */
const gates = new Map<string, Promise<void>>();
const openers = new Map<string, () => void>();
function gate(name: string): () => void {
  let open = () => {};
  gates.set(
    name,
    new Promise<void>((r) => {
      open = r;
    }),
  );
  openers.set(name, open);
  return open;
}

const userTexts = (request: ChatCompletionRequest) =>
  request.messages.filter((m) => m.role === "user").map((m) => contentText(m.content));

const call = (name: string, args: Record<string, unknown>) => ({
  name,
  arguments: JSON.stringify(args),
});

async function script(request: ChatCompletionRequest): Promise<FixtureResponse> {
  const users = userTexts(request);
  const lastUser = users.at(-1) ?? "";
  const last = request.messages.at(-1);
  const child = (users[0] ?? "").includes("You are a subagent");
  const task = /Task: (.*)$/s.exec(users[0] ?? "")?.[1] ?? "";
  if (child) {
    if (last?.role === "tool") return { content: `child woke: ${contentText(last.content)}` };
    const sleepy = /^sleepy (\d+)/.exec(task);
    if (sleepy) {
      return { toolCalls: [call("bash", { command: `exec sleep 60.${sleepy[1]}` })] };
    }
    const waiting = gates.get(task);
    if (waiting) await waiting;
    if (task.startsWith("long-")) return { content: `${"x".repeat(3000)} END-OF-${task}` };
    return { content: `child answer for ${task}` };
  }
  if (last?.role === "tool") {
    const progress = /^progress (.+)$/.exec(lastUser);
    if (progress?.[1]) return { content: progress[1] };
    if (lastUser.startsWith("wait "))
      return { content: `parent got: ${contentText(last.content)}` };
    if (lastUser.startsWith("spawn-two ")) {
      await gates.get("parent-after");
      return { content: "both started" };
    }
    return { content: "tool done" };
  }
  const other = /^msg-other (\S+) (.+)$/.exec(lastUser);
  if (other) return { toolCalls: [call("send_message", { to: other[1], text: other[2] })] };
  const progress = /^progress (.+)$/.exec(lastUser);
  if (progress) return { toolCalls: [call("send_message", { text: progress[1] })] };
  const spawn = /^spawn (\S+)$/.exec(lastUser);
  if (spawn) return { toolCalls: [call("spawn", { task: spawn[1], label: "finder" })] };
  const two = /^spawn-two (\S+) (\S+)$/.exec(lastUser);
  if (two) {
    return { toolCalls: [call("spawn", { task: two[1] }), call("spawn", { task: two[2] })] };
  }
  const wait = /^wait (\S+)$/.exec(lastUser);
  if (wait) return { toolCalls: [call("subagent", { task: wait[1] })] };
  const sleeping = /^spawn-then-sleep (\d+) (\d+)$/.exec(lastUser);
  if (sleeping) {
    return {
      toolCalls: [
        call("spawn", { task: `sleepy ${sleeping[1]}` }),
        call("bash", { command: `exec sleep 60.${sleeping[2]}` }),
      ],
    };
  }
  if (lastUser.includes("[Subagent result")) return { content: `parent saw: ${lastUser}` };
  return { content: `You said: ${lastUser}` };
}

/** What the tests call the API of: an in-process gateway, or a `guppy serve` process. */
type Api = Pick<ServeProcess, "api">;

describe("send_message, spawn and subagent through the gateway (aimock behind it)", {
  timeout: 90_000,
}, () => {
  let llm: AsyncMockLlm;
  const homes: Array<ReturnType<typeof tempHome>> = [];
  const running: ServeProcess[] = [];
  const gateways: InProcessGateway[] = [];
  const home = () => {
    const h = tempHome();
    homes.push(h);
    return h.home;
  };
  /** The gateway in this process. */
  const serve = async (dir: string, extra: Record<string, string> = {}) => {
    const g = await startGateway(dir, llm, { env: extra });
    gateways.push(g);
    return g;
  };
  /** `guppy serve` as a process (one killed with -9). */
  const serveProcess = async (dir: string) => {
    const s = await startServe(dir, llm.env());
    running.push(s);
    return s;
  };
  const post = async (s: Api, threadId: string, text: string) => {
    const r = await s.api(`/v1/threads/${threadId}/messages`, {
      method: "POST",
      body: JSON.stringify({ text }),
    });
    expect(r.status).toBe(202);
  };
  /** Waits for a message of guppy's in the thread for which `match` holds. */
  const botMessage = (s: Api, threadId: string, match: (text: string) => boolean) =>
    waitFor(
      async () =>
        (await threadMessages(s, threadId)).find((m) => m.is_bot && match(m.text)) ?? undefined,
      30_000,
      `a message of guppy's in ${threadId}`,
    );

  beforeAll(async () => {
    llm = await startAsyncMockLlm(script);
  });
  afterEach(async () => {
    for (const open of openers.values()) open();
    await Promise.all(gateways.splice(0).map((g) => g.stop()));
    await stopServes(running);
  });
  afterAll(async () => {
    await llm.stop();
    for (const h of homes) h.cleanup();
  });

  it("send_message to another thread shows there and reaches that thread's context", async () => {
    const s = await serve(home());
    await post(s, "http:api:sender", "msg-other http:api:receiver hi-from-the-sender");
    await botMessage(s, "http:api:sender", (t) => t === "tool done");
    const there = await threadMessages(s, "http:api:receiver");
    expect(there).toEqual([expect.objectContaining({ is_bot: true, text: "hi-from-the-sender" })]);

    await post(s, "http:api:receiver", "what did you tell me?");
    await botMessage(s, "http:api:receiver", (t) => t.startsWith("You said: what did you tell"));
    const asked = llm.requests.find((r) => userTexts(r).at(-1) === "what did you tell me?");
    const context = userTexts(asked as ChatCompletionRequest).join("\n");
    expect(context).toContain("hi-from-the-sender");
    expect(context).toContain("from thread http:api:sender");
  });

  it("send_message without a target posts at once, and an equal final answer is not posted twice", async () => {
    const s = await serve(home());
    // The thread exists before its event stream is opened.
    await post(s, "http:api:progress", "hello");
    await botMessage(s, "http:api:progress", (t) => t === "You said: hello");
    const events = await s.api("/v1/threads/http:api:progress/events");
    const read = readSse(events, (event) => event === "final");
    await post(s, "http:api:progress", "progress Half way there");
    const seen = await read;
    const message = seen.findIndex((e) => e.event === "message");
    const final = seen.findIndex((e) => e.event === "final");
    expect(message).toBeGreaterThanOrEqual(0);
    expect(message).toBeLessThan(final);
    expect(seen[message]?.data.text).toBe("Half way there");
    expect(seen[final]?.data).toMatchObject({ text: "Half way there", delivered: true });
    const log = await threadMessages(s, "http:api:progress");
    expect(log.filter((m) => m.is_bot && m.text === "Half way there")).toHaveLength(1);
  });

  it("spawn returns at once; the child's answer is the parent's next prompt; the child is in the parent's status, not in the thread list", async () => {
    const dir = home();
    const s = await serve(dir);
    const open = gate("gated-find");
    await post(s, "http:api:boss", "spawn gated-find");
    // The parent's run ends while its child is held at its gate: spawn did not wait.
    await botMessage(s, "http:api:boss", (t) => t === "tool done");
    const busy = (await (await s.api("/v1/threads/http:api:boss/status")).json()) as {
      subagents?: Array<{ id: string; label?: string; state: string }>;
    };
    expect(busy.subagents).toEqual([
      { id: "http:api:boss~sub-1", label: "finder", state: "running" },
    ]);
    open();
    const report = await botMessage(s, "http:api:boss", (t) => t.startsWith("parent saw:"));
    expect(report.text).toContain("[Subagent result]");
    expect(report.text).toContain("child answer for gated-find");
    expect(report.text).toContain("http:api:boss~sub-1");
    // Stored under the parent's folder, with its own history.
    const childLog = join(dir, "http", "api", "boss", "subagents", "sub-1", "log.jsonl");
    expect(readFileSync(childLog, "utf8")).toContain("child answer for gated-find");
    const done = (await (await s.api("/v1/threads/http:api:boss/status")).json()) as {
      subagents?: Array<{ state: string }>;
    };
    expect(done.subagents?.[0]?.state).toBe("done");
    const list = (await (await s.api("/v1/threads")).json()) as {
      threads: Array<{ id: string; subagents?: unknown[] }>;
    };
    expect(list.threads.map((t) => t.id)).toEqual(["http:api:boss"]);
    expect(list.threads[0]?.subagents).toHaveLength(1);
  });

  it("results that end while the parent runs come in one prompt, each once; a long one is spilled to a file", async () => {
    const dir = home();
    const s = await serve(dir, { GUPPY_TOOL_RESULT_MAX_CHARS: "1000" });
    const open = gate("parent-after");
    await post(s, "http:api:many", "spawn-two quick-a long-b");
    await waitFor(
      async () => {
        const status = (await (await s.api("/v1/threads/http:api:many/status")).json()) as {
          state: string;
          subagents?: Array<{ state: string }>;
        };
        const ended = status.subagents?.filter((c) => c.state === "done").length === 2;
        return ended && status.state === "running" ? true : undefined;
      },
      30_000,
      "both children done while the parent still runs",
    );
    open();
    const report = await botMessage(s, "http:api:many", (t) => t.startsWith("parent saw:"));
    expect(report.text).toContain("[Subagent results] 2 subagents");
    expect(report.text).toContain("child answer for quick-a");
    // The long answer: an excerpt with the saved file's path, the whole of it in that file.
    expect(report.text).not.toContain("x".repeat(2000));
    const path = /(\/\S+subagent-\S+\.txt)/.exec(report.text)?.[1] as string;
    expect(path).toContain(join(dir, "http", "api", "many", "artifacts"));
    expect(readFileSync(path, "utf8")).toBe(`${"x".repeat(3000)} END-OF-long-b`);
    // Handed over once: one prompt carried them, and nothing waits or runs after its answer.
    await waitFor(
      () => {
        const { state, queued } = s.runtime.orchestrator.status("http:api:many");
        return state !== "running" && state !== "waiting" && queued === 0 ? true : undefined;
      },
      10_000,
      "the thread at rest",
    );
    const handOvers = (await threadMessages(s, "http:api:many")).filter(
      (m) => !m.is_bot && m.text.includes("[Subagent"),
    );
    expect(handOvers).toHaveLength(1);
  });

  it("a child killed with the gateway (kill -9) is reported to its parent once, at the next start", async () => {
    const dir = home();
    const first = await serveProcess(dir);
    gate("gated-forever");
    await post(first, "http:api:orphan", "spawn gated-forever");
    await botMessage(first, "http:api:orphan", (t) => t === "tool done");
    first.child.kill("SIGKILL");
    await first.exited;
    const second = await serveProcess(dir);
    const report = await botMessage(second, "http:api:orphan", (t) => t.startsWith("parent saw:"));
    expect(report.text).toContain("http:api:orphan~sub-1");
    expect(report.text).toContain("interrupted when guppy stopped");
    second.child.kill("SIGTERM");
    await second.exited;
    const third = await serveProcess(dir);
    await post(third, "http:api:orphan", "anything new?");
    await botMessage(third, "http:api:orphan", (t) => t === "You said: anything new?");
    const handOvers = (await threadMessages(third, "http:api:orphan")).filter(
      (m) => !m.is_bot && m.text.includes("[Subagent"),
    );
    expect(handOvers).toHaveLength(1);
  });

  it("subagent waits for its child and completes with GUPPY_MAX_CONCURRENT=1", async () => {
    const s = await serve(home(), { GUPPY_MAX_CONCURRENT: "1" });
    await post(s, "http:api:waiter", "wait compute-y");
    const answer = await botMessage(s, "http:api:waiter", (t) => t.startsWith("parent got:"));
    expect(answer.text).toBe("parent got: child answer for compute-y");
  });

  it("aborting the parent's run kills its running children", async () => {
    const dir = home();
    const s = await serve(dir, { GUPPY_SANDBOX: "host" });
    // Each command runs in a PID namespace of its own: found by its unique `sleep` argument.
    const [child, parent] = [uniqueMarker(), uniqueMarker()];
    await post(s, "http:api:doomed", `spawn-then-sleep ${child} ${parent}`);
    await waitRunning([`sleep 60.${child}`, `sleep 60.${parent}`], 30_000);
    const r = await s.api("/v1/threads/http:api:doomed/abort", { method: "POST" });
    expect(r.status).toBe(200);
    for (const marker of [child, parent]) {
      expect(await waitNoneWith(`sleep 60.${marker}`, 15_000)).toBe(true);
    }
    await waitFor(
      async () => {
        const status = (await (await s.api("/v1/threads/http:api:doomed/status")).json()) as {
          subagents?: Array<{ state: string }>;
        };
        return status.subagents?.[0]?.state === "aborted" ? true : undefined;
      },
      15_000,
      "the child's state: aborted",
    );
  });
});
