import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
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
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";
import { startRuntime, type TestRuntime } from "../helpers/test-runtime.js";
import { type ServeProcess, startServe } from "../serve/serve-harness.js";
import {
  type BotMessage,
  REJECT_FORMATTING_MARKER,
  startTelegramEmulator,
  type TelegramEmulator,
} from "./helpers/telegram-emulator.js";
import { until } from "./helpers/until.js";

const ANN = { id: 1001, name: "ann" };
const BOB = { id: 1002, name: "bob" };
const EVE = { id: 6666, name: "eve" };

const CODE_LINES = Array.from(
  { length: 150 },
  (_, i) => `console.log("line ${String(i).padStart(3, "0")}");`,
);
const LONG_REPLY = [
  ...Array.from(
    { length: 8 },
    (_, i) => `Paragraph ${i}: ${"lorem ipsum dolor sit amet ".repeat(12)}`,
  ),
  `\`\`\`js\n${CODE_LINES.join("\n")}\n\`\`\``,
  "The end.",
].join("\n\n");
const MANY_WORDS = `The answer: ${Array.from({ length: 150 }, (_, i) => `w${i}`).join(" ")} THE-END`;

/**
 * The LLM mock: "run-bash X" → bash `echo X`; "long-task" → bash `sleep 30`; "long-reply" → 6,000+
 * chars; "make-report" → write report.txt, then upload it.
 */
function script(request: ChatCompletionRequest): FixtureResponse {
  const last = lastMessage(request);
  const toolText = last?.role === "tool" ? String(last.content) : "";
  if (toolText.startsWith("Wrote"))
    return {
      toolCalls: [
        {
          name: "upload",
          arguments: JSON.stringify({ path: "report.txt", comment: "your report" }),
        },
      ],
    };
  if (toolText.startsWith("Uploaded")) return { content: "Sent you the report." };
  if (last?.role === "tool") return { content: `Tool said: ${toolText.split("\n")[0]}` };
  const text = requestText({ ...request, messages: last ? [last] : [] });
  const bash = /run-bash (\S+)/.exec(text);
  if (bash)
    return {
      toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: `echo ${bash[1]}` }) }],
    };
  if (text.includes("long-task"))
    return { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: "sleep 30" }) }] };
  if (text.includes("long-reply")) return { content: LONG_REPLY };
  if (text.includes("many-words")) return { content: MANY_WORDS };
  if (text.includes("make-report"))
    return {
      toolCalls: [
        {
          name: "write",
          arguments: JSON.stringify({ path: "report.txt", content: "report-body 42" }),
        },
      ],
    };
  if (text.includes("broken-format"))
    return { content: `Here *is* ${REJECT_FORMATTING_MARKER} [text` };
  return { content: `You said: ${text}` };
}

