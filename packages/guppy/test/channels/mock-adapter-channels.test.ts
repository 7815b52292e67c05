import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createTestMessage } from "@chat-adapter/tests";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { silentLogger } from "@guppy/core";
import type { MessageData } from "chat";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createAccessStore } from "../../src/access/access-store.js";
import { createAccessControl } from "../../src/access/create-access-control.js";
import { splitMessage } from "../../src/channels/bridge/split-message.js";
import {
  type RunningChatChannel,
  startChatChannel,
} from "../../src/channels/bridge/start-chat-channel.js";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { startRuntime, type TestRuntime } from "../helpers/test-runtime.js";
import { recordingAdapter } from "./helpers/recording-adapter.js";
import { until } from "./helpers/until.js";

/**
 * "run-bash X" → a bash tool call `echo X`; "long-task" → bash `sleep 20`; a tool result →
 * "Tool said: <output>"; else an echo.
 */
function script(request: ChatCompletionRequest): FixtureResponse {
  const last = lastMessage(request);
  if (last?.role === "tool")
    return { content: `Tool said: ${String(last.content).split("\n")[0]}` };
  const text = requestText({ ...request, messages: last ? [last] : [] });
  if (text.includes("long-task"))
    return { toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: "sleep 20" }) }] };
  const bash = /run-bash (\S+)/.exec(text);
  if (bash)
    return {
      toolCalls: [{ name: "bash", arguments: JSON.stringify({ command: `echo ${bash[1]}` }) }],
    };
  return { content: `You said: ${text}` };
}

