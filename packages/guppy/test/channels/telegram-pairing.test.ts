import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { GatewayChannel } from "../../src/channels/channel.js";
import {
  createTelegramChannel,
  type TelegramConfig,
} from "../../src/channels/telegram/create-telegram-channel.js";
import { telegram } from "../../src/channels/telegram/descriptor.js";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";
import { startRuntime, type TestRuntime } from "../helpers/test-runtime.js";
import { type ServeProcess, startServe } from "../serve/serve-harness.js";
import { startTelegramEmulator, type TelegramEmulator } from "./helpers/telegram-emulator.js";
import { until } from "./helpers/until.js";

const ANN = { id: 1001, name: "ann" };
const EVE = { id: 6666, name: "eve" };

/** A MarkdownV2 message's text without its escapes (`\(` → `(`). */
const unescaped = (text: string) => text.replace(/\\(.)/g, "$1");

const pairingCode = (text: string | undefined) =>
  /Pairing code: ([A-Z2-9]{8})/.exec(text ?? "")?.[1];

describe("pairing that tells people (telegram-test-api + aimock)", () => {
  let llm: MockLlm;
  let tg: TelegramEmulator | undefined;
  let cleanups: Array<() => Promise<void> | void> = [];

  beforeAll(async () => {
    llm = await startMockLlm((request) => {
      const last = lastMessage(request);
      return { content: `You said: ${requestText({ ...request, messages: last ? [last] : [] })}` };
    });
  });
  afterAll(async () => {
    await llm.stop();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    cleanups = [];
    await tg?.stop();
    tg = undefined;
  });

  const cli = (home: string, ...args: string[]) =>
    runCli(args, { env: cleanEnv({ GUPPY_HOME: home }) });

  const botSaid = (user: { id: number }, text: string) =>
    until(`the bot's message to ${user.id} with "${text}"`, () =>
      tg?.botMessages(user.id).find((m) => m.text.includes(text)),
    );

  it("guppy serve shows a request on its terminal and DMs the owner; approval is told to the user; revoke refuses their next message at zero LLM requests", async () => {
    tg = await startTelegramEmulator();
    const { home, cleanup } = tempHome();
    let serve: ServeProcess | undefined;
    cleanups.push(async () => {
      serve?.child.kill("SIGTERM");
      await serve?.exited;
      cleanup();
    });
    serve = await startServe(home, {
      ...llm.env("openai-completions"),
      TELEGRAM_BOT_TOKEN: tg.token,
      GUPPY_TELEGRAM_API_URL: tg.apiUrl,
      GUPPY_ACCESS_POLICY: "pairing",
      GUPPY_ALLOWED_USERS: String(ANN.id),
    });
    const before = llm.requests().length;

    await tg.userSays(EVE, "hello, who are you?");
    const code = pairingCode((await botSaid(EVE, "Pairing code")).text) as string;
    expect(code).toMatch(/^[A-Z2-9]{8}$/);
    // On the gateway's terminal: who, where, the code and the command that approves it.
    const line = await until("the request on guppy serve's output", () =>
      serve
        ?.stdout()
        .split("\n")
        .find((l) => l.includes(`code ${code}`)),
    );
    expect(line).toContain("eve (6666)");
    expect(line).toContain("telegram");
    expect(line).toContain(`guppy pairing approve telegram ${code}`);
    // And to the channel's owner, in their private chat.
    const dm = unescaped((await botSaid(ANN, code)).text);
    expect(dm).toContain("Pairing request on telegram from eve (6666)");
    expect(dm).toContain(`guppy pairing approve telegram ${code}`);
    expect(llm.requests().length).toBe(before);

    const approve = await cli(home, "pairing", "approve", "telegram", code);
    expect(approve.code).toBe(0);
    expect(approve.stdout).toContain("guppy serve tells them so on telegram");
    const told = await botSaid(EVE, "approved");
    expect(told.text).toContain("you can talk to me now");
    // Told once: the welcome is gone from the home.
    await until("the welcome file removed", () =>
      readdirSync(join(home, "access", "telegram", "welcome")).length === 0 ? true : undefined,
    );

    await tg.userSays(EVE, "hello again");
    await botSaid(EVE, "You said: hello again");

    const revoke = await cli(home, "pairing", "revoke", "telegram", String(EVE.id));
    expect(revoke.code).toBe(0);
    expect(revoke.stdout).toContain("Revoked eve (6666) on telegram (was guest)");
    const list = await cli(home, "pairing", "list", "telegram");
    expect(list.stdout).not.toContain("6666");

    const asked = llm.requests().length;
    const seen = tg.botMessages(EVE.id).length;
    await tg.userSays(EVE, "are you still there?");
    // Refused like any stranger: a new pairing code, and no request to the model.
    const again = await until("the answer to Eve's message after revoke", () =>
      tg
        ?.botMessages(EVE.id)
        .slice(seen)
        .find((m) => m.text.includes("Pairing code")),
    );
    expect(pairingCode(again.text)).not.toBe(code);
    expect(llm.requests().length).toBe(asked);
    expect(tg.botMessages(EVE.id).slice(seen)).toHaveLength(1);
    expect(tg.botMessages(EVE.id).some((m) => m.text.includes("are you still there"))).toBe(false);
  });

  /** guppy serve's Telegram channel in process, on `home`. */
  async function start(home: string, env: Record<string, string>, said: string[] = []) {
    tg ??= await startTelegramEmulator();
    const runtime: TestRuntime = await startRuntime(
      llm,
      { TELEGRAM_BOT_TOKEN: tg.token, GUPPY_TELEGRAM_API_URL: tg.apiUrl, ...env },
      home,
    );
    const channel: GatewayChannel<TelegramConfig> = createTelegramChannel(telegram, {
      editIntervalMs: 100,
      pollTimeoutSeconds: 1,
    });
    await channel.start({ ...runtime.context, say: (line) => said.push(line) });
    const stop = async () => {
      await channel.stop();
      await runtime.stop();
    };
    cleanups.push(stop);
    return { runtime, stop };
  }

  it("a user approved while the gateway is down is told at its next start, once", async () => {
    const { home, cleanup } = tempHome();
    cleanups.push(cleanup);
    const first = await start(home, { GUPPY_ACCESS_POLICY: "pairing" });
    await tg?.userSays(EVE, "let me in");
    const code = pairingCode((await botSaid(EVE, "Pairing code")).text) as string;
    await first.stop();

    const approve = await cli(home, "pairing", "approve", "telegram", code, "--owner");
    expect(approve.code).toBe(0);
    expect(tg?.botMessages(EVE.id).some((m) => m.text.includes("approved"))).toBe(false);

    const second = await start(home, { GUPPY_ACCESS_POLICY: "pairing" });
    const told = await botSaid(EVE, "approved");
    expect(told.text).toContain("as an owner");
    await second.stop();
    // The third start has nothing left to tell.
    const count = tg?.botMessages(EVE.id).length;
    await start(home, { GUPPY_ACCESS_POLICY: "pairing" });
    await new Promise((r) => setTimeout(r, 500));
    expect(tg?.botMessages(EVE.id).length).toBe(count);
  });

  it("a request with no owner paired is still shown on the terminal; an approval revoked before it is told is not told", async () => {
    const { home, cleanup } = tempHome();
    cleanups.push(cleanup);
    const said: string[] = [];
    const first = await start(home, { GUPPY_ACCESS_POLICY: "pairing" }, said);
    await tg?.userSays(EVE, "let me in");
    const code = pairingCode((await botSaid(EVE, "Pairing code")).text) as string;
    expect(said).toEqual([
      `pairing: eve (6666) asks to talk to guppy on telegram, code ${code}; to let them in: guppy pairing approve telegram ${code} (--owner for every tool)`,
    ]);
    await first.stop();

    expect((await cli(home, "pairing", "approve", "telegram", code)).code).toBe(0);
    expect((await cli(home, "pairing", "revoke", "telegram", String(EVE.id))).code).toBe(0);
    expect(existsSync(join(home, "access", "telegram", "welcome", `${EVE.id}.json`))).toBe(false);
    await start(home, { GUPPY_ACCESS_POLICY: "pairing" });
    await new Promise((r) => setTimeout(r, 500));
    expect(tg?.botMessages(EVE.id).some((m) => m.text.includes("approved"))).toBe(false);
  });
});
