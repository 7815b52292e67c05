import { routes } from "telegram-test-api/lib/routes/index.js";
import { TelegramServer } from "telegram-test-api/lib/telegramServer.js";
import { freePort } from "../../helpers/free-port.js";
import { longPollWait } from "./long-poll-wait.js";

/** The parts of Express (the emulator's web framework) the added routes use. */
interface Request extends AsyncIterable<Buffer> {
  body: unknown;
  params: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
}
interface Response {
  status(code: number): Response;
  json(body: unknown): void;
  on(event: "close", listener: () => void): void;
}
type NextFunction = () => void;
interface Express {
  post(path: string, handler: (req: Request, res: Response, next: NextFunction) => unknown): void;
}

/** What the bot sent, as the emulator stored it (edits applied). */
export interface BotMessage {
  messageId: number;
  chatId: string;
  text: string;
  parseMode?: string;
}

export interface TelegramEmulator {
  server: TelegramServer;
  apiUrl: string;
  token: string;
  chatActions: Array<{ chatId: string; action: string }>;
  commands: () => Array<{ command: string; description: string }> | undefined;
  /** Requests rejected by the added checks (too long, unparsable entities), for assertions. */
  rejected: Array<{ method: string; reason: string }>;
  /** Number of getUpdates calls (a long-polling client makes few; a spinning one makes many). */
  getUpdatesCalls: () => number;
  botMessages(chatId: number | string): BotMessage[];
  /** Files the bot sent with sendDocument. */
  documents: Array<{ chatId: string; fileName: string; content: string; caption?: string }>;
  /** The next `times` calls of `method` (for `chatId`, when given) fail with `status` and `description`. */
  failNext(failure: InjectedFailure): void;
  /** Methods called so far, in order, with the status of each injected failure. */
  calls: Array<{ method: string; chatId?: string; failedWith?: number }>;
  /** Sends a text (or a command, when it starts with "/") from a user in a private chat. */
  userSays(user: { id: number; name: string }, text: string): Promise<void>;
  stop(): Promise<void>;
}

export interface InjectedFailure {
  method: string;
  times: number;
  status: number;
  description: string;
  chatId?: number;
  /** Extra fields of the error answer, e.g. `{ parameters: { retry_after: 1 } }`. */
  extra?: Record<string, unknown>;
}

type Route = (app: Express, server: TelegramServer) => void;
type Body = Record<string, unknown>;

const MESSAGE_LIMIT = 4096;
/** Text containing this marker is refused when sent with a parse_mode, like Telegram does for broken entities. */
export const REJECT_FORMATTING_MARKER = "REJECTFORMATTING";

const fail = (res: Response, code: number, description: string, extra: Body = {}) =>
  res.status(code).json({ ok: false, error_code: code, description, ...extra });

/**
 * telegram-test-api with the behaviour of the real Bot API it lacks, added to its route table:
 * getUpdates long-polls (waits up to `timeout` seconds, dates in seconds), sendChatAction,
 * setMyCommands, 404 for methods it lacks (sendRichMessage), the 4,096-character limit, "can't parse entities" rejections and
 * editMessageText returning the edited message.
 */
