import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { longPollWait } from "./long-poll-wait.js";

/** A Telegram user as the fake API sends it in `from`. */
export interface FakeUser {
  id: number;
  name: string;
}

/** A group chat (negative id, like Telegram's). */
export interface FakeGroup {
  id: number;
  title?: string;
}

/** A message the bot sent (edits applied). */
export interface SentMessage {
  messageId: number;
  chatId: string;
  text: string;
}

/** One request the bot made, with when it came. */
export interface ApiCall {
  method: string;
  body: Record<string, unknown>;
  at: number;
  /** The status of an injected failure. */
  failed?: number;
}

type Json = Record<string, unknown>;

interface FailRule {
  method: string;
  times: number;
  status: number;
  description: string;
  extra: Json;
  match?: (body: Json) => boolean;
}

export interface FakeBotApi {
  apiUrl: string;
  token: string;
  bot: { id: number; username: string };
  calls: ApiCall[];
  /** Files served at `/file/bot<token>/files/<id>`, by file id. */
  files: Map<string, Buffer>;
  /** How long a file download takes (ms); `fileDelays` overrides it per file id. */
  fileDelayMs: number;
  fileDelays: Map<string, number>;
  /** Adds a raw update (its `update_id` is assigned) and wakes a waiting getUpdates. */
  push(update: Json): Json;
  /** A private-chat message from `user`; a leading `/word` gets a bot_command entity. */
  say(user: FakeUser, text: string, extra?: Json): Json;
  /** A private-chat message with these fields instead of text (photo, caption, service fields). */
  sayRaw(user: FakeUser, fields: Json): Json;
  /** A group message from `user`; `@<bot>` in it gets a mention entity. */
  groupSay(group: FakeGroup, user: FakeUser, text: string, extra?: Json): Json;
  /** A group message with these fields instead of text (new members, pinned message). */
  groupRaw(group: FakeGroup, user: FakeUser, fields: Json): Json;
  /** An `edited_message` update for a message sent earlier (same message id, new text). */
  edit(message: Json, text: string): Json;
  /** Answers the next `times` calls of `method` (that `match`) with an error. */
  failNext(
    method: string,
    times: number,
    status: number,
    description: string,
    extra?: Json,
    match?: (body: Json) => boolean,
  ): void;
  /** The bot's messages in a chat, oldest first. */
  texts(chatId: number): string[];
  /** Updates not yet confirmed by a getUpdates offset. */
  unconfirmed(): Json[];
  /**
   * Called as a getUpdates offset confirms updates, before it is answered: what the bot had on
   * disk then is what a crash right after would leave (Telegram sends them no more).
   */
  onConfirm?: (confirmed: Json[]) => void;
  /** Called as getUpdates answers with updates, before the bot has them. */
  onDeliver?: (delivered: Json[]) => void;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function commandEntities(text: string): Json[] {
  const command = /^\/\S+/.exec(text);
  return command ? [{ type: "bot_command", offset: 0, length: command[0].length }] : [];
}

/**
 * A fake Telegram Bot API over real HTTP on 127.0.0.1: long-polled getUpdates whose offset
 * confirms updates (unconfirmed ones come again, as after a restart), sendMessage / edits /
 * files, and injected failures. Enough of the API for guppy's Telegram channel; updates are raw
 * JSON, so tests can send what the emulator cannot (groups, edits, service messages, albums).
 */
export async function startFakeBotApi(
  bot = { id: 999_000, username: "guppy_test_bot" },
): Promise<FakeBotApi> {
  const token = "123456:FAKE-TOKEN";
  let nextUpdateId = 1;
  let nextMessageId = 1;
  let updates: Json[] = [];
  const waiters = new Set<() => void>();
  const calls: ApiCall[] = [];
  const sent: SentMessage[] = [];
  const rules: FailRule[] = [];
  const files = new Map<string, Buffer>();

  const wake = () => {
    for (const w of [...waiters]) w();
  };
  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const ok = (res: ServerResponse, result: unknown) => reply(res, 200, { ok: true, result });
  const fail = (res: ServerResponse, status: number, description: string, extra: Json = {}) =>
    reply(res, status, { ok: false, error_code: status, description, ...extra });

  const readBody = async (req: IncomingMessage): Promise<Json> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const type = String(req.headers["content-type"] ?? "");
    if (type.includes("json")) return JSON.parse(raw.toString("utf8") || "{}") as Json;
    if (type.includes("multipart")) {
      const form = await new Response(raw, { headers: { "content-type": type } }).formData();
      const body: Json = {};
      for (const [key, value] of form.entries()) body[key] = typeof value === "string" ? value : "";
      return body;
    }
    return Object.fromEntries(new URLSearchParams(raw.toString("utf8")));
  };

