import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolCall } from "@copilotkit/aimock";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli } from "../helpers/run-cli.js";
import {
  call,
  type SandboxHome,
  sandboxHome,
  scenarioScript,
  sleep,
  systemPrompt,
  toolResults,
} from "./sandbox-fixture.js";

/**
 * A stand-in `docker` (no engine on these machines): it records each call's arguments as a JSON
 * line and, for `docker exec` into the one container it knows, runs the command here with guppy's
 * home where the container mounts it (`/workspace`), as a container with that mount would.
 */
function standInDocker(dir: string, log: string, guppyHome: string): void {
  const script = `#!${process.execPath}
const { appendFileSync } = require("node:fs");
const { spawnSync } = require("node:child_process");
const args = process.argv.slice(2);
appendFileSync(${JSON.stringify(log)}, JSON.stringify(args) + "\\n");
const here = (s) => s.split("/workspace").join(${JSON.stringify(guppyHome)});
if (args[0] !== "exec") process.exit(0);
let i = 1;
let cwd = "/";
const env = { ...process.env };
for (; i < args.length && args[i].startsWith("-"); i++) {
  const flag = args[i];
  if (flag === "-w" || flag === "--workdir") cwd = args[++i];
  else if (flag.startsWith("--workdir=")) cwd = flag.slice(10);
  else if (flag === "-e" || flag === "--env") {
    const [k, ...v] = args[++i].split("=");
    env[k] = v.join("=");
  } else if (flag === "-u" || flag === "--user") i++;
}
const container = args[i];
if (container !== "box") {
  process.stderr.write("Error response from daemon: No such container: " + container + "\\n");
  process.exit(1);
}
const [file, ...rest] = args.slice(i + 1);
const r = spawnSync(file, rest.map(here), { cwd: here(cwd), env, stdio: "inherit" });
process.exit(r.status ?? 1);
`;
  const path = join(dir, "docker");
  writeFileSync(path, script);
  chmodSync(path, 0o755);
}

/** `guppy chat -m` with GUPPY_SANDBOX=docker:box: what `docker` was asked, what the model saw. */
describe("guppy chat -m in a docker container (stand-in docker)", () => {
  const scenarios = new Map<string, ToolCall[]>();
  let llm: MockLlm;
  let h: SandboxHome;
  let bin: string;
  let log: string;
  const calls = (): string[][] =>
    existsSync(log)
      ? readFileSync(log, "utf8")
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line) as string[])
      : [];
  const chat = (args: string[], container = "box", input?: string) =>
    runCli(["chat", ...args], {
      env: cleanEnv({
        ...llm.env("openai-completions"),
        ...h.env,
        GUPPY_SANDBOX: `docker:${container}`,
        PATH: `${bin}:${process.env.PATH ?? ""}`,
      }),
      ...(input !== undefined ? { input } : {}),
      timeoutMs: 50_000,
    });

  beforeAll(async () => {
    llm = await startMockLlm(scenarioScript(scenarios));
    h = sandboxHome();
    bin = mkdtempSync(join(tmpdir(), "guppy-docker-bin-"));
    log = join(bin, "calls.jsonl");
    standInDocker(bin, log, h.home);
  });
  afterAll(async () => {
    await llm.stop();
    h.cleanup();
    rmSync(bin, { recursive: true, force: true });
  });
  beforeEach(() => {
    llm.requests().length = 0;
    rmSync(log, { force: true });
  });

  it("runs bash through docker exec in the thread's folder under /workspace, and shows the model /workspace paths", async () => {
    const command = "echo ran-in-container > made.txt && cat made.txt";
    scenarios.set("docker", [
      call("in_box", "bash", { command }),
      // A file tool given the path the model was shown reads the host file behind it.
      call("read_memory", "read", { path: "/workspace/MEMORY.md" }),
    ]);
    const r = await chat(["-m", "scenario:docker", "--session", "dock"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("done");

    const workspace = "/workspace/cli/local/dock/scratch";
    const exec = calls().find((args) => args[0] === "exec" && args.at(-1) === command);
    expect(exec, JSON.stringify(calls())).toBeDefined();
    const args = exec as string[];
    // docker exec [options] box bash -c <command>: in the thread's folder as the container sees it.
    expect(args.slice(-4)).toEqual(["box", "bash", "-c", command]);
    const w = args.findIndex((a) => a === "-w" || a === "--workdir");
    expect(args[w + 1]).toBe(workspace);
    const results = toolResults(llm.requests().at(-1));
    expect(results.get("in_box")).toContain("ran-in-container");
    expect(results.get("read_memory")).toContain("The user's name is Ana.");
    // The file landed in the host folder the container mounts.
    expect(readFileSync(join(h.home, "cli/local/dock/scratch/made.txt"), "utf8")).toBe(
      "ran-in-container\n",
    );

    // The system prompt speaks of paths in the container, never of the host's.
    const prompt = systemPrompt(llm.requests()[0]);
    expect(prompt).toContain(`Workspace (relative paths resolve here): ${workspace}`);
    expect(prompt).toContain("/workspace/MEMORY.md");
    expect(prompt).not.toContain(h.home);
  });

  it("on timeout kills the command inside the container too, not only the docker exec client", async () => {
    const late = "/workspace/cli/local/slow/scratch/late.txt";
    const command = `(setsid sh -c 'sleep 3; echo late > ${late}' &) ; sleep 30`;
    scenarios.set("slow", [call("slow", "bash", { command, timeout_seconds: 1 })]);
    const r = await chat(["-m", "scenario:slow", "--session", "slow"]);
    expect(r.code).toBe(0);
    expect(toolResults(llm.requests().at(-1)).get("slow")).toMatch(/timed out after 1 s/);
    // The grandchild would have written by now; the kill's exec has started and logged itself.
    await sleep(4_000);
    expect(existsSync(join(h.home, "cli/local/slow/scratch/late.txt"))).toBe(false);
    const all = calls();
    const run = all.findIndex((args) => args[0] === "exec" && args.at(-1) === command);
    expect(run, JSON.stringify(all)).toBeGreaterThanOrEqual(0);
    // The command ran with a mark of its own; a second exec into the container kills by it.
    const mark = (all[run] as string[]).find((a) => a.startsWith("GUPPY_EXEC_TAG="));
    expect(mark).toBeDefined();
    const tag = (mark as string).slice("GUPPY_EXEC_TAG=".length);
    const kill = all
      .slice(run + 1)
      .find((args) => args[0] === "exec" && args.includes("box") && args.join(" ").includes(tag));
    expect(kill, JSON.stringify(all)).toBeDefined();
  }, 60_000);

  it("says in /status that the tools run in the container", async () => {
    const r = await chat(["--session", "status"], "box", "/status\n/exit\n");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^sandbox\s+docker\b.*\bbox\b/m);
  });

  it("stops with one line when the container does not answer docker exec", async () => {
    const r = await chat(["-m", "hello", "--session", "gone"], "gone");
    expect(r.code).not.toBe(0);
    expect(r.code).not.toBeNull();
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/docker:gone/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(llm.requests()).toHaveLength(0);
  });
});
