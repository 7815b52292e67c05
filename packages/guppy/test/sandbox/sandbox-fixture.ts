import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse, ToolCall } from "@copilotkit/aimock";
import { expect } from "vitest";
import { contentText } from "../serve/serve-harness.js";

/** What a test plants on the "host" and must never see in a request the model receives. */
export const SECRET = "host-secret-5b1e9c0d";
export const SETTINGS_KEY = "sk-settings-marker-77d2a1";
export const API_TOKEN = "api-token-marker-3c9a0f4e8b7d6a5c";
export const OTHER_THREAD = "other-thread-marker-90e4";

/**
 * A fake user's machine: `$HOME` with a secret in it, and GUPPY_HOME inside that home holding a
 * settings.json with a key, an api-token and the memory files. Under /var/tmp when there is one
 * (not /tmp): a sandbox whose private /tmp alone hid the home would pass a test made under /tmp.
 */
export interface SandboxHome {
  /** The fake `$HOME`. */
  userHome: string;
  /** GUPPY_HOME, inside `userHome` as `~/.guppy` is. */
  home: string;
  secretFile: string;
  settingsFile: string;
  tokenFile: string;
  globalMemory: string;
  /** Another thread's log (a Telegram chat's): no thread sees another's folder. */
  otherThreadLog: string;
  /** Environment for guppy: the fake HOME and GUPPY_HOME (add the model's and the sandbox's). */
  env: Record<string, string>;
  cleanup(): void;
}

export function sandboxHome(): SandboxHome {
  const base = existsSync("/var/tmp") ? "/var/tmp" : tmpdir();
  const userHome = mkdtempSync(join(base, "guppy-sandbox-home-"));
  const home = join(userHome, ".guppy");
  mkdirSync(home, { recursive: true, mode: 0o700 }); // as guppy makes it: a looser one is warned about
  const secretFile = join(userHome, "secret.txt");
  writeFileSync(secretFile, `${SECRET}\n`);
  const settingsFile = join(home, "settings.json");
  // GUPPY_API_KEY in the environment wins: this key is never sent to the mock as a header either.
  writeFileSync(settingsFile, `${JSON.stringify({ apiKey: SETTINGS_KEY }, null, 2)}\n`);
  const tokenFile = join(home, "api-token");
  writeFileSync(tokenFile, `${API_TOKEN}\n`, { mode: 0o600 });
  const globalMemory = join(home, "MEMORY.md");
  writeFileSync(globalMemory, "The user's name is Ana.\n");
  const otherThreadLog = join(home, "telegram/-100/7/log.jsonl");
  mkdirSync(join(home, "telegram/-100/7/scratch"), { recursive: true });
  writeFileSync(otherThreadLog, `${JSON.stringify({ text: OTHER_THREAD })}\n`);
  return {
    userHome,
    home,
    secretFile,
    settingsFile,
    tokenFile,
    globalMemory,
    otherThreadLog,
    env: { HOME: userHome, GUPPY_HOME: home },
    cleanup: () => rmSync(userHome, { recursive: true, force: true }),
  };
}

/** A tool call with a known id, so its result can be found in the next request. */
export function call(id: string, name: string, args: Record<string, unknown>): ToolCall {
  return { id, name, arguments: JSON.stringify(args) };
}

/**
 * The scripted model: a prompt `scenario:<name>` is answered with that scenario's tool calls (all
 * in one turn; guppy runs them in order); a turn of tool results with "done"; anything else is
 * echoed. Scenarios are registered by the test, which knows the paths.
 */
export function scenarioScript(scenarios: Map<string, ToolCall[]>) {
  return (request: ChatCompletionRequest): FixtureResponse => {
    const last = request.messages[request.messages.length - 1];
    if (last?.role === "tool") return { content: "done" };
    const text = contentText(last?.content).trim();
    const name = /^scenario:(\S+)/.exec(text)?.[1];
    const calls = name === undefined ? undefined : scenarios.get(name);
    if (calls) return { toolCalls: calls };
    return { content: `You said: ${text}` };
  };
}

/** The tool results a request carries, by tool call id. */
export function toolResults(request: ChatCompletionRequest | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of request?.messages ?? []) {
    if (m.role === "tool" && m.tool_call_id) out.set(m.tool_call_id, contentText(m.content));
  }
  return out;
}

/** The first request (oldest first) that carries the result of tool call `id`. */
export function requestWithResult(
  requests: readonly ChatCompletionRequest[],
  id: string,
): ChatCompletionRequest | undefined {
  return requests.find((r) => toolResults(r).has(id));
}

/** The system prompt of a request. */
export function systemPrompt(request: ChatCompletionRequest | undefined): string {
  const system = request?.messages.find((m) => m.role === "system");
  return contentText(system?.content);
}

