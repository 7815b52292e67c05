import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { GatewayChannel } from "../../src/channels/channel.js";
import {
  createTelegramChannel,
  type TelegramConfig,
} from "../../src/channels/telegram/create-telegram-channel.js";
import { telegram } from "../../src/channels/telegram/descriptor.js";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { tempHome } from "../helpers/run-cli.js";
import { startRuntime, type TestRuntime } from "../helpers/test-runtime.js";
import { startTelegramEmulator, type TelegramEmulator } from "./helpers/telegram-emulator.js";
import { until } from "./helpers/until.js";

const ANN = { id: 1001, name: "ann" };
const BOB = { id: 1002, name: "bob" };

/** "touch PATH" → a bash tool call `touch PATH` (asked for whatever tools were offered); else an echo. */
function script(request: ChatCompletionRequest): FixtureResponse {
  const last = lastMessage(request);
  if (last?.role === "tool")
    return { content: `Tool said: ${String(last.content).split("\n")[0]}` };
  const text = requestText({ ...request, messages: last ? [last] : [] });
  const touch = /touch (\S+)/.exec(text);
  if (touch) {
    return {
      toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: `touch ${touch[1]}` }) }],
    };
  }
  return { content: `You said: ${text}` };
}

/** The tool names offered in the first request that carried `text` (the prompt's run). */
function offeredTools(llm: MockLlm, text: string): string[] {
  const request = llm.requests().find((r) => requestText(r).includes(text));
  if (!request) throw new Error(`no request carried "${text}"`);
  return (request.tools ?? []).map((t) => t.function.name);
}

/** The inbox's accepted records of `userId` (`<home>/inbox.jsonl`: what the runs are given). */
function acceptedOf(home: string, userId: number): Array<Record<string, unknown>> {
  return readFileSync(join(home, "inbox.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((r) => r.userId === String(userId) && typeof r.text === "string");
}

describe("Telegram senders' roles (telegram-test-api + aimock)", () => {
  let llm: MockLlm;
  let tg: TelegramEmulator | undefined;
  let running: Array<{ channel: GatewayChannel<TelegramConfig>; runtime: TestRuntime }> = [];
  let cleanups: Array<() => void> = [];

  beforeAll(async () => {
    llm = await startMockLlm((request) => script(request));
  });
  afterAll(async () => {
    await llm.stop();
  });
  afterEach(async () => {
    for (const { channel, runtime } of running.reverse()) {
      await channel.stop();
      await runtime.stop();
    }
    running = [];
    await tg?.stop();
    tg = undefined;
    for (const cleanup of cleanups) cleanup();
    cleanups = [];
  });

  /** guppy serve's Telegram channel on `home`; `said`: the lines it puts on the terminal. */
  async function start(home: string, env: Record<string, string>, said: string[] = []) {
    tg ??= await startTelegramEmulator();
    const runtime = await startRuntime(
      llm,
      { TELEGRAM_BOT_TOKEN: tg.token, GUPPY_TELEGRAM_API_URL: tg.apiUrl, ...env },
      home,
    );
    const channel = createTelegramChannel(telegram, { editIntervalMs: 100, pollTimeoutSeconds: 1 });
    await channel.start({ ...runtime.context, say: (line) => said.push(line) });
    running.push({ channel, runtime });
    return runtime;
  }

  async function stopLast() {
    const last = running.pop();
    await last?.channel.stop();
    await last?.runtime.stop();
  }

  const answered = (user: { id: number }, text: string) =>
    until(`the answer to "${text}"`, () =>
      tg?.botMessages(user.id).find((m) => m.text.includes(text)),
    );

  it("a guest's prompt reaches the orchestrator as a guest's, an owner's as an owner's", async () => {
    const { home, cleanup } = tempHome();
    cleanups.push(cleanup);
    // Open channel: a stranger is a guest; an allowlisted user is an owner.
    await start(home, { GUPPY_ACCESS_POLICY: "open", GUPPY_ALLOWED_USERS: String(ANN.id) });
    await tg?.userSays(ANN, "hello from the owner");
    await tg?.userSays(BOB, "hello from a guest");
    await answered(ANN, "hello from the owner");
    await answered(BOB, "hello from a guest");
    const [owner] = acceptedOf(home, ANN.id);
    const [guest] = acceptedOf(home, BOB.id);
    expect(owner).toMatchObject({ text: "hello from the owner" });
    expect(owner).not.toHaveProperty("role");
    expect(guest).toMatchObject({ text: "hello from a guest", role: "guest" });
  });

  it("a guest is offered no bash, and a bash call the model makes anyway runs nothing; an owner is offered it and it runs", async () => {
    const { home, cleanup } = tempHome();
    cleanups.push(cleanup);
    await start(home, { GUPPY_ACCESS_POLICY: "open", GUPPY_ALLOWED_USERS: String(ANN.id) });
    const ownerFile = join(home, "owner-was-here");
    const guestFile = join(home, "guest-was-here");
    await tg?.userSays(ANN, `please touch ${ownerFile}`);
    await tg?.userSays(BOB, `please touch ${guestFile}`);
    await answered(ANN, "Tool said");
    await answered(BOB, "Tool said");
    const owner = offeredTools(llm, ownerFile);
    const guest = offeredTools(llm, guestFile);
    expect(owner).toContain("bash");
    expect(owner).toContain("write");
    // A guest's tools under guppy serve's runtime: reading, and searching its own thread's logs.
    expect(guest).toEqual(["read", "search_channel"]);
    expect(existsSync(ownerFile)).toBe(true);
    expect(existsSync(guestFile)).toBe(false);
  });

  it("users admitted before roles are owners, said once at the first start with roles", async () => {
    const { home, cleanup } = tempHome();
    cleanups.push(cleanup);
    const dir = join(home, "access", "telegram");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "approved.json"),
      JSON.stringify([
        { id: String(BOB.id), name: "bob", approvedAt: "2025-01-01", via: "pairing" },
      ]),
    );
    const env = { GUPPY_ACCESS_POLICY: "pairing", GUPPY_ALLOWED_USERS: String(ANN.id) };
    const said: string[] = [];
    await start(home, env, said);
    expect(said).toEqual([
      "telegram: users 1002 (bob), 1001 are owners (admitted before roles existed, or in GUPPY_ALLOWED_USERS); to make one a guest: guppy pairing role telegram <user> guest",
    ]);
    await tg?.userSays(BOB, "still an owner?");
    await answered(BOB, "still an owner?");
    expect(acceptedOf(home, BOB.id)[0]).not.toHaveProperty("role");
    await stopLast();

    const again: string[] = [];
    await start(home, env, again);
    expect(again).toEqual([]);
  });
});