describe("Telegram end to end (telegram-test-api + aimock, long polling)", () => {
  let llm: MockLlm;
  let tg: TelegramEmulator;
  let runtime: TestRuntime;
  let channel: GatewayChannel<TelegramConfig>;

  beforeAll(async () => {
    llm = await startMockLlm((request) => script(request));
  });
  afterAll(async () => {
    await llm.stop();
  });
  afterEach(async () => {
    await channel?.stop();
    await runtime?.stop();
    await tg?.stop();
  });

  async function start(env: Record<string, string> = {}) {
    tg = await startTelegramEmulator();
    runtime = await startRuntime(llm, {
      TELEGRAM_BOT_TOKEN: tg.token,
      GUPPY_TELEGRAM_API_URL: tg.apiUrl,
      ...env,
    });
    channel = createTelegramChannel(telegram, { editIntervalMs: 100, pollTimeoutSeconds: 2 });
    await channel.start(runtime.context);
  }

  /** Waits until the chat has `count` bot messages and none changes for a moment; returns them. */
  async function settled(chatId: number, count: number): Promise<BotMessage[]> {
    let last = "";
    let stableSince = Date.now();
    return until(`${count} bot messages in chat ${chatId}`, () => {
      const messages = tg.botMessages(chatId);
      const now = JSON.stringify(messages);
      if (now !== last) {
        last = now;
        stableSince = Date.now();
        return undefined;
      }
      return messages.length >= count && Date.now() - stableSince > 400 ? messages : undefined;
    });
  }

  it("answers an allowed user with a reply produced through a tool call, and registers the commands", async () => {
    await start({ GUPPY_ALLOWED_USERS: String(ANN.id) });
    expect(tg.commands()?.map((c) => c.command)).toEqual([
      "start",
      "new",
      "status",
      "stop",
      "steer",
      "compact",
      "help",
    ]);
    await tg.userSays(ANN, "please run-bash telegram-tool-ok");
    const [reply] = await settled(ANN.id, 1);
    expect(reply?.text).toContain("Tool said: telegram\\-tool\\-ok");
    expect(reply?.parseMode).toBe("MarkdownV2");
    expect(tg.chatActions.some((a) => a.chatId === String(ANN.id) && a.action === "typing")).toBe(
      true,
    );
    // Long polling: a handful of getUpdates calls, not a spinning client.
    expect(tg.getUpdatesCalls()).toBeLessThan(30);
  });

  it("gives an unknown user only a pairing code (zero LLM requests); after approval the next message is answered", async () => {
    await start();
    const before = llm.requests().length;
    await tg.userSays(EVE, "hello, who are you?");
    const [pairing] = await settled(EVE.id, 1);
    const code = /Pairing code: ([A-Z2-9]{8})/.exec(pairing?.text ?? "")?.[1];
    expect(code).toBeDefined();
    expect(tg.botMessages(EVE.id)).toHaveLength(1);
    expect(llm.requests().length).toBe(before);

    // As an owner: a guest's runs get no bash.
    const approve = await runCli(["pairing", "approve", "telegram", code as string, "--owner"], {
      env: cleanEnv({ GUPPY_HOME: runtime.home }),
    });
    expect(approve.code).toBe(0);
    // Told of the approval by the running gateway, then answered.
    const [, told] = await settled(EVE.id, 2);
    expect(told?.text).toContain("approved as an owner");
    await tg.userSays(EVE, "now run-bash paired-ok");
    const messages = await settled(EVE.id, 3);
    expect(messages[2]?.text).toContain("Tool said: paired\\-ok");
  });

  it("shows typing only to users it answers: not to strangers under allowlist, to a user once admitted by invite", async () => {
    await start({ GUPPY_ACCESS_POLICY: "allowlist", GUPPY_ALLOWED_USERS: String(ANN.id) });
    const typingFor = (user: { id: number }) =>
      tg.chatActions.filter((a) => a.chatId === String(user.id) && a.action === "typing").length;
    await tg.userSays(EVE, "hello?");
    await tg.userSays(ANN, "hello from ann");
    await settled(ANN.id, 1);
    // Eve's message reached the access check (refused and logged) without a typing indicator.
    const refusals = () =>
      readFileSync(join(runtime.home, "access", "refusals.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { userId: string; reason: string });
    expect(refusals()).toContainEqual(
      expect.objectContaining({ userId: String(EVE.id), reason: "not-allowlisted" }),
    );
    expect(typingFor(ANN)).toBeGreaterThan(0);
    expect(typingFor(EVE)).toBe(0);

    const invite = await runCli(["invite", "create", "telegram"], {
      env: cleanEnv({ GUPPY_HOME: runtime.home, TELEGRAM_BOT_TOKEN: tg.token }),
    });
    const code = invite.stdout.split("\n")[0] as string;
    await tg.userSays(EVE, `/start ${code}`);
    await settled(EVE.id, 1);
    const before = typingFor(EVE);
    await tg.userSays(EVE, "now I am in");
    await until("Eve's answer", () =>
      tg.botMessages(EVE.id).find((m) => m.text.includes("now I am in")),
    );
    expect(typingFor(EVE)).toBeGreaterThan(before);
  });

  it("shows typing to no one under the disabled policy", async () => {
    await start({ GUPPY_ACCESS_POLICY: "disabled", GUPPY_ALLOWED_USERS: String(ANN.id) });
    await tg.userSays(ANN, "anyone there?");
    await until("the refusal", () => {
      try {
        return readFileSync(join(runtime.home, "access", "refusals.jsonl"), "utf8").includes(
          String(ANN.id),
        );
      } catch {
        return false;
      }
    });
    // A typing indicator would have been sent as the message arrived, before the refusal.
    await new Promise((r) => setTimeout(r, 500));
    expect(tg.chatActions.filter((a) => a.chatId === String(ANN.id))).toEqual([]);
    expect(tg.botMessages(ANN.id)).toEqual([]);
  });

  it("keeps answering approved users when a hand edit breaks approved.json while it runs", async () => {
    const approvedAt = new Date().toISOString();
    await start({ GUPPY_ACCESS_POLICY: "allowlist" });
    const file = join(runtime.home, "access", "telegram", "approved.json");
    mkdirSync(join(runtime.home, "access", "telegram"), { recursive: true });
    writeFileSync(file, JSON.stringify([{ id: String(ANN.id), approvedAt, via: "invite" }]));
    await tg.userSays(ANN, "first question");
    await settled(ANN.id, 1);
    // A trailing comma is fine (JSONC, like settings.json); a missing bracket is not.
    writeFileSync(
      file,
      `[\n  ${JSON.stringify({ id: String(ANN.id), approvedAt, via: "invite" })},\n`,
    );
    await tg.userSays(ANN, "second question");
    const messages = await settled(ANN.id, 2);
    expect(messages[1]?.text).toContain("second question");
  });

  it("splits a 6,000-character reply with a code block into messages of at most 4,096 characters, the block whole", async () => {
    await start({ GUPPY_ACCESS_POLICY: "open" });
    await tg.userSays(ANN, "long-reply please");
    const messages = await until("the split reply", () => {
      const m = tg.botMessages(ANN.id);
      return m.length >= 2 && m[m.length - 1]?.text.includes("The end") ? m : undefined;
    });
    expect(LONG_REPLY.length).toBeGreaterThan(6000);
    expect(tg.rejected.filter((r) => r.reason === "too long")).toEqual([]);
    for (const m of messages) expect(m.text.length).toBeLessThanOrEqual(4096);
    const withCode = messages.filter((m) => m.text.includes("line 000"));
    expect(withCode).toHaveLength(1);
    expect(withCode[0]?.text).toContain("line 149");
    expect(withCode[0]?.text.match(/```/g)).toHaveLength(2);
    const all = messages.map((m) => m.text).join("\n");
    for (let i = 0; i < 8; i++) expect(all).toContain(`Paragraph ${i}:`);
  });

  it("delivers the whole reply when a send and an edit fail once with 5xx", async () => {
    await start({ GUPPY_ACCESS_POLICY: "open" });
    tg.failNext({
      method: "sendMessage",
      times: 1,
      status: 502,
      description: "Bad Gateway",
      chatId: ANN.id,
    });
    tg.failNext({
      method: "editMessageText",
      times: 1,
      status: 500,
      description: "Internal Server Error",
      chatId: ANN.id,
    });
    await tg.userSays(ANN, "many-words please");
    const messages = await until("the whole reply", () => {
      const m = tg.botMessages(ANN.id);
      return m.at(-1)?.text.endsWith("THE\\-END") ? m : undefined;
    });
    expect(tg.calls.filter((c) => c.failedWith).map((c) => c.method)).toEqual([
      "sendMessage",
      "editMessageText",
    ]);
    expect(messages.map((m) => m.text)).toEqual([MANY_WORDS.replace("-", "\\-")]);
  });

  it("posts the rest of a reply as a new message when Telegram refuses to edit it", async () => {
    await start({ GUPPY_ACCESS_POLICY: "open" });
    tg.failNext({
      method: "editMessageText",
      times: 1,
      status: 400,
      description: "Bad Request: message can't be edited",
      chatId: BOB.id,
    });
    await tg.userSays(BOB, "many-words please");
    const messages = await until("the end of the reply", () => {
      const m = tg.botMessages(BOB.id);
      return m.at(-1)?.text.endsWith("THE\\-END") ? m : undefined;
    });
    expect(tg.calls.some((c) => c.method === "editMessageText" && c.failedWith === 400)).toBe(true);
    expect(messages.length).toBe(2);
    // The first message keeps what it showed; the second holds the rest: every word once.
    const words = messages
      .map((m) => m.text)
      .join(" ")
      .split(/\s+/);
    for (let i = 0; i < 150; i++) expect(words.filter((w) => w === `w${i}`)).toHaveLength(1);
  });

  it("re-sends as plain text when Telegram rejects the formatting", async () => {
    await start({ GUPPY_ACCESS_POLICY: "open" });
    await tg.userSays(BOB, "broken-format");
    const [reply] = await settled(BOB.id, 1);
    expect(tg.rejected.some((r) => r.reason === "entities")).toBe(true);
    expect(reply?.parseMode).toBeUndefined();
    // The words arrive intact; the Markdown markers are dropped in the plain-text version.
    expect(reply?.text).toBe(`Here is ${REJECT_FORMATTING_MARKER} [text`);
  });

  it("/stop aborts a long tool run", async () => {
    // An owner: a guest's runs get no bash.
    await start({ GUPPY_ACCESS_POLICY: "open", GUPPY_ALLOWED_USERS: String(ANN.id) });
    await tg.userSays(ANN, "start the long-task");
    const threadId = `telegram:${ANN.id}`;
    await until(
      "the tool to start",
      () => runtime.orchestrator.status(threadId).state === "running",
    );
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    await tg.userSays(ANN, "/stop");
    await until(
      "the run to end",
      () => runtime.orchestrator.status(threadId).state !== "running",
      10_000,
    );
    expect(Date.now() - started).toBeLessThan(8000);
    const texts = (await settled(ANN.id, 2)).map((m) => m.text);
    expect(texts).toContain("Stopping\\.");
    expect(texts.some((t) => t.includes("Stopped"))).toBe(true);
  });

  it("keeps two users' contexts apart", async () => {
    await start({ GUPPY_ACCESS_POLICY: "open" });
    await tg.userSays(ANN, "my secret word is apricot");
    await settled(ANN.id, 1);
    await tg.userSays(BOB, "my secret word is blueberry");
    await settled(BOB.id, 1);
    const before = llm.requests().length;
    await tg.userSays(BOB, "what is my secret word?");
    await settled(BOB.id, 2);
    const seen = requestText(llm.requests()[before] as ChatCompletionRequest);
    expect(seen).toContain("blueberry");
    expect(seen).not.toContain("apricot");
  });
});

describe("Telegram through guppy serve", () => {
  it("starts the Telegram channel from TELEGRAM_BOT_TOKEN, answers through a tool call, uploads a file", async () => {
    const llm = await startMockLlm((request) => script(request));
    const tg = await startTelegramEmulator();
    const { home, cleanup } = tempHome();
    let serve: ServeProcess | undefined;
    try {
      serve = await startServe(home, {
        ...llm.env("openai-completions"),
        TELEGRAM_BOT_TOKEN: tg.token,
        GUPPY_TELEGRAM_API_URL: tg.apiUrl,
        GUPPY_ALLOWED_USERS: String(ANN.id),
      });
      expect(serve.stdout()).toMatch(/channels http, telegram/);
      await tg.userSays(ANN, "run-bash via-serve");
      const reply = await until("the reply through guppy serve", () =>
        tg.botMessages(ANN.id).find((m) => m.text.includes("Tool said: via\\-serve")),
      );
      expect(reply.parseMode).toBe("MarkdownV2");
      // The upload tool posts a workspace file back to the chat.
      await tg.userSays(ANN, "make-report please");
      await until("the uploaded report", () =>
        tg.documents.find((d) => d.chatId === String(ANN.id)),
      ).catch((e) => {
        throw new Error(
          `${e}\n${JSON.stringify(tg.botMessages(ANN.id))}\n${JSON.stringify(tg.rejected)}\n${serve?.stderr()}`,
        );
      });
      expect(tg.documents[0]).toMatchObject({ fileName: "report.txt", content: "report-body 42" });
      await until("the final answer", () =>
        tg.botMessages(ANN.id).find((m) => m.text.includes("Sent you the report")),
      );
      // A stranger still gets only a pairing code from the served bot.
      const before = llm.requests().length;
      await tg.userSays(EVE, "hi");
      await until("a pairing code", () =>
        tg.botMessages(EVE.id).find((m) => m.text.includes("Pairing code")),
      );
      expect(llm.requests().length).toBe(before);
    } finally {
      serve?.child.kill("SIGTERM");
      await serve?.exited;
      await tg.stop();
      await llm.stop();
      cleanup();
    }
  });
});