export async function startTelegramEmulator(): Promise<TelegramEmulator> {
  const token = "12345:test-token";
  const chatActions: Array<{ chatId: string; action: string }> = [];
  const rejected: Array<{ method: string; reason: string }> = [];
  let commands: Array<{ command: string; description: string }> | undefined;
  let polls = 0;
  const documents: TelegramEmulator["documents"] = [];
  const waiters = new Set<() => void>();
  const failures: InjectedFailure[] = [];
  const calls: TelegramEmulator["calls"] = [];

  const checkText = (method: string, body: Body, res: Response): boolean => {
    const text = String(body.text ?? "");
    if (text.length > MESSAGE_LIMIT) {
      rejected.push({ method, reason: "too long" });
      fail(res, 400, "Bad Request: message is too long");
      return false;
    }
    if (body.parse_mode && text.includes(REJECT_FORMATTING_MARKER)) {
      rejected.push({ method, reason: "entities" });
      fail(
        res,
        400,
        "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 3",
      );
      return false;
    }
    return true;
  };

  const extra: Route = (app, server) => {
    // Failures injected by failNext come first, for any method.
    app.post("/bot:token/:method", (req: Request, res: Response, next: NextFunction) => {
      const method = String(req.params.method);
      const body = (req.body ?? {}) as Body;
      const chatId = body.chat_id === undefined ? undefined : String(body.chat_id);
      const failure = failures.find(
        (f) =>
          f.times > 0 &&
          f.method === method &&
          (f.chatId === undefined || String(f.chatId) === chatId),
      );
      calls.push({
        method,
        ...(chatId ? { chatId } : {}),
        ...(failure ? { failedWith: failure.status } : {}),
      });
      if (!failure) return next();
      failure.times--;
      fail(res, failure.status, failure.description, failure.extra);
    });
    app.post("/bot:token/getUpdates", async (req: Request, res: Response) => {
      polls++;
      const body = req.body as Body;
      const timeoutMs = Math.min(Number(body.timeout ?? 0), 5) * 1000;
      const pending = () =>
        server.storage.userMessages.some((u) => u.botToken === req.params.token && !u.isRead);
      if (!pending() && timeoutMs > 0) {
        await longPollWait(waiters, res, timeoutMs);
      }
      const updates = server
        .getUpdates(String(req.params.token))
        .map((u) =>
          "message" in u && u.message
            ? { ...u, message: { ...u.message, date: Math.floor(u.message.date / 1000) } }
            : u,
        );
      res.json({ ok: true, result: updates });
    });
    // Methods this emulated Bot API version does not have answer like Telegram does: 404.
    for (const method of ["sendRichMessage", "sendRichMessageDraft"]) {
      app.post(`/bot:token/${method}`, (_req: Request, res: Response) =>
        fail(res, 404, "Not Found"),
      );
    }
    app.post("/bot:token/sendDocument", async (req: Request, res: Response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk);
      const form = await new globalThis.Response(Buffer.concat(chunks), {
        headers: { "content-type": String(req.headers["content-type"]) },
      }).formData();
      const file = form.get("document");
      if (!(file instanceof Blob))
        return fail(res, 400, "Bad Request: there is no document in the request");
      const chatId = String(form.get("chat_id"));
      const caption = form.get("caption");
      documents.push({
        chatId,
        fileName: "name" in file ? String(file.name) : "document",
        content: Buffer.from(await file.arrayBuffer()).toString("utf8"),
        ...(typeof caption === "string" ? { caption } : {}),
      });
      res.json({
        ok: true,
        result: {
          message_id: 100_000 + documents.length,
          chat: { id: Number(chatId), type: "private" },
          date: Math.floor(Date.now() / 1000),
          document: { file_id: `doc-${documents.length}`, file_unique_id: `u${documents.length}` },
        },
      });
    });
    app.post("/bot:token/sendChatAction", (req: Request, res: Response) => {
      const body = req.body as Body;
      chatActions.push({ chatId: String(body.chat_id), action: String(body.action) });
      res.json({ ok: true, result: true });
    });
    app.post("/bot:token/setMyCommands", (req: Request, res: Response) => {
      commands = (req.body as Body).commands as typeof commands;
      res.json({ ok: true, result: true });
    });
    app.post("/bot:token/sendMessage", (req: Request, res: Response, next: NextFunction) => {
      if (checkText("sendMessage", req.body as Body, res)) next();
    });
    app.post("/bot:token/editMessageText", (req: Request, res: Response) => {
      const body = req.body as Body;
      if (!checkText("editMessageText", body, res)) return;
      server.editMessageText(body as Parameters<TelegramServer["editMessageText"]>[0]);
      const stored = server.storage.botMessages.find(
        (m) =>
          String(m.messageId) === String(body.message_id) &&
          String(m.message.chat_id) === String(body.chat_id),
      );
      if (!stored) return fail(res, 400, "Bad Request: message to edit not found");
      // An edit replaces the formatting too: without parse_mode the message becomes plain text.
      if (!body.parse_mode) delete (stored.message as Body).parse_mode;
      res.json({
        ok: true,
        result: {
          message_id: stored.messageId,
          chat: { id: Number(body.chat_id), type: "private" },
          date: Math.floor(stored.time / 1000),
          text: String(body.text),
        },
      });
    });
  };

  routes.unshift(extra as (typeof routes)[number]);
  const port = await freePort();
  const server = new TelegramServer({ port, host: "127.0.0.1", storeTimeout: 600 });
  routes.splice(routes.indexOf(extra as (typeof routes)[number]), 1);
  await server.start();
  server.on("AddedUserMessage", () => {
    for (const w of [...waiters]) w();
  });
  server.on("AddedUserCommand", () => {
    for (const w of [...waiters]) w();
  });

  return {
    server,
    apiUrl: `http://127.0.0.1:${port}`,
    token,
    chatActions,
    commands: () => commands,
    rejected,
    calls,
    failNext: (failure) => void failures.push({ ...failure }),
    documents,
    getUpdatesCalls: () => polls,
    botMessages: (chatId) =>
      server.storage.botMessages
        .filter((m) => String(m.message.chat_id) === String(chatId))
        .map((m) => ({
          messageId: m.messageId,
          chatId: String(m.message.chat_id),
          text: String(m.message.text),
          ...(m.message.parse_mode ? { parseMode: String(m.message.parse_mode) } : {}),
        })),
    async userSays(user, text) {
      const client = server.getClient(token, {
        userId: user.id,
        chatId: user.id,
        firstName: user.name,
        userName: user.name,
        type: "private",
      });
      if (text.startsWith("/")) {
        const space = text.indexOf(" ");
        const message = client.makeCommand(text);
        message.entities = [
          { offset: 0, length: space === -1 ? text.length : space, type: "bot_command" },
        ];
        await server.addUserCommand(message);
      } else {
        await server.addUserMessage(client.makeMessage(text));
      }
    },
    async stop() {
      for (const w of [...waiters]) w();
      await server.stop();
    },
  };
}
