import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { createLineLogger } from "@guppy/core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { GatewayChannel } from "../../src/channels/channel.js";
import {
  createTelegramChannel,
  type TelegramConfig,
} from "../../src/channels/telegram/create-telegram-channel.js";
import { telegram } from "../../src/channels/telegram/descriptor.js";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { startRuntime, type TestRuntime } from "../helpers/test-runtime.js";
import { type FakeBotApi, startFakeBotApi } from "./helpers/fake-bot-api.js";
import { until } from "./helpers/until.js";

const ANN = { id: 1001, name: "ann" };
const BOB = { id: 1002, name: "bob" };

/** The last user message of a request (what the prompt said). */
function promptOf(request: ChatCompletionRequest): string {
  const last = lastMessage(request);
  return requestText({ ...request, messages: last ? [last] : [] });
}

/** "long-task" → bash `sleep 20`; a tool result → "task finished"; else an echo of the prompt. */
function script(request: ChatCompletionRequest): FixtureResponse {
  const last = lastMessage(request);
  if (last?.role === "tool") return { content: "task finished" };
  const text = promptOf(request);
  if (text.includes("long-task"))
    return { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: "sleep 20" }) }] };
  if (text.includes("short-task"))
    return { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: "sleep 1" }) }] };
  return { content: `ECHO ${text.split("\n")[0]}` };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A 1×1 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const photo = (fileId: string) => [
  { file_id: fileId, file_unique_id: `u-${fileId}`, width: 1, height: 1, file_size: PNG.length },
];

