import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { discoverLocalModel } from "@guppy/core";
import { readEnvFile } from "@guppy/core/config";
import { parse } from "jsonc-parser";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  startTelegramEmulator,
  type TelegramEmulator,
} from "../channels/helpers/telegram-emulator.js";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, guppyBin, tempHome } from "../helpers/run-cli.js";

const KEY = "sk-typed-secret-4242";

/** `guppy <args>` in a pseudo-terminal (util-linux `script`): what it shows, and answers typed at its prompts. */
interface Terminal {
  /** Waits for `prompt` (after the previous one) and types `keys`. */
  answer(prompt: string, keys: string): Promise<void>;
  /** Waits until the output (after the previous prompt) contains `text`. */
  waitFor(text: string): Promise<void>;
  output(): string;
  exit: Promise<number | null>;
  child: ChildProcessWithoutNullStreams;
}

function inTerminal(args: string[], env: NodeJS.ProcessEnv): Terminal {
  const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  const command = [process.execPath, guppyBin, ...args].map(quote).join(" ");
  const child = spawn("script", ["-qfec", command, "/dev/null"], { env, stdio: "pipe" });
  let output = "";
  let from = 0;
  child.stdout.on("data", (d) => {
    output += d;
  });
  child.stderr.on("data", (d) => {
    output += d;
  });
  const exit = new Promise<number | null>((resolve) => child.on("close", resolve));
  const waitFor = async (text: string) => {
    const deadline = Date.now() + 40_000;
    while (output.indexOf(text, from) < 0) {
      if (child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`no "${text}" in the terminal; it shows:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    from = output.indexOf(text, from) + text.length;
  };
  return {
    waitFor,
    async answer(prompt, keys) {
      await waitFor(prompt);
      // A moment for the question to take the terminal (raw mode for a hidden one).
      await new Promise((r) => setTimeout(r, 100));
      child.stdin.write(keys);
    },
    output: () => output,
    exit,
    child,
  };
}

describe("guppy setup in a terminal", { timeout: 120_000 }, () => {
  let llm: MockLlm;
  let telegram: TelegramEmulator;
  let home: string;
  let cleanup: () => void;
  let term: Terminal | undefined;
  beforeAll(async () => {
    llm = await startMockLlm((request) =>
      request.model === "bad-model"
        ? { error: { message: "model not found", type: "invalid_request_error" }, status: 404 }
        : { content: "pong from the mock" },
    );
    telegram = await startTelegramEmulator();
  });
  afterAll(async () => {
    await telegram.stop();
    await llm.stop();
  });
  beforeEach(() => {
    ({ home, cleanup } = tempHome());
  });
  afterEach(() => {
    if (term && term.child.exitCode === null) term.child.kill("SIGKILL");
    term = undefined;
    cleanup();
  });
  const env = () =>
    cleanEnv({ GUPPY_TELEGRAM_API_URL: telegram.apiUrl, GUPPY_SANDBOX: "host", TERM: "xterm" });

  it("asks, tests, asks again after a failed test, and never shows the key typed", async () => {
    term = inTerminal(["setup", "--home", home], env());
    await term.answer("Provider [", "custom\r");
    await term.answer("Base URL of the endpoint", `${llm.url}/v1\r`);
    await term.answer("Protocol (", "\r");
    await term.answer("API key, stored as GUPPY_API_KEY", `${KEY}\r`);
    await term.answer("Model [", "bad-model\r");
    await term.waitFor("answered: 404");
    await term.waitFor("Again (Enter keeps each answer)");
    // Every answer but the model kept with Enter; the key too, without being typed again.
    await term.answer("Provider [", "\r");
    await term.answer(
      `Base URL of the endpoint (e.g. http://127.0.0.1:8000/v1) [${llm.url}/v1]`,
      "\r",
    );
    await term.answer("Protocol (", "\r");
    await term.answer("Enter keeps the one typed before", "\r");
    await term.answer("Model [bad-model]", "mock-gpt\r");
    await term.waitFor("✓ custom/mock-gpt answered");
    await term.answer("Telegram bot token", `${telegram.token}\r`);
    await term.waitFor("✓ Telegram bot @TestNameBot");
    expect(await term.exit).toBe(0);

    const shown = term.output();
    expect(shown).toContain("guppy pairing approve telegram <code> --owner");
    expect(shown).not.toContain(KEY);
    expect(shown).not.toContain(telegram.token);
    expect(readEnvFile(join(home, "guppy.env")).values).toEqual({
      GUPPY_API_KEY: KEY,
      TELEGRAM_BOT_TOKEN: telegram.token,
    });
    const settings = parse(readFileSync(join(home, "settings.json"), "utf8"), [], {
      allowTrailingComma: true,
    });
    expect(settings).toMatchObject({
      model: "custom/mock-gpt",
      baseUrl: `${llm.url}/v1`,
      api: "openai-completions",
    });
  });

  it("guppy chat with no model offers the setup, then goes on to answer", async (context) => {
    // A local Ollama or LM Studio on this machine would be used instead of the offer.
    if (await discoverLocalModel()) context.skip();
    term = inTerminal(["chat", "--home", home], env());
    await term.waitFor("No model is configured yet");
    await term.answer("Set it up now? [Y/n]", "\r");
    await term.answer("Provider [", "custom\r");
    await term.answer("Base URL of the endpoint", `${llm.url}/v1\r`);
    await term.answer("Protocol (", "\r");
    await term.answer("API key, stored as GUPPY_API_KEY", `${KEY}\r`);
    await term.answer("Model [", "mock-gpt\r");
    await term.waitFor("✓ custom/mock-gpt answered");
    await term.answer("Telegram bot token", "\r");
    await term.waitFor("custom/mock-gpt");
    await term.answer("› ", "hello there\r");
    await term.waitFor("pong from the mock");
    await term.answer("› ", "/exit\r");
    expect(await term.exit).toBe(0);
    expect(term.output()).not.toContain(KEY);
    expect(readEnvFile(join(home, "guppy.env")).values.GUPPY_API_KEY).toBe(KEY);
  });
});
