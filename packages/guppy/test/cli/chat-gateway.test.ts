import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  uniqueMarker,
  waitNoneWith,
  waitRunning,
} from "../../../core/test/helpers/process-state.js";
import { freePort } from "../helpers/free-port.js";
import { cleanEnv, guppyBin, runCli, tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  type ServeProcess,
  startAsyncMockLlm,
  startServe,
  stopServes,
  threadMessages,
  waitFor,
} from "../serve/serve-harness.js";

/**
 * `guppy chat` and `guppy serve` on one home: a chat started while the gateway runs attaches to
 * it (its thread runs there, through the HTTP API); a chat that had its session open first keeps
 * it, and the gateway answers 409 for that thread meanwhile.
 */
describe("guppy chat beside guppy serve", () => {
  let llm: AsyncMockLlm;
  /** Requests whose text holds "hold NAME" wait until `release(NAME)`. */
  const gates = new Map<string, () => void>();
  const waiting = new Map<string, Promise<void>>();
  const gate = (name: string) => {
    let open = () => {};
    waiting.set(
      name,
      new Promise<void>((resolve) => {
        open = resolve;
      }),
    );
    gates.set(name, open);
  };
  const homes: Array<ReturnType<typeof tempHome>> = [];
  const running: ServeProcess[] = [];
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    llm = await startAsyncMockLlm(async (request: ChatCompletionRequest) => {
      const last = request.messages[request.messages.length - 1];
      if (last?.role === "tool") return { content: "tool finished" };
      const text = contentText(last?.content);
      const sleep = /run-sleep (\S+)/.exec(text);
      if (sleep?.[1]) {
        const command = `sleep 60.${sleep[1]} & wait`;
        return { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command }) }] };
      }
      const held = /hold (\S+)/.exec(text);
      if (held?.[1]) await waiting.get(held[1]);
      const users = request.messages.filter((m) => m.role === "user").length;
      return { content: `echo: ${text} (#${users})` } satisfies FixtureResponse;
    });
  });
  afterEach(async () => {
    for (const open of gates.values()) open();
    for (const child of children.splice(0)) child.kill("SIGKILL");
    await stopServes(running, "SIGTERM");
  });
  afterAll(async () => {
    await llm.stop();
    for (const h of homes) h.cleanup();
  });
  const newHome = () => {
    const h = tempHome();
    homes.push(h);
    return h.home;
  };
  const env = (home: string) => cleanEnv({ ...llm.env(), GUPPY_HOME: home });
  const serve = async (home: string, extra: Record<string, string> = {}) => {
    const s = await startServe(home, { ...llm.env(), ...extra });
    running.push(s);
    return s;
  };

  it("chat -m attaches to the running gateway: the answer printed, the thread in GET /v1/threads, no lock error", async () => {
    const home = newHome();
    const s = await serve(home);
    const file = join(home, "gateway.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ pid: s.child.pid, url: s.url });

    const r = await runCli(["chat", "-m", "hello gateway"], { env: env(home) });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("echo: hello gateway (#1)\n");
    // The gateway ran it: its thread, its lock; the chat took no chat.lock of its own.
    const list = (await (await s.api("/v1/threads")).json()) as {
      threads: Array<{ id: string; messages: number }>;
    };
    expect(list.threads).toEqual([
      expect.objectContaining({ id: "cli:local:default", messages: 2 }),
    ]);
    expect(existsSync(join(home, "cli", "local", "default", "chat.lock"))).toBe(false);

    // The same history for the next chat, interactive this time, with /status and /new.
    const repl = await runCli(["chat"], {
      env: env(home),
      input: "again\n/status\n/new\n/status\n/exit\n",
    });
    expect(repl.stderr).toBe("");
    expect(repl.code).toBe(0);
    expect(repl.stdout).toContain("echo: again (#2)");
    expect(repl.stdout).toMatch(/messages\s+4/);
    expect(repl.stdout).toContain("Started fresh (old context kept at");
    expect(repl.stdout).toMatch(/messages\s+0/);
    expect(repl.stdout).toMatch(/model\s+openai\/mock-gpt/);

    // A clean stop removes the file; a chat then runs the thread itself, history and all.
    s.child.kill("SIGTERM");
    expect(await s.exited).toBe(0);
    running.splice(0);
    expect(existsSync(file)).toBe(false);
    const alone = await runCli(["chat", "-m", "alone"], { env: env(home) });
    expect(alone.code).toBe(0);
    expect(alone.stdout).toBe("echo: alone (#1)\n");
  });

  it("a killed attached chat leaves its run going in the gateway: the answer stays in the thread", async () => {
    const home = newHome();
    const s = await serve(home);
    gate("k");
    const chat = spawn(process.execPath, [guppyBin, "chat", "-m", "hold k", "--session", "k"], {
      env: env(home),
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(chat);
    const closed = new Promise((resolve) => chat.on("close", resolve));
    await waitFor(
      () =>
        llm.requests.some((r) => contentText(r.messages.at(-1)?.content) === "hold k")
          ? true
          : undefined,
      10_000,
      "the prompt at the model",
    );
    chat.kill("SIGKILL");
    await closed;
    gates.get("k")?.();
    const messages = await waitFor(async () => {
      const m = await threadMessages(s, "cli:local:k");
      return m.length === 2 ? m : undefined;
    });
    expect(messages[1]).toMatchObject({ is_bot: true, text: "echo: hold k (#1)" });
  });

  it("the gateway answers 409 for the session of a chat that had it open first, and runs it once that chat exits", async () => {
    const home = newHome();
    const chat = spawn(process.execPath, [guppyBin, "chat", "--session", "mine"], {
      env: env(home),
      stdio: ["pipe", "pipe", "pipe"],
    });
    children.push(chat);
    let out = "";
    chat.stdout.on("data", (d) => {
      out += d;
    });
    const closed = new Promise<number | null>((resolve) => chat.on("close", resolve));
    chat.stdin.write("first\n");
    await waitFor(() => (out.includes("echo: first (#1)") ? true : undefined));

    const s = await serve(home);
    const sent = await s.api("/v1/threads/cli:local:mine/messages", {
      method: "POST",
      body: JSON.stringify({ text: "from the api" }),
    });
    expect(sent.status).toBe(409);
    expect(await sent.json()).toEqual({
      error: {
        message: `Not accepted: cli:local:mine is open in guppy chat (pid ${chat.pid}), which runs it until it exits.`,
        type: "held_elsewhere",
      },
    });
    // A second chat on the session is told as without a gateway; another session attaches.
    const second = await runCli(["chat", "-m", "me too", "--session", "mine"], { env: env(home) });
    expect(second.code).toBe(2);
    expect(second.stderr).toBe(
      `guppy: session "mine" is open in another guppy chat (pid ${chat.pid}); use --session NAME for another conversation\n`,
    );
    const other = await runCli(["chat", "-m", "elsewhere", "--session", "other"], {
      env: env(home),
    });
    expect(other.stdout).toBe("echo: elsewhere (#1)\n");

    // The chat still runs its thread; once it exits the gateway takes it, history and all.
    chat.stdin.write("second\n");
    await waitFor(() => (out.includes("echo: second (#2)") ? true : undefined));
    chat.stdin.end("/exit\n");
    expect(await closed).toBe(0);
    const after = await s.api("/v1/threads/cli:local:mine/messages", {
      method: "POST",
      body: JSON.stringify({ text: "now mine" }),
    });
    expect(after.status).toBe(202);
    const messages = await waitFor(async () => {
      const m = await threadMessages(s, "cli:local:mine");
      return m.length === 6 ? m : undefined;
    });
    expect(messages[5]?.text).toBe("echo: now mine (#3)");
  });

  it("Ctrl+C in an attached chat aborts the run in the gateway (its tool command killed) and exits 130", async () => {
    const home = newHome();
    // The host sandbox; the tool's sleep is found by its argument (see pidsWith).
    const s = await serve(home, { GUPPY_SANDBOX: "host" });
    const marker = uniqueMarker();
    const sleeper = `60.${marker}`;
    const chat = spawn(
      process.execPath,
      [guppyBin, "chat", "-m", `run-sleep ${marker}`, "--session", "int"],
      { env: env(home), stdio: ["ignore", "pipe", "pipe"] },
    );
    children.push(chat);
    let stderr = "";
    chat.stderr.on("data", (d) => {
      stderr += d;
    });
    const closed = new Promise<number | null>((resolve) => chat.on("close", resolve));
    await waitRunning([`sleep ${sleeper}`]);
    chat.kill("SIGINT");
    expect(await closed, stderr).toBe(130);
    expect(stderr).toBe("guppy: interrupted\n");
    expect(await waitNoneWith(sleeper)).toBe(true);
    const status = (await (await s.api("/v1/threads/cli:local:int/status")).json()) as {
      state: string;
    };
    expect(status.state).toBe("idle");
  });

  it("runs the thread itself when gateway.json names a process that is gone, or an address nobody answers at", async () => {
    const home = newHome();
    const file = join(home, "gateway.json");
    const port = await freePort();
    writeFileSync(join(home, "api-token"), "a-token-of-some-length\n", { mode: 0o600 });
    for (const pid of [4194305, process.pid]) {
      writeFileSync(file, JSON.stringify({ pid, url: `http://127.0.0.1:${port}`, started: "" }));
      const r = await runCli(["chat", "-m", `pid ${pid}`], { env: env(home) });
      expect(r.stderr).toBe("");
      expect(r.stdout).toMatch(/^echo: pid \d+ \(#\d\)\n$/);
    }
  });
});
