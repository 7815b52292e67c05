import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HeaderProxy, startHeaderProxy } from "../helpers/header-proxy.js";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { tempHome } from "../helpers/run-cli.js";
import { type ServeProcess, startServe } from "./serve-harness.js";

const OLD_KEY = "sk-old-key-from-guppy-env-0001";
const NEW_KEY = "sk-new-key-from-guppy-env-00002";

/** "run-bash CMD" asks for bash; a tool result is answered with it; "say-new-key" with the new key. */
function script(request: ChatCompletionRequest): FixtureResponse {
  const last = lastMessage(request);
  const text = requestText({ ...request, messages: last ? [last] : [] });
  if (last?.role === "tool") return { content: `Tool said: ${text}` };
  const bash = /^run-bash (.+)$/.exec(text);
  if (bash?.[1]) {
    return { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: bash[1] }) }] };
  }
  if (text === "say-new-key") return { content: `The key is ${NEW_KEY}.` };
  return { content: `You said: ${text}` };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe("guppy serve follows <home>/guppy.env: a changed key is used without a restart", () => {
  let llm: MockLlm;
  let proxy: HeaderProxy;
  let serve: ServeProcess | undefined;
  const home = tempHome();
  const envFile = join(home.home, "guppy.env");
  beforeAll(async () => {
    llm = await startMockLlm(script);
    proxy = await startHeaderProxy(llm.url);
  });
  afterAll(async () => {
    if (serve && serve.child.exitCode === null) {
      serve.child.kill("SIGKILL");
      await serve.exited;
    }
    await proxy.stop();
    await llm.stop();
    home.cleanup();
  });

  /** One turn through the HTTP API: the answer's text. */
  const ask = async (text: string): Promise<string> => {
    const r = await (serve as ServeProcess).api("/v1/chat/completions", {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "user", content: text }] }),
    });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { choices: Array<{ message: { content: string } }> };
    return body.choices[0]?.message.content ?? "";
  };
  const sentKeys = () =>
    proxy.seen.filter((r) => /\/chat\/completions$/.test(r.path)).map((r) => r.authorization);

  it("the next request uses the new key; it is redacted and withheld from tools", async () => {
    writeFileSync(envFile, `# the model's key\nOPENAI_API_KEY=${OLD_KEY}\n`, { mode: 0o600 });
    // A custom OpenAI endpoint with no GUPPY_API_KEY: the key is OPENAI_API_KEY, from guppy.env.
    const { GUPPY_API_KEY: _, ...mock } = llm.env("openai-completions");
    serve = await startServe(home.home, {
      ...mock,
      GUPPY_BASE_URL: `${proxy.url}/v1`,
      GUPPY_SANDBOX: "host",
    });
    expect(await ask("first")).toBe("You said: first");
    expect(sentKeys()).toEqual([`Bearer ${OLD_KEY}`]);

    // The owner rotates the key in the file; the gateway keeps running.
    writeFileSync(envFile, `# the model's key\nOPENAI_API_KEY=${NEW_KEY}\n`, { mode: 0o600 });
    expect(await ask("second")).toBe("You said: second");
    expect(sentKeys()).toEqual([`Bearer ${OLD_KEY}`, `Bearer ${NEW_KEY}`]);

    // The new key is redacted as the old one was: the model saying it...
    expect(await ask("say-new-key")).toBe("The key is [redacted: OPENAI_API_KEY].");
    // ...and a tool command does not get it: `env` prints neither the value nor the name.
    const toolAnswer = await ask("run-bash env | sort");
    expect(toolAnswer).toContain("PATH=");
    expect(toolAnswer).not.toContain("OPENAI_API_KEY");
    expect(toolAnswer).not.toContain(NEW_KEY);
    expect(sentKeys().slice(2)).toEqual([
      `Bearer ${NEW_KEY}`,
      `Bearer ${NEW_KEY}`,
      `Bearer ${NEW_KEY}`,
    ]);

    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);
    // Nowhere in guppy's home but guppy.env: logs, threads, inbox.
    const files = filesUnder(home.home).filter((f) => f !== envFile);
    expect(files.some((f) => f.endsWith("gateway.log"))).toBe(true);
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      expect(text.includes(NEW_KEY), file).toBe(false);
      expect(text.includes(OLD_KEY), file).toBe(false);
    }
  }, 60_000);
});