describe.each(["slack", "discord"])("%s through the Chat SDK bridge (mock adapter)", (name) => {
  let llm: MockLlm;
  let runtime: TestRuntime;
  let channel: RunningChatChannel;
  let rec: ReturnType<typeof recordingAdapter>;

  beforeAll(async () => {
    llm = await startMockLlm((request) => script(request));
  });
  afterAll(async () => {
    await llm.stop();
  });
  afterEach(async () => {
    await channel?.chat.shutdown();
    await runtime?.stop();
  });

  async function start(env: Record<string, string>) {
    runtime = await startRuntime(llm, env);
    rec = recordingAdapter(name);
    channel = await startChatChannel(runtime.context, name, rec.adapter, {
      split: (t) => splitMessage(t, 2000),
      mode: "edit",
      editIntervalMs: 20,
      typingIntervalMs: 1000,
    });
  }

  /** Delivers a DM from `userId` (or a group message) and waits until the reply is fully posted. */
  async function send(
    userId: string,
    text: string,
    extra: Partial<MessageData> = {},
    threadId = `${name}:D${userId}:t`,
  ) {
    const message = createTestMessage(`${userId}-${Date.now()}-${Math.random()}`, text, {
      threadId,
      author: {
        userId,
        userName: `user${userId}`,
        fullName: `User ${userId}`,
        isBot: false,
        isMe: false,
      },
      ...extra,
    });
    await channel.chat.processMessage(rec.adapter, threadId, message);
    await channel.bridge.idle();
    // Until nothing runs or waits in the thread (a new thread's files are opened before its run).
    const busy = () => {
      const status = runtime.orchestrator.status(threadId);
      return status.state === "running" || status.state === "waiting";
    };
    for (let i = 0; i < 200 && busy(); i++) await new Promise((r) => setTimeout(r, 20));
    await channel.bridge.idle();
    return rec.posted(threadId);
  }

  it("answers an allowed user through a tool call", async () => {
    await start({ GUPPY_ACCESS_POLICY: "allowlist", GUPPY_ALLOWED_USERS: "U1" });
    const posted = await send("U1", "please run-bash hello-tool");
    expect(posted.join("\n")).toContain("Tool said: hello-tool");
    expect(llm.requests().length).toBeGreaterThanOrEqual(2);
  });

  it("gives an unknown user a pairing code and spends no tokens", async () => {
    await start({});
    const before = llm.requests().length;
    const posted = await send("U9", "hello?");
    expect(posted).toHaveLength(1);
    expect(posted[0]).toMatch(
      new RegExp(`Pairing code: [A-Z2-9]{8}\\nAsk the owner.*guppy pairing approve ${name} `),
    );
    expect(llm.requests().length).toBe(before);
  });

  it("sends a new pairing request to the channel's owner in a private chat, and tells the user once approved", async () => {
    await start({ GUPPY_ALLOWED_USERS: "UO" });
    const [reply] = await send("U9", "hello?");
    const code = /Pairing code: ([A-Z2-9]{8})/.exec(reply ?? "")?.[1] as string;
    // The mock adapter's private chat with a user is `<name>:D<user>:`.
    const ownerDm = `${name}:DUO:`;
    const request = await until("the owner's DM", () => rec.posted(ownerDm)[0]);
    expect(request).toContain(`Pairing request on ${name} from userU9 (U9): code ${code}`);
    expect(request).toContain(`guppy pairing approve ${name} ${code}`);

    const access = createAccessControl({
      store: createAccessStore(runtime.home),
      settings: () => ({ policy: "pairing", allowedUsers: ["UO"] }),
      logger: silentLogger,
    });
    access.approvePairing(name, code);
    const told = await until("the approved user's DM", () => rec.posted(`${name}:DU9:`)[0]);
    expect(told).toContain("Your pairing request was approved as a guest");
    expect(rec.posted(ownerDm)).toHaveLength(1);
  });

  it("keeps two users' conversations apart", async () => {
    await start({ GUPPY_ACCESS_POLICY: "open" });
    await send("UA", "my secret is apricot");
    await send("UB", "my secret is blueberry");
    const before = llm.requests().length;
    await send("UA", "what is my secret?");
    const request = llm.requests()[before] as ChatCompletionRequest;
    const seen = requestText(request);
    expect(seen).toContain("apricot");
    expect(seen).not.toContain("blueberry");
  });

  it("answers /status and /help without the LLM", async () => {
    await start({ GUPPY_ACCESS_POLICY: "open" });
    const before = llm.requests().length;
    const status = await send("UC", "/status");
    expect(status[0]).toContain("Model: openai/mock-gpt");
    expect(status[0]).toMatch(/State: \w+, 0 queued/);
    const help = await send("UC", "/help");
    expect(help[1]).toContain("/steer");
    expect(llm.requests().length).toBe(before);
  });

  it("in a group, answers only when mentioned and logs the ignored message", async () => {
    await start({ GUPPY_ACCESS_POLICY: "open" });
    const group = `${name}:C42:t1`;
    const before = llm.requests().length;
    expect(await send("UG", "just chatting", {}, group)).toEqual([]);
    expect(llm.requests().length).toBe(before);
    const refusals = readFileSync(join(runtime.home, "access", "refusals.jsonl"), "utf8");
    expect(refusals).toContain('"reason":"group-not-addressed"');
    const posted = await send("UG", "hey bot, hello", { isMention: true }, group);
    expect(posted.join("\n")).toContain("You said:");
  });

  it("admits a user who sends /start with an invite code", async () => {
    await start({});
    const access = createAccessControl({
      store: createAccessStore(runtime.home),
      settings: () => ({ policy: "pairing", allowedUsers: [] }),
      logger: silentLogger,
    });
    // An owner's invite: a guest's runs get no bash.
    const code = access.createInvite(name, "owner");
    const welcome = await send("UI", `/start ${code}`);
    expect(welcome[0]).toContain("Welcome!");
    const posted = await send("UI", "run-bash invited-ok");
    expect(posted.join("\n")).toContain("Tool said: invited-ok");
    // The code was single-use.
    const other = await send("UJ", `/start ${code}`);
    expect(other[0]).toBe("That invite code is not valid.");
  });

  it("a guest's /steer cannot redirect an owner's run in a shared thread; the owner's can", async () => {
    await start({ GUPPY_ACCESS_POLICY: "open", GUPPY_ALLOWED_USERS: "UO" });
    const group = `${name}:C5:t1`;
    const say = async (userId: string, text: string) => {
      const message = createTestMessage(`${userId}-${Date.now()}-${Math.random()}`, text, {
        threadId: group,
        author: { userId, userName: userId, fullName: userId, isBot: false, isMe: false },
        isMention: true,
      });
      await channel.chat.processMessage(rec.adapter, group, message);
      await channel.bridge.idle();
    };
    const before = llm.requests().length;
    await say("UO", "please do the long-task");
    // Running, and its request seen by the mock (a request still on its way when this test
    // ends would be counted as the next test's).
    for (
      let i = 0;
      i < 200 &&
      (runtime.orchestrator.status(group).state !== "running" || llm.requests().length === before);
      i++
    ) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(runtime.orchestrator.status(group).state).toBe("running");
    await say("UG", "/steer delete everything");
    expect(rec.posted(group).at(-1)).toBe(
      "This run was started by the owner; a guest cannot steer it. Send your message once it ends.",
    );
    await say("UO", "/steer wrap it up");
    expect(rec.posted(group).at(-1)).toBe("Steering message sent.");
    await say("UO", "/stop");
  });

  it("saves attachments under the thread, gives images to the model, and survives a failed download", async () => {
    await start({ GUPPY_ACCESS_POLICY: "open", GUPPY_MODEL: "openai/gpt-4o-mini" });
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
      "base64",
    );
    const before = llm.requests().length;
    await send("UF", "look at these", {
      attachments: [
        { type: "image", name: "dot.png", mimeType: "image/png", data: png },
        { type: "file", name: "notes.txt", data: Buffer.from("hello notes") },
        {
          type: "file",
          name: "lost.bin",
          fetchData: () => Promise.reject(new Error("expired link")),
        },
      ],
    });
    const dir = join(runtime.store.threadDir(`${name}:DUF:t`), "attachments");
    const files = readdirSync(dir);
    expect(files.some((f) => f.endsWith("dot.png"))).toBe(true);
    const notes = files.find((f) => f.endsWith("notes.txt")) as string;
    expect(readFileSync(join(dir, notes), "utf8")).toBe("hello notes");
    expect(existsSync(join(dir, "lost.bin"))).toBe(false);
    const request = JSON.stringify(llm.requests()[before]);
    expect(request).toContain("data:image/png;base64,");
    expect(request).toContain(`attachment saved: ${join(dir, notes)}`);
    expect(request).toContain("attachment could not be downloaded: lost.bin (expired link)");
  });

  it("applies a platform slash command to the channel's latest thread, after /new starts it fresh", async () => {
    await start({ GUPPY_ACCESS_POLICY: "open" });
    const thread = `${name}:C7:t9`;
    await send("US", "hello there", { isMention: true }, thread);
    const user = {
      userId: "US",
      userName: "us",
      fullName: "U S",
      isBot: false,
      isMe: false,
    } as const;
    const slash = async (command: string) => {
      await channel.chat.processSlashCommand(
        { adapter: rec.adapter, channelId: `${name}:C7`, command, text: "", user, raw: {} },
        undefined,
      );
      await channel.bridge.idle();
      return rec.posted(`${name}:C7`).at(-1) ?? "";
    };
    expect(await slash("/status")).toMatch(/, [1-9]\d* messages,/);
    expect(await slash("/new")).toContain("Started a new conversation");
    expect(await slash("/status")).toMatch(/, 0 messages,/);
    // A command the app has but guppy does not: said so, not dropped in silence.
    expect(await slash("/translate")).toBe("Unknown command /translate; /help lists the commands.");
  });
});
