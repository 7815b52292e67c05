import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  type ServeProcess,
  startAsyncMockLlm,
  startServe,
} from "./serve-harness.js";

/** guppy's own key for the model (GUPPY_API_KEY) and a provider variable pi-ai reads. */
const KEY = "test-key-0123456789abcdef";
const ANTHROPIC = "sk-ant-test-9876543210zyx";
/** The key of a custom endpoint (provider "myllm": MYLLM_API_KEY). */
const CUSTOM = "myllm-key-5555aaaa6666bbbb";

/**
 * "run-bash CMD" asks for bash; a tool result is answered with its first line; "say-key" is
 * answered with the key twice (streamed in aimock's 20-char chunks, which split it),
 * "say-custom-key" with the custom endpoint's key.
 */
function script(request: ChatCompletionRequest): FixtureResponse {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === "tool") {
    return { content: `Tool said: ${contentText(last.content).split("\n")[0]}` };
  }
  const text = contentText(last?.content);
  const bash = /^run-bash (.+)$/.exec(text);
  if (bash?.[1])
    return { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: bash[1] }) }] };
  if (text === "say-key") return { content: `Your key is ${KEY}, and again: ${KEY}.` };
  if (text === "say-custom-key") return { content: `Your key is ${CUSTOM}.` };
  return { content: `You said: ${text}` };
}