  const botMessage = (chatId: unknown, text: string, messageId: number) => ({
    message_id: messageId,
    from: { id: bot.id, is_bot: true, first_name: "Guppy", username: bot.username },
    chat: { id: Number(chatId), type: Number(chatId) < 0 ? "supergroup" : "private" },
    date: Math.floor(Date.now() / 1000),
    text,
  });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const file = /^\/file\/bot[^/]+\/files\/(.+)$/.exec(url.pathname);
    if (file) {
      calls.push({ method: "FILE", body: { id: file[1] }, at: Date.now() });
      const data = files.get(String(file[1]));
      if (!data) return fail(res, 404, "Not Found");
      const delay = api.fileDelays.get(String(file[1])) ?? api.fileDelayMs;
      if (delay > 0) await sleep(delay);
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(data);
      return;
    }
    const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!m) return fail(res, 404, "Not Found");
    const method = String(m[2]);
    const body = await readBody(req);
    const call: ApiCall = { method, body, at: Date.now() };
    calls.push(call);
    if (m[1] !== token) return fail(res, 401, "Unauthorized");
    const rule = rules.find((r) => r.method === method && r.times > 0 && (r.match?.(body) ?? true));
    if (rule) {
      rule.times--;
      call.failed = rule.status;
      return fail(res, rule.status, rule.description, rule.extra);
    }
    switch (method) {
      case "getMe":
        return ok(res, {
          id: bot.id,
          is_bot: true,
          first_name: "Guppy",
          username: bot.username,
          can_join_groups: true,
        });
      case "deleteWebhook":
      case "setMyCommands":
      case "sendChatAction":
      case "setMessageReaction":
      case "deleteMessage":
        return ok(res, true);
      case "getFile":
        return ok(res, {
          file_id: body.file_id,
          file_unique_id: `u${String(body.file_id)}`,
          file_path: `files/${String(body.file_id)}`,
        });
      case "getUpdates": {
        if (body.offset !== undefined) {
          const offset = Number(body.offset);
          const confirmed = updates.filter((u) => Number(u.update_id) < offset);
          updates = updates.filter((u) => Number(u.update_id) >= offset);
          if (confirmed.length > 0) api.onConfirm?.(confirmed);
        }
        const timeoutMs = Math.min(Number(body.timeout ?? 0), 5) * 1000;
        if (updates.length === 0 && timeoutMs > 0) {
          await longPollWait(waiters, res, timeoutMs);
        }
        const delivered = updates.slice(0, Number(body.limit ?? 100));
        if (delivered.length > 0) api.onDeliver?.(delivered);
        return ok(res, delivered);
      }
      case "sendMessage": {
        const text = String(body.text ?? "");
        if (!text.trim()) return fail(res, 400, "Bad Request: message text is empty");
        const message: SentMessage = {
          messageId: nextMessageId++,
          chatId: String(body.chat_id),
          text,
        };
        sent.push(message);
        return ok(res, botMessage(body.chat_id, text, message.messageId));
      }
      case "editMessageText": {
        const message = sent.find(
          (s) => s.messageId === Number(body.message_id) && s.chatId === String(body.chat_id),
        );
        if (!message) return fail(res, 400, "Bad Request: message to edit not found");
        const text = String(body.text ?? "");
        if (message.text === text) return fail(res, 400, "Bad Request: message is not modified");
        message.text = text;
        return ok(res, botMessage(body.chat_id, text, message.messageId));
      }
      case "sendDocument": {
        const message: SentMessage = {
          messageId: nextMessageId++,
          chatId: String(body.chat_id),
          text: `[document] ${String(body.caption ?? "")}`,
        };
        sent.push(message);
        return ok(res, botMessage(body.chat_id, message.text, message.messageId));
      }
      default:
        return fail(res, 404, "Not Found");
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => fail(res, 500, String(error)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const from = (user: FakeUser) => ({
    id: user.id,
    is_bot: false,
    first_name: user.name,
    username: user.name,
  });
  const privateChat = (user: FakeUser) => ({
    id: user.id,
    type: "private",
    first_name: user.name,
    username: user.name,
  });
  const groupChat = (group: FakeGroup) => ({
    id: group.id,
    type: "supergroup",
    title: group.title ?? "Group",
  });
  const newMessage = (fields: Json): Json => ({
    message_id: 10_000 + nextUpdateId,
    date: Math.floor(Date.now() / 1000),
    ...fields,
  });

  const api: FakeBotApi = {
    apiUrl: `http://127.0.0.1:${port}`,
    token,
    bot,
    calls,
    files,
    fileDelayMs: 0,
    fileDelays: new Map(),
    push(update) {
      const withId = { update_id: nextUpdateId++, ...update };
      updates.push(withId);
      wake();
      return withId;
    },
    say(user, text, extra = {}) {
      const entities = commandEntities(text);
      return api.push({
        message: newMessage({
          from: from(user),
          chat: privateChat(user),
          text,
          ...(entities.length > 0 ? { entities } : {}),
          ...extra,
        }),
      });
    },
    sayRaw(user, fields) {
      return api.push({
        message: newMessage({ from: from(user), chat: privateChat(user), ...fields }),
      });
    },
    groupSay(group, user, text, extra = {}) {
      const entities = commandEntities(text);
      const mention = text.indexOf(`@${bot.username}`);
      if (mention >= 0 && entities.length === 0)
        entities.push({ type: "mention", offset: mention, length: bot.username.length + 1 });
      return api.push({
        message: newMessage({
          from: from(user),
          chat: groupChat(group),
          text,
          ...(entities.length > 0 ? { entities } : {}),
          ...extra,
        }),
      });
    },
    groupRaw(group, user, fields) {
      return api.push({
        message: newMessage({ from: from(user), chat: groupChat(group), ...fields }),
      });
    },
    edit(update, text) {
      const original = update.message as Json;
      return api.push({
        edited_message: { ...original, text, edit_date: Math.floor(Date.now() / 1000) },
      });
    },
    failNext(method, times, status, description, extra = {}, match) {
      rules.push({ method, times, status, description, extra, ...(match ? { match } : {}) });
    },
    texts: (chatId) => sent.filter((s) => s.chatId === String(chatId)).map((s) => s.text),
    unconfirmed: () => [...updates],
    async stop() {
      wake();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return api;
}