/** Every marker planted on the host; none may appear anywhere in what the model received. */
export const MARKERS = [SECRET, SETTINGS_KEY, API_TOKEN, OTHER_THREAD] as const;

/** Waits `ms` (a grandchild that survived would have written by then). */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Where a thread's files are, as the probe scenario needs them. */
export interface ProbeThread {
  /** The thread's workspace (`…/scratch`). */
  workspace: string;
  /** Its channel's MEMORY.md (`<home>/<adapter>/<channel>/MEMORY.md`). */
  channelMemory: string;
}

/**
 * One turn of tool calls probing the sandbox from inside: reads of the home's secret, of
 * settings.json and api-token (by `$HOME` and by the real path), writes outside and inside the
 * workspace, the two memory writes (the `write` tool and bash `>>`), the file tools on paths
 * outside, and the environment.
 */
export function probeCalls(h: SandboxHome, t: ProbeThread): ToolCall[] {
  return [
    call("cat_home_var", "bash", { command: "cat $HOME/secret.txt" }),
    call("cat_home_abs", "bash", { command: `cat ${h.secretFile}` }),
    call("cat_settings", "bash", { command: `cat ${h.settingsFile}` }),
    call("cat_token", "bash", { command: `cat ${h.tokenFile}` }),
    call("cat_other", "bash", { command: `cat ${h.otherThreadLog}` }),
    call("write_home_var", "bash", { command: "echo x > $HOME/out.txt" }),
    call("write_home_abs", "bash", { command: `echo x > ${join(h.userHome, "out-abs.txt")}` }),
    call("write_inside", "bash", { command: "echo made-inside > inside.txt && cat inside.txt" }),
    call("memory_write", "write", {
      path: t.channelMemory,
      content: "This channel plans the spring release.\n",
    }),
    call("memory_bash", "bash", { command: `echo '- Ana drinks green tea.' >> ${h.globalMemory}` }),
    call("read_outside", "read", { path: h.secretFile }),
    call("read_settings", "read", { path: h.settingsFile }),
    // A link made inside the workspace to the secret: the file tools run outside the sandbox.
    call("link", "bash", { command: `ln -s ${h.secretFile} link.txt` }),
    call("read_link", "read", { path: "link.txt" }),
    call("env", "bash", { command: "env" }),
  ];
}

/** The path-free part of a failed bash result: a non-zero exit. */
export const FAILED = /\[exit code [1-9]\d*\]/;

/**
 * What the probe must have found under bubblewrap, asserted on the request that carried its
 * results back to the model (and on every body the model received), and on the host's files.
 */
export function expectProbeConfined(
  h: SandboxHome,
  t: ProbeThread,
  requests: readonly ChatCompletionRequest[],
  rawBodies: readonly unknown[],
): void {
  const results = toolResults(requestWithResult(requests, "env"));
  const result = (id: string) => {
    const text = results.get(id);
    expect(text, `the result of ${id}`).toBeDefined();
    return text ?? "";
  };
  // Reading the home's secret, settings.json, api-token or another thread's log fails inside.
  for (const id of ["cat_home_var", "cat_home_abs", "cat_settings", "cat_token", "cat_other"]) {
    expect(result(id), id).toMatch(FAILED);
  }
  // Nothing planted on the host reached the model, in any request.
  const everything = JSON.stringify(rawBodies);
  for (const marker of MARKERS) expect(everything).not.toContain(marker);
  // A write outside the workspace leaves no file on the host.
  expect(existsSync(join(h.userHome, "out.txt"))).toBe(false);
  expect(existsSync(join(h.userHome, "out-abs.txt"))).toBe(false);
  // (The command may succeed: $HOME in the sandbox can be an empty tmpfs that goes with it.)
  // Inside the workspace a write works and persists.
  expect(result("write_inside")).toContain("made-inside");
  expect(readFileSync(join(t.workspace, "inside.txt"), "utf8")).toBe("made-inside\n");
  // The memory files are writable: with the write tool and with bash.
  expect(result("memory_write")).not.toMatch(/refused|not allowed|outside/i);
  expect(readFileSync(t.channelMemory, "utf8")).toBe("This channel plans the spring release.\n");
  expect(result("memory_bash")).not.toMatch(FAILED);
  expect(readFileSync(h.globalMemory, "utf8")).toBe(
    "The user's name is Ana.\n- Ana drinks green tea.\n",
  );
  // The file tools refuse an outside path themselves, naming it.
  expect(result("read_outside")).toContain(h.secretFile);
  expect(result("read_outside")).not.toContain(SECRET);
  expect(result("read_settings")).toContain(h.settingsFile);
  // …judged on the real path behind a link: the refusal names where the link leads.
  expect(result("read_link")).toContain(h.secretFile);
  // guppy's own variables and keys stay out of the commands' environment.
  expect(result("env")).not.toMatch(/^GUPPY_HOME=/m);
  expect(result("env")).not.toContain("test-key");
}