/** Every file under `dir`, by path. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe("guppy serve: configured secrets are redacted before they are stored, logged or sent", () => {
  let llm: AsyncMockLlm;
  const home = tempHome();
  let serve: ServeProcess | undefined;

  beforeAll(async () => {
    llm = await startAsyncMockLlm(script);
  });
  afterEach(async () => {
    if (serve && serve.child.exitCode === null && serve.child.signalCode === null) {
      serve.child.kill("SIGKILL");
      await serve.exited;
    }
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });

  it("a key a tool printed and a key the model streamed reach no file, request or client", async () => {
    serve = await startServe(home.home, {
      ...llm.env(),
      GUPPY_API_KEY: KEY,
      ANTHROPIC_API_KEY: ANTHROPIC,
      GUPPY_SANDBOX: "host",
    });
    const openai = new OpenAI({
      baseURL: `${serve.url}/v1`,
      apiKey: serve.token,
      maxRetries: 0,
      timeout: 20_000,
    });

    // The command's text holds neither key whole: only its output does.
    const command = `printf '%s%s\\n' ${KEY.slice(0, 12)} ${KEY.slice(12)}; printf '%s%s\\n' ${ANTHROPIC.slice(0, 10)} ${ANTHROPIC.slice(10)}`;
    // Long enough to be saved whole under artifacts/, the key at its end too.
    const long = `${command}; seq 1 3000; printf '%s%s\\n' ${KEY.slice(0, 5)} ${KEY.slice(5)}`;
    const toolTurn = await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: `run-bash ${long}` }],
    });
    expect(toolTurn.choices[0]?.message.content).toBe("Tool said: [redacted: GUPPY_API_KEY]");
    // The request after the tool ran carried its result redacted.
    const afterTool = JSON.stringify(llm.requests.at(-1));
    expect(afterTool).toContain("[redacted: GUPPY_API_KEY]\\n[redacted: ANTHROPIC_API_KEY]");
    expect(afterTool).not.toContain(KEY);
    expect(afterTool).not.toContain(ANTHROPIC);

    // A prompt and a tool call that hold the key whole: inbox, log, context and gateway.log.
    const echoed = await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: `run-bash echo ${KEY}` }],
    });
    expect(echoed.choices[0]?.message.content).toBe("Tool said: [redacted: GUPPY_API_KEY]");
    expect(JSON.stringify(llm.requests.at(-1))).not.toContain(KEY);

    // The model says the key, split across deltas: the client gets it redacted, whole.
    const stream = await openai.chat.completions.create({
      model: "m",
      stream: true,
      messages: [{ role: "user", content: "say-key" }],
    });
    const deltas: string[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta.content;
      if (delta) deltas.push(delta);
    }
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe(
      "Your key is [redacted: GUPPY_API_KEY], and again: [redacted: GUPPY_API_KEY].",
    );
    // The next request does not send the model's own answer back with the key in it.
    await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hello" }],
    });
    const last = JSON.stringify(llm.requests.at(-1));
    expect(last).toContain("Your key is [redacted: GUPPY_API_KEY]");
    expect(last).not.toContain(KEY);

    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);

    const files = filesUnder(home.home);
    const named = (name: string) => files.filter((f) => f.endsWith(name));
    expect(named("context.jsonl")).toHaveLength(1);
    expect(named("log.jsonl")).toHaveLength(1);
    expect(named("gateway.log")).toHaveLength(1);
    expect(files.filter((f) => /\/artifacts\/bash-/.test(f))).toHaveLength(1);
    for (const file of [
      ...named("context.jsonl"),
      ...named("log.jsonl"),
      ...named("gateway.log"),
    ]) {
      expect(readFileSync(file, "utf8"), file).toContain("[redacted: GUPPY_API_KEY]");
    }
    expect(readFileSync(named("context.jsonl")[0] as string, "utf8")).toContain(
      "[redacted: ANTHROPIC_API_KEY]",
    );
    // Nowhere in guppy's home, inbox and artifacts included.
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      expect(text.includes(KEY), file).toBe(false);
      expect(text.includes(ANTHROPIC), file).toBe(false);
    }
  }, 60_000);

  it("the HTTP API's token in <home>/api-token, printed by a tool at the next start, is redacted", async () => {
    serve = await startServe(home.home, { ...llm.env(), GUPPY_SANDBOX: "host" });
    const openai = new OpenAI({
      baseURL: `${serve.url}/v1`,
      apiKey: serve.token,
      maxRetries: 0,
      timeout: 20_000,
    });
    const answer = await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: `run-bash cat ${join(home.home, "api-token")}` }],
    });
    expect(answer.choices[0]?.message.content).toBe("Tool said: [redacted: api-token]");
    expect(JSON.stringify(llm.requests.at(-1))).not.toContain(serve.token);
  }, 30_000);
  it("the HTTP API's token generated at the first start is redacted from that start on", async () => {
    const fresh = tempHome();
    try {
      serve = await startServe(fresh.home, { ...llm.env(), GUPPY_SANDBOX: "host" });
      expect(serve.stdout()).toMatch(/token generated and saved to .*api-token/);
      const path = join(fresh.home, "api-token");
      const answer = await serve.api("/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify({ messages: [{ role: "user", content: `run-bash cat ${path}` }] }),
      });
      const body = (await answer.json()) as { choices: Array<{ message: { content: string } }> };
      expect(body.choices[0]?.message.content).toBe("Tool said: [redacted: api-token]");
      expect(JSON.stringify(llm.requests.at(-1))).not.toContain(serve.token);
      serve.child.kill("SIGTERM");
      expect(await serve.exited).toBe(0);
      const files = filesUnder(fresh.home).filter((f) => f !== path);
      expect(files.some((f) => f.endsWith("context.jsonl"))).toBe(true);
      for (const file of files) {
        expect(readFileSync(file, "utf8").includes(serve.token), file).toBe(false);
      }
    } finally {
      fresh.cleanup();
    }
  }, 30_000);
});

describe("guppy chat -m: configured secrets are redacted", () => {
  let llm: MockLlm;
  const home = tempHome();
  beforeAll(async () => {
    llm = await startMockLlm((request) => script(request));
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });

  it("a key a tool printed and the model's answer with the key reach no file, request or stdout", async () => {
    const env = cleanEnv({
      ...llm.env("openai-completions"),
      GUPPY_API_KEY: KEY,
      GUPPY_HOME: home.home,
      GUPPY_SANDBOX: "host",
    });
    const command = `printf '%s%s\\n' ${KEY.slice(0, 12)} ${KEY.slice(12)}`;
    const tool = await runCli(["chat", "-m", `run-bash ${command}`], { env });
    expect(tool.stderr).toBe("");
    expect(tool.stdout).toBe("Tool said: [redacted: GUPPY_API_KEY]\n");
    const said = await runCli(["chat", "-m", "say-key"], { env });
    expect(said.stdout).toBe(
      "Your key is [redacted: GUPPY_API_KEY], and again: [redacted: GUPPY_API_KEY].\n",
    );
    expect(JSON.stringify(llm.rawBodies())).not.toContain(KEY);
    const files = filesUnder(home.home);
    expect(files.some((f) => f.endsWith("context.jsonl"))).toBe(true);
    for (const file of files) expect(readFileSync(file, "utf8").includes(KEY), file).toBe(false);
  }, 30_000);

  it("a custom endpoint's key (<PROVIDER>_API_KEY) the model said reaches no file or stdout", async () => {
    const custom = tempHome();
    try {
      const env = cleanEnv({
        ...llm.env("openai-completions", "myllm/mock-model"),
        GUPPY_HOME: custom.home,
        GUPPY_SANDBOX: "host",
        MYLLM_API_KEY: CUSTOM,
      });
      delete env.GUPPY_API_KEY;
      const said = await runCli(["chat", "-m", "say-custom-key"], { env });
      expect(said.stderr).toBe("");
      expect(said.stdout).toBe("Your key is [redacted: MYLLM_API_KEY].\n");
      const files = filesUnder(custom.home);
      expect(files.some((f) => f.endsWith("context.jsonl"))).toBe(true);
      for (const file of files) {
        expect(readFileSync(file, "utf8").includes(CUSTOM), file).toBe(false);
      }
    } finally {
      custom.cleanup();
    }
  }, 30_000);
});
