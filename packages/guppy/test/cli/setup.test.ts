import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Readable } from "node:stream";
import { readEnvFile } from "@guppy/core/config";
import { parse } from "jsonc-parser";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { editSettingsFile } from "../../src/commands/setup-write.js";
import {
  startTelegramEmulator,
  type TelegramEmulator,
} from "../channels/helpers/telegram-emulator.js";
import { freePort } from "../helpers/free-port.js";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

const EXISTING = `// my own note about this file
{
  "maxToolRounds": 7, // seven is plenty
  "apiKey": "an-old-key",
  "temperature": 0.3
}
`;

/**
 * In front of the mock (which records keys only as "[REDACTED]"): refuses, with 401, a request
 * whose key is not `key`, and passes the others on. `seen`: the keys it was given.
 */
async function startKeyGate(target: string, key: string) {
  const seen: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const auth = req.headers.authorization ?? "";
    seen.push(auth.replace(/^Bearer /, ""));
    if (auth !== `Bearer ${key}`) {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          error: { message: "Incorrect API key provided", type: "invalid_request_error" },
        }),
      );
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await fetch(`${target}${req.url}`, {
      method: req.method ?? "GET",
      headers: { "content-type": String(req.headers["content-type"] ?? "application/json") },
      ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
    });
    res.writeHead(answer.status, {
      "content-type": answer.headers.get("content-type") ?? "application/json",
    });
    if (answer.body) Readable.fromWeb(answer.body as never).pipe(res);
    else res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("guppy setup --non-interactive (against aimock)", { timeout: 90_000 }, () => {
  let llm: MockLlm;
  let gate: Awaited<ReturnType<typeof startKeyGate>>;
  let home: string;
  let cleanup: () => void;
  beforeAll(async () => {
    llm = await startMockLlm((request) =>
      request.model === "bad-model"
        ? { error: { message: "invalid x-api-key", type: "authentication_error" }, status: 401 }
        : { content: "pong from the mock" },
    );
    gate = await startKeyGate(llm.url, "sk-setup-123");
  });
  afterAll(async () => {
    await gate.stop();
    await llm.stop();
  });
  beforeEach(() => {
    ({ home, cleanup } = tempHome());
    writeFileSync(join(home, "settings.json"), EXISTING);
  });
  afterEach(() => cleanup());

  const setup = (args: string[]) =>
    runCli(["setup", "--home", home, "--non-interactive", ...args], { timeoutMs: 40_000 });
  const settingsText = () => readFileSync(join(home, "settings.json"), "utf8");
  it("tests the model, writes settings.json (keeping its comments and other keys) and the key to guppy.env; guppy chat then answers", async () => {
    const r = await setup([
      "--base-url",
      `${gate.url}/v1`,
      "--model",
      "openai/mock-gpt",
      "--api-key",
      "sk-setup-123",
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("✓ openai/mock-gpt answered");
    // The test request went through the gate that wants that key.
    expect(gate.seen).toEqual(["sk-setup-123"]);

    const text = settingsText();
    expect(text).toContain("// my own note about this file");
    expect(text).toContain("// seven is plenty");
    const settings = parse(text, [], { allowTrailingComma: true });
    expect(settings).toEqual({
      maxToolRounds: 7,
      temperature: 0.3,
      model: "openai/mock-gpt",
      baseUrl: `${gate.url}/v1`,
      api: "openai-completions",
    });
    expect(text).not.toContain("sk-setup-123");
    const envPath = join(home, "guppy.env");
    expect(readEnvFile(envPath).values).toEqual({ GUPPY_API_KEY: "sk-setup-123" });
    expect(statSync(envPath).mode & 0o777).toBe(0o600);

    // The chat with that home (and the key as guppy.env has it) answers through the mock.
    const key = readEnvFile(envPath).values.GUPPY_API_KEY as string;
    const chat = await runCli(["chat", "--home", home, "-m", "ping"], {
      env: cleanEnv({ GUPPY_API_KEY: key, GUPPY_SANDBOX: "host" }),
      timeoutMs: 40_000,
    });
    expect(chat.stderr).toBe("");
    expect(chat.stdout).toBe("pong from the mock\n");
    expect(gate.seen).toEqual(["sk-setup-123", "sk-setup-123"]);
  });

  it("names the URL, the status and the provider's message for a refused key, exits 1 and writes nothing", async () => {
    const r = await setup([
      "--base-url",
      `${gate.url}/v1`,
      "--model",
      "openai/mock-gpt",
      "--api-key",
      "sk-wrong",
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${gate.url}/v1 answered: 401`);
    expect(r.stderr).toContain("Incorrect API key provided");
    expect(r.stderr).toContain("the key was refused");
    expect(r.stderr).toContain("nothing was written");
    expect(settingsText()).toBe(EXISTING);
    expect(existsSync(join(home, "guppy.env"))).toBe(false);
  });

  it("names an unreachable endpoint, exits 1 and writes nothing", async () => {
    const port = await freePort();
    const r = await setup([
      "--base-url",
      `http://127.0.0.1:${port}/v1`,
      "--model",
      "m",
      "--api-key",
      "k",
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot reach the model at http://127.0.0.1:${port}/v1`);
    expect(settingsText()).toBe(EXISTING);
    expect(existsSync(join(home, "guppy.env"))).toBe(false);
  });

  it("suggests the catalog's closest id for a mistyped model and writes nothing", async () => {
    const r = await setup(["--provider", "anthropic", "--model", "claude-sonet-4-5"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('"claude-sonet-4-5" is not in pi-ai\'s catalog for anthropic');
    expect(r.stderr).toContain('did you mean "claude-sonnet-4-5"');
    expect(settingsText()).toBe(EXISTING);
  });

  it("asks for what it cannot guess: the provider, then the key", async () => {
    const none = await setup([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("needs the provider: --provider NAME");
    const noKey = await setup(["--provider", "openai"]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("give --api-key KEY, or set OPENAI_API_KEY");
    const typo = await setup(["--provider", "antropic"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('unknown provider "antropic" (did you mean "anthropic"?)');
    expect(settingsText()).toBe(EXISTING);
  });

  it("takes a subscription instead of a key only once signed in (guppy login), and --login only for one", async () => {
    const copilot = await setup(["--provider", "github-copilot"]);
    expect(copilot.code).toBe(2);
    expect(copilot.stderr).toContain(
      "not signed in to github-copilot: run guppy login github-copilot first",
    );
    const claude = await setup(["--provider", "anthropic", "--login"]);
    expect(claude.stderr).toContain("not signed in to anthropic: run guppy login anthropic first");
    const notOne = await setup(["--provider", "openai", "--login"]);
    expect(notOne.code).toBe(2);
    expect(notOne.stderr).toContain(
      "--login signs in to a subscription: anthropic, openai-codex, github-copilot, not openai",
    );
    expect(settingsText()).toBe(EXISTING);
  });

  describe("a Telegram bot (telegram-test-api)", () => {
    let telegram: TelegramEmulator;
    beforeAll(async () => {
      telegram = await startTelegramEmulator();
    });
    afterAll(() => telegram.stop());
    const withBot = (token: string) =>
      runCli(
        [
          "setup",
          "--home",
          home,
          "--non-interactive",
          "--base-url",
          `${llm.url}/v1`,
          "--model",
          "openai/mock-gpt",
          "--telegram-bot-token",
          token,
        ],
        { env: cleanEnv({ GUPPY_TELEGRAM_API_URL: telegram.apiUrl }), timeoutMs: 40_000 },
      );

    it("checks the token with getMe, stores it in guppy.env and prints the pairing steps", async () => {
      const r = await withBot(telegram.token);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("✓ Telegram bot @TestNameBot");
      expect(r.stdout).toContain("send /start to @TestNameBot");
      expect(r.stdout).toContain("guppy pairing list telegram");
      expect(r.stdout).toContain("guppy pairing approve telegram <code> --owner");
      expect(telegram.calls.some((c) => c.method === "getMe")).toBe(true);
      expect(readEnvFile(join(home, "guppy.env")).values.TELEGRAM_BOT_TOKEN).toBe(telegram.token);
    });

    it("refuses a token getMe rejects, exits 1 and writes nothing", async () => {
      telegram.failNext({ method: "getMe", times: 1, status: 401, description: "Unauthorized" });
      const r = await withBot("999:wrong");
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("answered getMe: 401 Unauthorized");
      expect(r.stderr).toContain("the bot token was refused");
      expect(settingsText()).toBe(EXISTING);
      expect(existsSync(join(home, "guppy.env"))).toBe(false);
    });
  });
});

describe("settings.json edits (setup-write.ts)", () => {
  let home: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ home, cleanup } = tempHome());
  });
  afterEach(() => cleanup());

  it("removes a key without the comment of the line before, and sets others in place", () => {
    writeFileSync(
      join(home, "settings.json"),
      '{\n  // the model\n  "model": "a/b",\n  "maxTokens": 100, // small\n  "baseUrl": "http://x/v1" // old endpoint\n}\n',
    );
    const changed = editSettingsFile(home, {
      model: "anthropic/claude-sonnet-4-5",
      baseUrl: undefined,
    });
    expect(changed).toEqual(["model", "baseUrl"]);
    const text = readFileSync(join(home, "settings.json"), "utf8");
    expect(text).toContain("// the model");
    expect(text).toContain('"maxTokens": 100, // small');
    expect(parse(text, [], { allowTrailingComma: true })).toEqual({
      model: "anthropic/claude-sonnet-4-5",
      maxTokens: 100,
    });
  });

  it("creates a missing settings.json from guppy init's commented template, mode 600", () => {
    editSettingsFile(home, { model: "openai/gpt-5-mini" });
    const path = join(home, "settings.json");
    const text = readFileSync(path, "utf8");
    expect(text).toContain("// guppy settings. Precedence");
    expect(parse(text, [], { allowTrailingComma: true }).model).toBe("openai/gpt-5-mini");
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});
