import { chmodSync, lstatSync, readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";
import { startServe } from "../serve/serve-harness.js";

/** Every path under `dir` (not `dir`) with its permission bits; symbolic links left out. */
function modes(dir: string): Map<string, { mode: number; directory: boolean }> {
  const out = new Map<string, { mode: number; directory: boolean }>();
  const visit = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      const stat = lstatSync(full);
      if (stat.isSymbolicLink()) continue;
      out.set(relative(dir, full), { mode: stat.mode & 0o777, directory: stat.isDirectory() });
      if (stat.isDirectory()) visit(full);
    }
  };
  visit(dir);
  return out;
}

/** A thread's workspace and what is in it: the tools' commands make those under the user's umask. */
const inWorkspace = (path: string) => path.split(sep).slice(1).includes("scratch");

/** The paths of `dir` (workspaces aside) that are not 700 (directories) or 600 (files), as `path 644`. */
function notPrivate(dir: string): string[] {
  return [...modes(dir)]
    .filter(([path]) => !inWorkspace(path))
    .filter(([, m]) => m.mode !== (m.directory ? 0o700 : 0o600))
    .map(([path, m]) => `${path} ${m.mode.toString(8)}`);
}

/** "make FILE" asks for bash to create FILE in the workspace; a tool result is answered "done". */
function script(request: ChatCompletionRequest): FixtureResponse {
  const last = lastMessage(request);
  if (last?.role === "tool") return { content: "done" };
  const make = /make (\S+)/.exec(requestText({ ...request, messages: last ? [last] : [] }));
  if (make?.[1]) {
    const command = `echo made > ${make[1]} && mkdir -p made-dir`;
    return { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command }) }] };
  }
  return { content: "hello" };
}

describe("files guppy writes are its owner's alone (umask 077)", { timeout: 120_000 }, () => {
  let llm: MockLlm;
  let umask: number;
  const homes: Array<ReturnType<typeof tempHome>> = [];
  const base = () => {
    const h = tempHome();
    homes.push(h);
    return h.home;
  };

  beforeAll(async () => {
    // The usual umask (files 644): what guppy's children would inherit without its own.
    umask = process.umask(0o022);
    llm = await startMockLlm(script);
  });
  afterAll(async () => {
    process.umask(umask);
    await llm.stop();
    for (const h of homes) h.cleanup();
  });

  it("guppy init creates the home 700 and its files 600", async () => {
    const home = join(base(), "home");
    const r = await runCli(["init", "--home", home]);
    expect(r.code).toBe(0);
    expect(lstatSync(home).mode & 0o777).toBe(0o700);
    expect(modes(home).size).toBeGreaterThan(5);
    expect(notPrivate(home)).toEqual([]);
  });

  it("a guppy chat -m turn leaves logs and thread files private; the tool's own files get the user's umask", async () => {
    const home = join(base(), "home");
    const env = cleanEnv({ GUPPY_HOME: home, ...llm.env("openai-completions") });
    const r = await runCli(["chat", "-m", "make made-by-tool.txt"], { env, timeoutMs: 60_000 });
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("done");
    const all = modes(home);
    expect([...all.keys()].some((p) => p.endsWith("log.jsonl"))).toBe(true);
    expect([...all.keys()].some((p) => p.endsWith("context.jsonl"))).toBe(true);
    expect(lstatSync(home).mode & 0o777).toBe(0o700);
    expect(notPrivate(home)).toEqual([]);
    const made = [...all].find(([p]) => p.endsWith(`scratch${sep}made-by-tool.txt`));
    expect(made?.[1].mode).toBe(0o644);
    const dir = [...all].find(([p]) => p.endsWith(`scratch${sep}made-dir`));
    expect(dir?.[1].mode).toBe(0o755);
  });

  it("a guppy serve turn leaves the token, gateway file, logs and threads private", async () => {
    const home = join(base(), "home");
    const serve = await startServe(home, llm.env("openai-completions"));
    try {
      const response = await serve.api("/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi there" }] }),
      });
      const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
      expect(body.choices[0]?.message.content).toBe("hello");
      const all = modes(home);
      for (const name of ["api-token", "gateway.json"]) expect(all.get(name)?.mode).toBe(0o600);
      expect([...all.keys()].some((p) => p.endsWith("log.jsonl"))).toBe(true);
      expect(notPrivate(home)).toEqual([]);
    } finally {
      serve.child.kill("SIGTERM");
      await serve.exited;
    }
    expect(lstatSync(home).mode & 0o777).toBe(0o700);
    expect(notPrivate(home)).toEqual([]);
  });

  it("a home others can read gets one warning line at the start of a command", async () => {
    const home = base();
    chmodSync(home, 0o755);
    const env = cleanEnv({ GUPPY_HOME: home, ...llm.env("openai-completions") });
    const warning = `guppy: warning: ${home} is readable by others (mode 755): run guppy doctor --fix`;
    const config = await runCli(["config"], { env });
    expect(config.code).toBe(0);
    expect(config.stderr).toBe(`${warning}\n`);
    const chat = await runCli(["chat", "-m", "hi"], { env, timeoutMs: 60_000 });
    expect(chat.stdout.trim()).toBe("hello");
    expect(chat.stderr).toBe(`${warning}\n`);
    chmodSync(home, 0o700);
    expect((await runCli(["config"], { env })).stderr).toBe("");
  });
});
