import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { tempHome } from "../helpers/run-cli.js";
import { type ServeProcess, startServe, threadMessages } from "../serve/serve-harness.js";
import { startTelegramEmulator, type TelegramEmulator } from "./helpers/telegram-emulator.js";
import { until } from "./helpers/until.js";

const ANN = { id: 1001, name: "ann" };
/** The thread of Ann's private chat: a Telegram chat's only thread. */
const ANN_THREAD = `telegram:${ANN.id}:default`;

const userTexts = (request: ChatCompletionRequest) =>
  request.messages
    .filter((m) => m.role === "user")
    .map((m) => requestText({ ...request, messages: [m] }));

/**
 * "tell-channel CHANNEL TEXT": send_message TEXT to a new thread in CHANNEL (adapter:channel);
 * a tool result: "tool done"; anything else: "You said: <the last user message>".
 */
function script(request: ChatCompletionRequest): FixtureResponse {
  if (lastMessage(request)?.role === "tool") return { content: "tool done" };
  const text = userTexts(request).at(-1) ?? "";
  const tell = /tell-channel (\S+) (\S+)/.exec(text);
  if (tell) {
    return {
      toolCalls: [
        { name: "send_message", arguments: JSON.stringify({ channel: tell[1], text: tell[2] }) },
      ],
    };
  }
  return { content: `You said: ${text}` };
}

/**
 * Channel targets end to end through `guppy serve`, Telegram emulated (telegram-test-api) and the
 * model mocked (aimock): an event file with `adapterId` + `channelId` opens a thread in that chat
 * through `sendToChannel`, and `send_message` with `channel: "adapter:channel"` posts there. Each
 * reaches the chat, the thread's log, and the thread's context.
 */
describe("channel targets through guppy serve (Telegram)", { timeout: 90_000 }, () => {
  let llm: MockLlm;
  let tg: TelegramEmulator;
  let serve: ServeProcess | undefined;
  /** A home per test: a new emulator numbers its messages from 1 again. */
  const homes: Array<ReturnType<typeof tempHome>> = [];
  let home = "";

  beforeAll(async () => {
    llm = await startMockLlm((request) => script(request));
  });
  afterEach(async () => {
    serve?.child.kill("SIGTERM");
    await serve?.exited;
    serve = undefined;
    await tg?.stop();
  });
  afterAll(async () => {
    await llm.stop();
    for (const h of homes) h.cleanup();
  });

  const start = async () => {
    const h = tempHome();
    homes.push(h);
    home = h.home;
    tg = await startTelegramEmulator();
    serve = await startServe(home, {
      ...llm.env("openai-completions"),
      TELEGRAM_BOT_TOKEN: tg.token,
      GUPPY_TELEGRAM_API_URL: tg.apiUrl,
      GUPPY_ALLOWED_USERS: String(ANN.id),
      GUPPY_SANDBOX: "host",
    });
    // Ann talks to the bot first, as a Telegram bot can write only to chats that did.
    await tg.userSays(ANN, "hello bot");
    await until("the first answer", () =>
      tg.botMessages(ANN.id).find((m) => m.text.includes("hello bot")),
    );
    return serve;
  };
  const failure = (s: ServeProcess) => `\nstdout: ${s.stdout()}\nstderr: ${s.stderr()}`;

  it("an event file with adapterId + channelId fires into that chat: posted there, answered, in the thread's log and context", async () => {
    const s = await start();
    mkdirSync(join(home, "events"), { recursive: true });
    writeFileSync(
      join(home, "events", "ann-ping.json"),
      JSON.stringify({
        type: "immediate",
        adapterId: "telegram",
        channelId: String(ANN.id),
        text: "event-ping-4711",
      }),
    );
    // The prompt reaches the model in the chat's thread, and its answer reaches the chat.
    const answer = await until(
      "the event's answer in Ann's chat",
      () => tg.botMessages(ANN.id).find((m) => m.text.includes("You said") && /4711/.test(m.text)),
      30_000,
    ).catch((e) => {
      throw new Error(`${e}${failure(s)}\n${JSON.stringify(tg.botMessages(ANN.id))}`);
    });
    expect(answer.text).toContain("event\\-ping\\-4711");
    // The event's text was posted into the chat as the thread's opening.
    expect(tg.botMessages(ANN.id).some((m) => m.text.includes("event\\-ping\\-4711"))).toBe(true);
    const request = llm.requests().find((r) => userTexts(r).at(-1)?.includes("event-ping-4711"));
    expect(request).toBeDefined();
    // The same thread as Ann's messages: her earlier message is in the event run's context.
    expect(userTexts(request as ChatCompletionRequest).join("\n")).toContain("hello bot");
    const log = await threadMessages(s, ANN_THREAD);
    expect(log.some((m) => !m.is_bot && m.text.includes("event-ping-4711"))).toBe(true);
    expect(log.some((m) => m.is_bot && m.text.includes("You said") && /4711/.test(m.text))).toBe(
      true,
    );
    expect(s.stderr()).not.toMatch(/sendToChannel .* failed|not queued/);
  });

  it('send_message with channel "telegram:<chat>" posts there, and the chat\'s thread knows it at its next run', async () => {
    const s = await start();
    const r = await s.api("/v1/threads/http:api:boss/messages", {
      method: "POST",
      body: JSON.stringify({ text: `tell-channel telegram:${ANN.id} note-for-ann-5150` }),
    });
    expect(r.status).toBe(202);
    await until(
      "the note in Ann's chat",
      () => tg.botMessages(ANN.id).find((m) => m.text.includes("note\\-for\\-ann\\-5150")),
      30_000,
    ).catch((e) => {
      throw new Error(`${e}${failure(s)}`);
    });
    // The tool said it was sent (the run went on to its answer), and the chat's log has it.
    const sender = await until(
      "the sender's answer",
      () => llm.requests().find((q) => lastMessage(q)?.role === "tool"),
      30_000,
    );
    expect(requestText({ ...sender, messages: [lastMessage(sender)!] })).toMatch(/Sent to/);
    const log = await threadMessages(s, ANN_THREAD);
    expect(log).toContainEqual(
      expect.objectContaining({ is_bot: true, text: "note-for-ann-5150" }),
    );

    // Ann's next message: its run's context holds the note, marked as sent from the boss thread.
    await tg.userSays(ANN, "what did you send me?");
    await until("the answer to Ann's question", () =>
      tg.botMessages(ANN.id).find((m) => m.text.includes("what did you send me")),
    );
    const asked = llm.requests().find((q) => userTexts(q).at(-1) === "what did you send me?");
    const context = userTexts(asked as ChatCompletionRequest).join("\n");
    expect(context).toContain("note-for-ann-5150");
    expect(context).toContain("from thread http:api:boss");
  });
});