describe("Telegram through the bridge (fake Bot API over HTTP)", () => {
  let llm: MockLlm;
  let api: FakeBotApi;
  let runtime: TestRuntime;
  let channel: GatewayChannel<TelegramConfig>;

  beforeAll(async () => {
    llm = await startMockLlm((request) => script(request));
  });
  afterAll(async () => {
    await llm.stop();
  });
  /** What a test started on top of `start`'s (a restart): stopped first. */
  let extra: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of extra.reverse()) await stop();
    extra = [];
    await runtime?.orchestrator.shutdown(0);
    await channel?.stop();
    await runtime?.stop();
    await api?.stop();
  });

  /** Warnings and errors the channel logged (the runtime's own go nowhere). */
  let logged: string[] = [];

  async function start(env: Record<string, string> = {}) {
    api = await startFakeBotApi();
    runtime = await startRuntime(llm, {
      TELEGRAM_BOT_TOKEN: api.token,
      GUPPY_TELEGRAM_API_URL: api.apiUrl,
      GUPPY_ACCESS_POLICY: "open",
      // Owners, as every user was before roles: a guest's runs get no bash.
      GUPPY_ALLOWED_USERS: `${ANN.id},${BOB.id}`,
      ...env,
    });
    logged = [];
    const logger = createLineLogger({ level: "warn", write: (line) => logged.push(line) });
    channel = createTelegramChannel(telegram, { editIntervalMs: 50, pollTimeoutSeconds: 1 });
    await channel.start({ ...runtime.context, logger });
  }

  /**
   * guppy serve run again on `home` (a restart, or the disk a crash left): a new runtime and
   * Telegram channel, against `sameApi` (what Telegram has not confirmed comes again) or a new
   * Bot API.
   */
  async function restart(home: string, sameApi?: FakeBotApi) {
    const nextApi = sameApi ?? (await startFakeBotApi());
    const env = {
      TELEGRAM_BOT_TOKEN: nextApi.token,
      GUPPY_TELEGRAM_API_URL: nextApi.apiUrl,
      GUPPY_ACCESS_POLICY: "open",
      GUPPY_ALLOWED_USERS: `${ANN.id},${BOB.id}`,
    };
    const nextRuntime = await startRuntime(llm, env, home);
    const nextChannel = createTelegramChannel(telegram, {
      editIntervalMs: 50,
      pollTimeoutSeconds: 1,
    });
    extra.push(async () => {
      await nextRuntime.orchestrator.shutdown(0);
      await nextChannel.stop();
      await nextRuntime.stop();
      if (nextApi !== api) await nextApi.stop();
    });
    const logger = createLineLogger({ level: "warn", write: (line) => logged.push(line) });
    await nextChannel.start({ ...nextRuntime.context, logger });
    return { api: nextApi, runtime: nextRuntime };
  }

  /** guppy serve's shutdown: the orchestrator first (it refuses prompts at once), then the channel. */
  async function serveShutdown() {
    const drained = runtime.orchestrator.shutdown(1000);
    await channel.stop(drained);
    await drained;
  }

  const heldFile = (home: string) => join(home, "telegram", "held-updates.jsonl");

  /** The prompts the LLM was asked about since request `from`. */
  const prompts = (from = 0) => llm.requests().slice(from).map(promptOf);

  describe("intake is never held up by one chat's replies or commands", () => {
    it("answers another user at once while a reply to /help waits out a 429", async () => {
      await start();
      api.failNext(
        "sendMessage",
        1,
        429,
        "Too Many Requests: retry after 3",
        { parameters: { retry_after: 3 } },
        (body) => String(body.chat_id) === String(ANN.id),
      );
      api.say(ANN, "/help");
      await until("the 429", () => api.calls.some((c) => c.failed === 429));
      api.say(BOB, "hi from bob");
      await until("bob's answer", () => api.texts(BOB.id).length > 0);
      // Bob was answered while Ann's /help reply still waited out its 3 s.
      expect(api.texts(ANN.id).some((t) => t.includes("/status"))).toBe(false);
      // The /help reply still arrives once the wait is over.
      await until("ann's help", () => api.texts(ANN.id).some((t) => t.includes("/status")), 8000);
    });

    it("keeps polling while /new waits for a running turn; /stop then stops it at once", async () => {
      await start();
      const threadId = `telegram:${ANN.id}`;
      api.say(ANN, "please do the long-task");
      await until("the tool run", () => runtime.orchestrator.status(threadId).state === "running");
      api.say(ANN, "/new");
      await pause(300);
      const t0 = Date.now();
      api.say(BOB, "hi, I am bob");
      await until("bob's answer", () => api.texts(BOB.id).length > 0);
      // Bob was answered while Ann's turn (a 20 s command) still ran behind her /new.
      expect(runtime.orchestrator.status(threadId).state).toBe("running");
      api.say(ANN, "/stop");
      await until(
        "the run to stop",
        () => runtime.orchestrator.status(threadId).state !== "running",
      );
      // Stopped, not finished: the command's 20 s are far from over.
      expect(Date.now() - t0).toBeLessThan(15_000);
      const texts = await until("ann's replies", () => {
        const t = api.texts(ANN.id);
        return t.some((x) => x.includes("new conversation")) &&
          t.some((x) => x.includes("Stopping"))
          ? t
          : undefined;
      });
      expect(texts.join("\n")).not.toContain("Nothing stopped");
      expect(texts.find((x) => x.includes("new conversation"))).toContain("archived");
    });

    it("posts the reply of a /new that waited for the turn a shutdown stopped before the chat shuts down", async () => {
      await start();
      const threadId = `telegram:${ANN.id}`;
      api.say(ANN, "please do the long-task");
      await until("the tool run", () => runtime.orchestrator.status(threadId).state === "running");
      api.say(ANN, "/new");
      await pause(300);
      // As guppy serve stops: the orchestrator (a short grace) and the channels at once.
      const drained = runtime.orchestrator.shutdown(300);
      const stopped = channel.stop(drained);
      await drained;
      await stopped;
      expect(api.texts(ANN.id).some((t) => t.includes("new conversation"))).toBe(true);
      // Posted while the chat was still up (after its shutdown, posting throws).
      expect(logged.filter((l) => l.includes("could not post"))).toEqual([]);
    });

    it("posts the answer of a turn the shutdown lets finish, though polling stopped at once", async () => {
      await start();
      const threadId = `telegram:${ANN.id}`;
      api.say(ANN, "please do the short-task");
      await until("the tool run", () => runtime.orchestrator.status(threadId).state === "running");
      // As guppy serve stops: the orchestrator (a grace the turn fits in) and the channels at once.
      const drained = runtime.orchestrator.shutdown(15_000);
      const stopped = channel.stop(drained);
      await drained;
      await stopped;
      expect(api.texts(ANN.id).some((t) => t.includes("task finished"))).toBe(true);
      expect(logged.filter((l) => l.includes("could not") || l.startsWith("guppy: error"))).toEqual(
        [],
      );
    });

    it("answers another user while a photo is still downloading", async () => {
      await start();
      api.files.set("SLOW", PNG);
      api.fileDelays.set("SLOW", 4000);
      api.sayRaw(ANN, { photo: photo("SLOW"), caption: "what is in this photo?" });
      await until("the download to start", () => api.calls.some((c) => c.method === "FILE"));
      api.say(BOB, "hi from bob");
      await until("bob's answer", () => api.texts(BOB.id).length > 0);
      // Bob was answered while Ann's photo (4 s) was still downloading.
      expect(api.texts(ANN.id)).toHaveLength(0);
      await until("ann's answer", () => api.texts(ANN.id).length > 0, 10_000);
    });
  });

  it("leaves a message refused at shutdown with Telegram, says so once, and does not spin on getUpdates", async () => {
    await start();
    // guppy serve stops the orchestrator before the channel: a message may come in between.
    await runtime.orchestrator.shutdown(0);
    const late = api.say(ANN, "too late");
    await until("the notice", () => api.texts(ANN.id).some((t) => t.includes("will be answered")));
    const polls = () => api.calls.filter((c) => c.method === "getUpdates").length;
    const before = polls();
    await pause(1000);
    expect(polls() - before).toBeLessThanOrEqual(8);
    await channel.stop();
    expect(api.texts(ANN.id)).toHaveLength(1);
    expect(api.unconfirmed().map((u) => u.update_id)).toEqual([late.update_id]);
  });

  it("answers a message delivered again once, and archives once for a /new delivered again", async () => {
    await start();
    const before = llm.requests().length;
    const first = api.say(ANN, "please book the table (T1)");
    await until("T1's answer", () => api.texts(ANN.id).length === 1);
    // Telegram sends an update again when its offset was not confirmed (guppy stopped first).
    api.push({ message: first.message });
    const reset = api.say(ANN, "/new");
    await until("/new's reply", () => api.texts(ANN.id).some((t) => t.includes("conversation")));
    api.push({ message: reset.message });
    api.say(ANN, "after both");
    await until("the last answer", () => api.texts(ANN.id).some((t) => t.includes("after both")));
    await channel.stop();
    expect(prompts(before).filter((p) => p.includes("T1"))).toHaveLength(1);
    expect(api.texts(ANN.id).filter((t) => t.includes("conversation"))).toHaveLength(1);
    const archives = readdirSync(runtime.store.threadDir(`telegram:${ANN.id}`)).filter((f) =>
      f.startsWith("context-"),
    );
    expect(archives).toHaveLength(1);
  });

  it("acts once on a /stop, /steer or /compact delivered again: a later run is not stopped", async () => {
    await start();
    const threadId = `telegram:${ANN.id}`;
    const running = () => runtime.orchestrator.status(threadId).state === "running";
    const count = (pattern: RegExp) => api.texts(ANN.id).filter((t) => pattern.test(t)).length;
    /** /compact's reply, whatever the compaction came to. */
    const compacted =
      /^(Summarised|Nothing to compact yet|Compaction stopped|The summary request failed)/;
    /** A /status sent after the messages delivered again is answered after them (their order). */
    const statusAfter = async () => {
      const before = count(/^Model:/);
      api.say(ANN, "/status");
      await until("the /status reply", () => count(/^Model:/) > before);
    };
    api.say(ANN, "please do the long-task");
    await until("the tool run", running);
    const stop = api.say(ANN, "/stop");
    await until("the run to stop", () => !running());
    const steer = api.say(ANN, "/steer go left instead");
    await until("the steer notice", () => count(/nothing to steer/) === 1);
    const compact = api.say(ANN, "/compact");
    await until("the /compact reply", () => count(compacted) === 1);
    // Telegram sends them again (guppy stopped before its next poll confirmed them) while a
    // later run runs: it is not stopped, steered or compacted, and nothing is said.
    api.say(ANN, "please do the long-task again");
    await until("the second tool run", running);
    for (const sent of [stop, steer, compact]) api.push({ message: sent.message });
    await statusAfter();
    expect(running()).toBe(true);
    expect(count(/Stopping/)).toBe(1);
    expect(count(/Steering message sent/)).toBe(0);
    expect(count(/nothing to steer/)).toBe(1);
    expect(count(compacted)).toBe(1);
    api.say(ANN, "/stop");
    await until("the second run to stop", () => !running());
    expect(count(/Stopping/)).toBe(2);
  });

  it("takes no edit of an earlier message as a new one: no prompt, no command", async () => {
    await start();
    const hello = api.say(ANN, "hello there");
    await until("the answer", () => api.texts(ANN.id).length === 1);
    const help = api.say(ANN, "/help");
    await until("the help", () => api.texts(ANN.id).length === 2);
    const before = llm.requests().length;
    api.edit(hello, "hello there, edited");
    api.edit(help, "/status");
    api.say(ANN, "one more");
    await until("the last answer", () => api.texts(ANN.id).some((t) => t.includes("one more")));
    await pause(300);
    expect(prompts(before)).toEqual(["one more"]);
    expect(api.texts(ANN.id).join("\n")).not.toContain("Model:");
    expect(api.texts(ANN.id)).toHaveLength(3);
  });

  it("passes a slash word that is not a command of guppy's to the model as text", async () => {
    await start();
    const before = llm.requests().length;
    api.say(ANN, "/translate bonjour tout le monde");
    await until("the answer", () => api.texts(ANN.id).length === 1);
    api.say(ANN, "/foo bar");
    await until("the second answer", () => api.texts(ANN.id).length === 2);
    expect(prompts(before)).toEqual(["/translate bonjour tout le monde", "/foo bar"]);
    expect(api.texts(ANN.id)[0]).toContain("translate bonjour");
  });

  it("says once that there is nothing to steer", async () => {
    await start();
    api.say(ANN, "/steer go left instead");
    api.say(ANN, "/help");
    await until("the help", () => api.texts(ANN.id).some((t) => t.includes("/status")));
    await pause(400);
    const texts = api.texts(ANN.id);
    expect(texts).toHaveLength(2);
    expect(texts.filter((t) => /nothing to steer|Not steered/.test(t))).toHaveLength(1);
  });

  describe("groups", () => {
    const GROUP = { id: -100_123 };

    it("sends a stranger no pairing code in a group, only in a private chat", async () => {
      await start({ GUPPY_ACCESS_POLICY: "pairing", GUPPY_GROUP_REPLIES: "all" });
      const EVE = { id: 6666, name: "eve" };
      const strangers = [EVE, { id: 6667, name: "mallory" }, { id: 6668, name: "trent" }];
      for (const who of strangers) api.groupSay(GROUP, who, "hi all");
      api.groupSay(GROUP, EVE, `@${api.bot.username} who are you?`);
      api.groupSay(GROUP, EVE, "/status");
      await pause(800);
      api.say(EVE, "hello");
      await until("eve's code", () => api.texts(EVE.id).some((t) => t.includes("Pairing code")));
      await pause(300);
      expect(api.texts(GROUP.id)).toEqual([]);
      // The group took none of the pending slots: a fourth stranger still gets a code.
      const late = { id: 6669, name: "walter" };
      api.say(late, "hello");
      await until("a code", () => api.texts(late.id).some((t) => t.includes("Pairing code")));
    });

    it("takes no service message (member joined, pinned, title changed) as a prompt", async () => {
      await start({ GUPPY_GROUP_REPLIES: "all" });
      const before = llm.requests().length;
      const zed = { id: 77, is_bot: false, first_name: "Zed" };
      api.groupRaw(GROUP, ANN, { new_chat_members: [zed] });
      api.groupRaw(GROUP, ANN, { new_chat_title: "Renamed" });
      api.groupRaw(GROUP, ANN, {
        pinned_message: { message_id: 5, date: 0, chat: { id: GROUP.id, type: "supergroup" } },
      });
      api.sayRaw(ANN, {
        pinned_message: { message_id: 6, date: 0, chat: { id: ANN.id, type: "private" } },
      });
      await pause(500);
      api.groupSay(GROUP, ANN, "a real message");
      await until("its answer", () => api.texts(GROUP.id).length > 0);
      await pause(300);
      expect(prompts(before)).toEqual(["a real message"]);
      expect(api.texts(GROUP.id)).toHaveLength(1);
      expect(api.texts(ANN.id)).toHaveLength(0);
    });

    it("ignores a command addressed to another bot: not run, not a prompt, no reply", async () => {
      await start({ GUPPY_GROUP_REPLIES: "all" });
      const threadId = `telegram:${GROUP.id}`;
      api.groupSay(GROUP, ANN, "remember: the code is 42");
      await until("the first answer", () => api.texts(GROUP.id).length === 1);
      const before = llm.requests().length;
      for (const text of ["/new@otherbot", "/status@otherbot", "/help@OtherBot", "/w@other x"]) {
        api.groupSay(GROUP, ANN, text);
      }
      // Addressed to guppy (its name in any case): a command.
      api.groupSay(GROUP, ANN, "/status@Guppy_Test_Bot");
      await until("the status", () => api.texts(GROUP.id).some((t) => t.includes("Model:")));
      await pause(300);
      expect(api.texts(GROUP.id)).toHaveLength(2);
      expect(llm.requests().length).toBe(before);
      expect(runtime.orchestrator.status(threadId).messages).toBe(2);
    });

    it("takes a slash word for the model in a group only when it names the bot", async () => {
      await start();
      const before = llm.requests().length;
      api.groupSay(GROUP, ANN, "/foo not for anyone in particular");
      api.groupSay(GROUP, ANN, `/foo@${api.bot.username} for guppy`);
      await until("the answer", () => api.texts(GROUP.id).length === 1);
      await pause(300);
      expect(prompts(before)).toEqual([`/foo@${api.bot.username} for guppy`]);
    });
  });

  describe("attachments keep the thread's order", () => {
    it("runs a photo sent before a text first, though its download takes longer", async () => {
      await start();
      api.files.set("P1", PNG);
      api.fileDelays.set("P1", 1500);
      const before = llm.requests().length;
      api.sayRaw(ANN, { photo: photo("P1"), caption: "first: what is in this photo?" });
      api.say(ANN, "second: and now translate it");
      await until("both answers", () => (api.texts(ANN.id).length >= 2 ? true : undefined));
      const asked = prompts(before);
      expect(asked.map((p) => p.split("\n")[0])).toEqual([
        "first: what is in this photo?",
        "second: and now translate it",
      ]);
      expect(asked[0]).toMatch(/\[attachment saved: .*attachment-0\.jpeg\]/);
      expect(api.texts(ANN.id)[0]).toContain("first");
    });

    it("keeps the order of a batch: a /word does not overtake the messages sent before it", async () => {
      await start();
      api.say(ANN, "warm up");
      await until("the first answer", () => api.texts(ANN.id).length === 1);
      const before = llm.requests().length;
      for (const text of ["plain a", "/translate b", "plain c", "/foo d"]) api.say(ANN, text);
      await until("four answers", () => api.texts(ANN.id).length === 5);
      expect(prompts(before)).toEqual(["plain a", "/translate b", "plain c", "/foo d"]);
    });

    it("lists an album's files in the message's order, not in the order their downloads end", async () => {
      await start();
      const delays = [900, 450, 0];
      for (const [i, delay] of delays.entries()) {
        api.files.set(`A${i}`, PNG);
        api.fileDelays.set(`A${i}`, delay);
      }
      const before = llm.requests().length;
      for (const i of delays.keys()) {
        api.sayRaw(ANN, {
          media_group_id: "album-1",
          photo: photo(`A${i}`),
          ...(i === 0 ? { caption: "compare these three" } : {}),
        });
      }
      await until("the album's answer", () => api.texts(ANN.id).length > 0, 10_000);
      const [asked] = prompts(before);
      const files = [...(asked ?? "").matchAll(/attachment saved: \S*-(attachment-\d)\.jpeg/g)];
      expect(files.map((m) => m[1])).toEqual(["attachment-0", "attachment-1", "attachment-2"]);
    });

    /** An album of two photos from `user`, the first part captioned; its updates. */
    const album = (user: typeof ANN, id: string, caption: string) =>
      [0, 1].map((i) => {
        api.files.set(`${id}-${i}`, PNG);
        return api.sayRaw(user, {
          media_group_id: id,
          photo: photo(`${id}-${i}`),
          ...(i === 0 ? { caption } : {}),
        });
      });

    it("runs a text sent right after an album behind it, and holds no other chat", async () => {
      await start();
      const before = llm.requests().length;
      // One getUpdates batch: a text, an album, a text, and a text from another chat.
      api.say(ANN, "before the album");
      album(ANN, "album-2", "what is in these photos?");
      // Its photos take 3 s to download, so the album's answer cannot come before bob's.
      for (const i of [0, 1]) api.fileDelays.set(`album-2-${i}`, 3000);
      api.say(ANN, "and which one is sharper?");
      api.say(BOB, "hi from bob");
      await until("bob's answer", () => api.texts(BOB.id).length > 0);
      // Bob was not held behind the album: by his answer, ann has at most the answer to the
      // text before her album (an order, not a timing, so a loaded machine does not fail it).
      expect(api.texts(ANN.id).length).toBeLessThan(2);
      await until("ann's three answers", () => api.texts(ANN.id).length >= 3, 10_000);
      const asked = prompts(before)
        .filter((p) => !p.includes("bob"))
        .map((p) => p.split("\n")[0]);
      expect(asked).toEqual([
        "before the album",
        "what is in these photos?",
        "and which one is sharper?",
      ]);
    });

    it("holds a text of a later batch behind the album still settling, but not a /stop", async () => {
      await start();
      const threadId = `telegram:${ANN.id}`;
      const first = llm.requests().length;
      api.say(ANN, "please do the long-task");
      await until("the tool run", () => llm.requests().length > first);
      const before = first + 1;
      album(ANN, "album-3", "what is in these photos?");
      await pause(300);
      api.say(ANN, "and which one is sharper?");
      const t0 = Date.now();
      api.say(ANN, "/stop");
      await until("the stop", () => runtime.orchestrator.status(threadId).state !== "running");
      // The /stop was not held behind the album: the 20 s command is far from over.
      expect(Date.now() - t0).toBeLessThan(15_000);
      await until("both prompts", () => prompts(before).length >= 2, 10_000);
      await pause(300);
      expect(prompts(before).map((p) => p.split("\n")[0])).toEqual([
        "what is in these photos?",
        "and which one is sharper?",
      ]);
    });

    it("answers another chat while an album is being combined", async () => {
      await start();
      album(ANN, "album-6", "what is in these photos?");
      // Its photos take 3 s to download: the album is being combined all that time.
      for (const i of [0, 1]) api.fileDelays.set(`album-6-${i}`, 3000);
      await until("the album's download to start", () =>
        api.calls.some((c) => c.method === "FILE"),
      );
      api.say(BOB, "hi from bob");
      await until("bob's answer", () => api.texts(BOB.id).length > 0);
      // Answered while the album was being combined: not held behind it.
      expect(api.texts(ANN.id)).toEqual([]);
      await until("the album's answer", () => api.texts(ANN.id).length > 0, 10_000);
    });

    it("lets a text held behind an album go once the album fails", async () => {
      await start();
      const before = llm.requests().length;
      // A reply to a message without its chat: the adapter throws combining the album (and
      // retries it, failing again, with a growing backoff).
      api.files.set("B0", PNG);
      api.sayRaw(ANN, {
        media_group_id: "album-4",
        photo: photo("B0"),
        caption: "what is in these photos?",
        reply_to_message: { message_id: 1, date: 0 },
      });
      api.say(ANN, "and which one is sharper?");
      await until("the text's prompt", () => prompts(before).length > 0, 8000);
      // Held until the album was tried, not for good.
      expect(
        logged.some((l) => l.includes("Failed to process incoming Telegram media group")),
      ).toBe(true);
      expect(prompts(before).map((p) => p.split("\n")[0])).toEqual(["and which one is sharper?"]);
    });

    it.each([
      ["as soon as the album is fetched", 0],
      ["while the album's parts are being combined", 600],
    ])(
      "answers an album and the text behind it once after a restart, when guppy stops %s",
      async (_, delay) => {
        await start();
        const before = llm.requests().length;
        let confirmed: unknown[] = [];
        api.onConfirm = (updates) => {
          confirmed = [...confirmed, ...updates];
        };
        api.say(ANN, "before the album");
        const parts = album(ANN, "album-5", "what is in these photos?");
        const text = api.say(ANN, "and which one is sharper?");
        await until("the text before the album confirmed", () => confirmed.length > 0);
        await pause(delay);
        await serveShutdown();
        // Only what the inbox has was confirmed; the album and the text behind it stay with
        // Telegram, and their sender is told they will be answered, not "Not accepted".
        expect(confirmed.map((u) => (u as { update_id: number }).update_id)).toEqual([
          Number(parts[0]?.update_id) - 1,
        ]);
        expect(api.unconfirmed().map((u) => u.update_id)).toEqual([
          ...parts.map((p) => p.update_id),
          text.update_id,
        ]);
        expect(api.texts(ANN.id).filter((t) => t.includes("Not accepted"))).toEqual([]);
        // (So is the text before the album when it had not run yet: the inbox keeps it.)
        const answered = api.texts(ANN.id).some((t) => t.startsWith("ECHO before"));
        expect(api.texts(ANN.id).filter((t) => t.includes("will be answered"))).toHaveLength(
          answered ? 2 : 3,
        );
        // Telegram sends them again to the next guppy, which answers each once.
        await restart(runtime.home, api);
        await until(
          "the album's and the text's answers",
          () => api.texts(ANN.id).filter((t) => t.startsWith("ECHO")).length >= 3,
          10_000,
        );
        await pause(500);
        expect(prompts(before).map((p) => p.split("\n")[0])).toEqual([
          "before the album",
          "what is in these photos?",
          "and which one is sharper?",
        ]);
        expect(prompts(before)[1]).toMatch(/attachment-1\.jpeg/);
        expect(api.texts(ANN.id).filter((t) => t.startsWith("ECHO"))).toHaveLength(3);
        expect(api.unconfirmed()).toEqual([]);
      },
    );

    it("confirms nothing to Telegram before the inbox has it: a crash then loses nothing", async () => {
      await start();
      const home = runtime.home;
      const crashed = mkdtempSync(join(tmpdir(), "guppy-crashed-"));
      extra.push(async () => rmSync(crashed, { recursive: true, force: true }));
      /** Updates confirmed to Telegram while their message (an album's, any part) is not in the inbox. */
      const notInInbox: unknown[] = [];
      /** What Telegram still had when the disk was copied. */
      let unconfirmed: Record<string, unknown>[] = [];
      let copied = false;
      api.onConfirm = (confirmed) => {
        const inbox = new Set(
          readFileSync(join(home, "inbox.jsonl"), "utf8")
            .split("\n")
            .filter((l) => l.trim() !== "")
            .map((l) => (JSON.parse(l) as { messageId?: string }).messageId),
        );
        const all = [...confirmed, ...api.unconfirmed()];
        for (const update of confirmed) {
          const message = update.message as { media_group_id?: string };
          const siblings = message.media_group_id
            ? all.filter(
                (u) =>
                  (u.message as { media_group_id?: string }).media_group_id ===
                  message.media_group_id,
              )
            : [update];
          const keys = siblings.map((u) => {
            const m = u.message as { chat: { id: number }; message_id: number };
            return `${m.chat.id}:${m.message_id}`;
          });
          if (!keys.some((key) => inbox.has(key))) notInInbox.push(update);
        }
        if (copied) return;
        // The disk as a kill -9 (or a power cut: the inbox is fsync'd) right now leaves it.
        rmSync(crashed, { recursive: true, force: true });
        cpSync(home, crashed, { recursive: true });
        unconfirmed = api.unconfirmed().filter((u) => !confirmed.includes(u));
        copied = true;
      };
      api.say(ANN, "before the album");
      album(ANN, "album-7", "what is in these photos?");
      api.say(ANN, "and which one is sharper?");
      await until("the batch's first confirmation", () => copied);
      await until("the album's answer", () => api.texts(ANN.id).length >= 2, 10_000);
      await until("everything confirmed", () => api.unconfirmed().length === 0);
      expect(notInInbox).toEqual([]);
      expect(unconfirmed.length).toBeGreaterThan(0);
      // This guppy is gone (its own answers do not count); one starts on the disk it left, and
      // Telegram sends it what was not confirmed then.
      await serveShutdown();
      const before = llm.requests().length;
      const nextApi = await startFakeBotApi();
      for (const update of unconfirmed) nextApi.push(update);
      const next = await restart(crashed, nextApi);
      await until(
        "the answers",
        () => prompts(before).filter((p) => !p.startsWith("before")).length >= 2,
        10_000,
      );
      await pause(300);
      expect(
        prompts(before)
          .filter((p) => !p.startsWith("before"))
          .map((p) => p.split("\n")[0]),
      ).toEqual(["what is in these photos?", "and which one is sharper?"]);
      expect(next.api.texts(ANN.id).filter((t) => !t.includes("before"))).toHaveLength(2);
      await until("everything confirmed", () => next.api.unconfirmed().length === 0);
    });
    it("answers an album and the text held behind it that an older guppy kept, in that order, once", async () => {
      await start();
      await serveShutdown();
      // Updates Telegram confirmed to an older guppy, which kept them in held-updates.jsonl.
      const at = Math.floor(Date.now() / 1000);
      const chat = { id: ANN.id, type: "private", first_name: ANN.name };
      const from = { id: ANN.id, is_bot: false, first_name: ANN.name };
      const kept: Record<string, unknown>[] = [0, 1].map((i) => {
        api.files.set(`K${i}`, PNG);
        return {
          update_id: 500 + i,
          message: {
            message_id: 900 + i,
            date: at,
            chat,
            from,
            media_group_id: "album-9",
            photo: photo(`K${i}`),
            ...(i === 0 ? { caption: "what is in these photos?" } : {}),
          },
        };
      });
      kept.push({
        update_id: 502,
        message: { message_id: 902, date: at, chat, from, text: "and which one is sharper?" },
      });
      mkdirSync(join(runtime.home, "telegram"), { recursive: true });
      writeFileSync(
        heldFile(runtime.home),
        kept.map((update) => `${JSON.stringify({ update })}\n`).join(""),
      );
      const before = llm.requests().length;
      await restart(runtime.home, api);
      await until("both answers", () => prompts(before).length >= 2, 10_000);
      await pause(500);
      expect(prompts(before).map((p) => p.split("\n")[0])).toEqual([
        "what is in these photos?",
        "and which one is sharper?",
      ]);
      expect(prompts(before)[0]).toMatch(/attachment-1\.jpeg/);
      await until("the file removed", () => !existsSync(heldFile(runtime.home)));
    });

    it("hands over what an older guppy kept in held-updates.jsonl once, at the next start: one the thread had accepted is dropped", async () => {
      await start();
      const parts = album(ANN, "album-8", "what is in these photos?");
      const text = api.say(ANN, "and which one is sharper?");
      await until("both answers", () => api.texts(ANN.id).length >= 2, 10_000);
      await serveShutdown();
      // An older guppy's held-updates.jsonl, as it left it when it died after handing them over,
      // before their `done` lines, with a text held behind the album (Telegram confirmed it,
      // nothing else has it).
      const message = text.message as Record<string, unknown>;
      const late = {
        update_id: Number(text.update_id) + 1,
        message: { ...message, message_id: Number(message.message_id) + 1, text: "one more thing" },
      };
      mkdirSync(join(runtime.home, "telegram"), { recursive: true });
      // One more, handed over since (its `done` line), and a line a crash tore.
      const handed = {
        update_id: Number(text.update_id) + 2,
        message: { ...message, message_id: Number(message.message_id) + 2, text: "handed over" },
      };
      writeFileSync(
        heldFile(runtime.home),
        [...parts, text, late, handed].map((update) => `${JSON.stringify({ update })}\n`).join("") +
          `${JSON.stringify({ done: handed.update_id })}\n{"update":{"upd`,
      );
      const before = llm.requests().length;
      const next = await restart(runtime.home);
      await until("the late text's answer", () => next.api.texts(ANN.id).length > 0, 10_000);
      await pause(500);
      expect(prompts(before)).toEqual(["one more thing"]);
      expect(next.api.texts(ANN.id)).toHaveLength(1);
      // Emptied once, at this start: nothing kept in it comes again.
      expect(existsSync(heldFile(runtime.home))).toBe(false);
    });
  });
});
