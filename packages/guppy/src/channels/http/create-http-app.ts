import { type Context, Hono } from "hono";
import { addAccessRoutes } from "./access-routes.js";
import type { ThreadEventJson } from "./api-types.js";
import { addSessionRoutes, authenticate, crossSiteRefused } from "./browser-session.js";
import { busyMessage } from "./busy-message.js";
import { chatCompletions } from "./chat-completions.js";
import { contextToolsRoute } from "./context-tools-route.js";
import { addControlUiRoutes, type ControlUi } from "./control-ui.js";
import { addEventsRoutes } from "./events-routes.js";
import type { HttpBackend, ThreadSummary } from "./http-backend.js";
import { honoJsonAnswer } from "./json-answer.js";
import { internalErrorAnswer, jsonError } from "./json-error.js";
import { createModelRoutes } from "./list-models.js";
import { listThreads, type ThreadPageRequest } from "./list-threads.js";
import { threadMessagesRoute } from "./messages-route.js";
import { bodyLimit, readJsonBody } from "./request-body.js";
import { statusRoute, threadUsageJson } from "./status-route.js";
import { streamThreadEvents } from "./thread-events.js";
import { createThreadTitles } from "./thread-titles.js";
import { usageRoute } from "./usage-route.js";

export interface HttpAppOptions {
  /** The orchestrator and store behind the routes (across threads: backend-rpc.ts). */
  backend: HttpBackend;
  token: string;
  /** Where the token is stored, for the 401 message. */
  tokenHint: string;
  modelName: string;
  /** Open SSE streams register here so the channel can end them on stop. */
  onStream?: (close: () => void) => () => void;
  /** Failures no response can tell of (an answer that could not be written); default stderr. */
  log?: (message: string) => void;
  /** The control UI served at / (control-ui.ts); without it / says the UI is not built. */
  ui?: ControlUi;
}

/** The HTTP API's routes (see docs/channels.md "HTTP API"). */
export function createHttpApp(options: HttpAppOptions): Hono {
  const { backend } = options;
  const app = new Hono();
  const titles = createThreadTitles(backend.log);

  app.onError((error, c) => honoJsonAnswer(c, internalErrorAnswer(error)));
  app.notFound((c) => jsonError(c, 404, `No route ${c.req.method} ${c.req.path}.`, "not_found"));

  app.get("/health", (c) => c.json({ status: "ok" }));
  addControlUiRoutes(app, options.ui);
  app.use("*", bodyLimit);
  addSessionRoutes(app, {
    token: options.token,
    tokenHint: options.tokenHint,
    isLoopback: isLoopbackClient,
  });

  app.use("*", async (c, next) => {
    const auth = authenticate(c, options.token);
    if (auth.status === "refused" && auth.reason === "cross_site") return crossSiteRefused(c);
    if (auth.status === "refused") {
      // Where the token is stored is said only to a client on this machine: to anyone else who
      // can reach the port it would tell the owner's home directory.
      const hint = isLoopbackClient(c) ? ` (${options.tokenHint})` : "";
      return jsonError(
        c,
        401,
        `Missing or wrong bearer token: send "Authorization: Bearer <token>"${hint}.`,
        "unauthorized",
      );
    }
    await next();
  });

  const log = options.log ?? ((message: string) => console.error(message));
  app.post("/v1/chat/completions", (c) => chatCompletions(c, backend, options.modelName, log));
  const models = createModelRoutes(options.modelName);
  app.get("/v1/models", models.list);
  app.get("/v1/models/:id{.+}", models.retrieve);
  app.get("/v1/status", (c) => statusRoute(c, backend));
  app.get("/v1/usage", (c) => usageRoute(c, backend));
  addEventsRoutes(app, backend);
  addAccessRoutes(app, backend);

  /**
   * The thread id of the path, or a 4xx response. Hono has decoded the parameter already
   * (`%25` is `%`, `%3A` is `:`): decoding it again would turn `50%25off` into a malformed
   * `50%off` and `a%2541` into `aA`.
   */
  const threadParam = async (c: Context, mustExist: boolean): Promise<string | Response> => {
    const id = c.req.param("id") ?? "";
    const found = await backend.thread(id);
    if (found.status === "invalid") return invalidThread(c, found.reason);
    if (mustExist && found.status === "unknown") {
      return jsonError(c, 404, `Unknown thread ${JSON.stringify(id)}.`, "not_found");
    }
    return found.threadId;
  };
  /** GET /v1/threads's `limit` and `after`, or what is wrong with them. */
  const threadPageRequest = async (
    limit: string | undefined,
    after: string | undefined,
  ): Promise<ThreadPageRequest | string> => {
    const page: ThreadPageRequest = {};
    if (limit !== undefined) {
      if (!/^[1-9][0-9]{0,8}$/.test(limit)) {
        return `\`limit\` must be a whole number from 1 to 999999999, not ${JSON.stringify(limit)}.`;
      }
      page.limit = Number(limit);
    }
    if (after !== undefined) {
      const found = await backend.thread(after);
      if (found.status === "invalid") return `\`after\` must be a thread id: ${found.reason}`;
      page.after = after;
    }
    return page;
  };
  app.get("/v1/threads", async (c) => {
    const page = await threadPageRequest(c.req.query("limit"), c.req.query("after"));
    if (typeof page === "string") return jsonError(c, 400, page, "invalid_request_error");
    const { threads, next } = await listThreads(backend, page);
    const titled = await titles.titles(threads.map((t) => t.threadId));
    return c.json({
      threads: threads.map((t, i) => ({ ...threadJson(t), title: titled[i] ?? null })),
      next,
    });
  });

  app.get("/v1/threads/:id/status", async (c) => {
    const id = await threadParam(c, true);
    if (typeof id !== "string") return id;
    const [status] = await backend.statuses([id]);
    if (!status) throw new Error(`no status for ${id}`);
    const u = status.lastUsage;
    const [title] = await titles.titles([id]);
    return c.json({
      ...threadJson(status),
      title: title ?? null,
      compactions: status.compactions,
      compaction_fallbacks: status.compactionFallbacks ?? 0,
      last_usage: u
        ? {
            input: u.input,
            output: u.output,
            cache_read: u.cacheRead,
            cache_write: u.cacheWrite,
            cost: u.cost?.total ?? 0,
          }
        : null,
      sandbox: status.sandbox ?? null,
      ...threadUsageJson(status.usage),
    });
  });

  for (const command of ["new", "compact"] as const) {
    app.post(`/v1/threads/:id/${command}`, async (c) => {
      const id = await threadParam(c, true);
      if (typeof id !== "string") return id;
      const parsed = await readJsonBody(c, { optional: true });
      if (!parsed.ok) return parsed.response;
      const messageId = messageIdOf(parsed.body);
      let result: Awaited<ReturnType<HttpBackend["command"]>>;
      try {
        result = await backend.command({
          threadId: id,
          command,
          ...(messageId ? { messageId } : {}),
        });
      } catch (error) {
        // A /compact while one runs in the thread, or a compaction that failed.
        const message = error instanceof Error ? error.message : String(error);
        return jsonError(c, 409, `/${command} failed: ${message}`, "conflict");
      }
      switch (result.status) {
        case "held":
          return heldThread(c, result.reason);
        case "duplicate":
          return jsonError(
            c,
            409,
            `Thread ${id} has already accepted a message with message_id ${String(messageId)}: the /${command} was dropped.`,
            "duplicate",
          );
        case "reset":
          return c.json({ status: "reset", thread_id: id, archived: result.archived ?? null });
        case "compacted":
          return c.json({ status: "compacted", thread_id: id, report: result.report });
      }
    });
  }

  app.post("/v1/threads/:id/messages", async (c) => {
    const id = await threadParam(c, false);
    if (typeof id !== "string") return id;
    const parsed = await readJsonBody(c);
    if (!parsed.ok) return parsed.response;
    const { text, user } = parsed.body;
    const messageId = messageIdOf(parsed.body);
    if (typeof text !== "string" || text.trim() === "") {
      return jsonError(c, 400, "`text` must be a non-empty string.", "invalid_request_error");
    }
    const userName = typeof user === "string" && user ? user : "api";
    const result = await backend.send(id, {
      type: "prompt",
      text,
      userId: userName,
      userName,
      ...(messageId ? { messageId } : {}),
    });
    if (result.status === "queued") {
      // 202 only once the message is on disk (fsync'd without blocking other requests).
      try {
        await result.synced;
      } catch (error) {
        // Not on disk, so not run (the actor checks the same before its run): 507, as WebDAV
        // says of a server that cannot store what it was sent.
        return jsonError(
          c,
          507,
          `The message could not be saved, so it will not be run: ${String(error)}`,
          "insufficient_storage",
        );
      }
      // `id` is the prompt's: its events carry it as message_id. Its log entry takes the
      // message_id the client gave, if any: `log_id` says which.
      return c.json(
        {
          id: result.inboxId,
          log_id: messageId ?? result.inboxId,
          thread_id: id,
          status: "queued",
          position: result.position,
        },
        202,
      );
    }
    if (result.status === "busy") {
      return jsonError(c, 429, busyMessage(id, result.queued), "busy");
    }
    if (result.status === "refused" && result.heldElsewhere) return heldThread(c, result.reason);
    if (result.status === "refused" && result.unsaved) {
      return jsonError(
        c,
        507,
        `The message could not be saved, so it will not be run: ${result.reason}.`,
        "insufficient_storage",
      );
    }
    if (result.status === "duplicate") {
      return jsonError(
        c,
        409,
        `Thread ${id} has already accepted a message with message_id ${String(messageId)}.`,
        "duplicate",
      );
    }
    return jsonError(
      c,
      503,
      `The message was not accepted: ${"reason" in result ? result.reason : result.status}.`,
      "unavailable",
    );
  });

  app.get("/v1/threads/:id/messages", async (c) => {
    const id = await threadParam(c, true);
    if (typeof id !== "string") return id;
    return threadMessagesRoute(c, backend, id);
  });

  app.get("/v1/threads/:id/tools", async (c) => {
    const id = await threadParam(c, true);
    if (typeof id !== "string") return id;
    return contextToolsRoute(c, backend, id);
  });

  for (const kind of ["steer", "abort"] as const) {
    app.post(`/v1/threads/:id/${kind}`, async (c) => {
      const id = await threadParam(c, true);
      if (typeof id !== "string") return id;
      // An abort may come without a body, as before `message_id` was taken.
      const parsed = await readJsonBody(c, { optional: kind === "abort" });
      if (!parsed.ok) return parsed.response;
      const messageId = messageIdOf(parsed.body);
      const withId = messageId ? { messageId } : {};
      let text = "";
      if (kind === "steer") {
        if (typeof parsed.body.text !== "string" || parsed.body.text.trim() === "") {
          return jsonError(c, 400, "`text` must be a non-empty string.", "invalid_request_error");
        }
        text = parsed.body.text;
      }
      const result = await backend.send(
        id,
        kind === "steer" ? { type: "steer", text, ...withId } : { type: "abort", ...withId },
      );
      if (result.status === "delivered") return c.json({ status: "delivered", thread_id: id });
      if (result.status === "refused" && result.heldElsewhere) {
        return heldThread(c, result.reason);
      }
      if (result.status === "duplicate") {
        return jsonError(
          c,
          409,
          `Thread ${id} has already accepted a message with message_id ${String(messageId)}: the ${kind} was dropped.`,
          "duplicate",
        );
      }
      return jsonError(
        c,
        409,
        `Nothing is running in ${id}: the ${kind} was dropped.`,
        "nothing_running",
      );
    });
  }

  app.get("/v1/threads/:id/events", async (c) => {
    const id = await threadParam(c, true);
    if (typeof id !== "string") return id;
    const subscribe = backend.subscribe;
    if (!subscribe)
      return jsonError(c, 501, "This gateway has no event stream.", "not_implemented");
    return streamThreadEvents(c, id, subscribe, options.onStream);
  });

  return app;
}

/** The client's `message_id` of a message, steer or abort: a non-empty string, else none. */
function messageIdOf(body: Record<string, unknown>): string | undefined {
  return typeof body.message_id === "string" && body.message_id ? body.message_id : undefined;
}

/** A thread a `guppy chat` has open: the gateway leaves it alone until that chat exits. */
function heldThread(c: Context, reason: string): Response {
  return jsonError(c, 409, `Not accepted: ${reason}.`, "held_elsewhere");
}

/** A thread as GET /v1/threads lists it (and GET /v1/threads/{id}/status begins). */
function threadJson(t: ThreadSummary) {
  return {
    id: t.threadId,
    state: t.state,
    queued: t.queued,
    last_activity: t.lastActivity ?? null,
    model: t.model,
    messages: t.messages,
    tokens: { context: t.contextTokens, context_window: t.contextWindow },
    cost: t.cost,
    // Its subagents (id, label, state): shown with it, never as threads of their own.
    ...(t.subagents ? { subagents: t.subagents } : {}),
    // Its scheduled events (<home>/events/), when it has any.
    ...(t.events
      ? {
          events: t.events.map(
            (e): ThreadEventJson => ({
              id: e.id,
              type: e.type,
              schedule: e.schedule ?? null,
              next_run: e.nextRun ?? null,
            }),
          ),
        }
      : {}),
  };
}

/**
 * Whether the request came from this machine (a loopback address). False when it cannot be told
 * (a request made without a socket, as tests do with `app.request`).
 */
export function isLoopbackClient(c: Context): boolean {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  const address = env?.incoming?.socket?.remoteAddress;
  if (!address) return false;
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  return v4.startsWith("127.") || address === "::1";
}

function invalidThread(c: Context, reason: string): Response {
  return jsonError(c, 400, `Invalid thread id: ${reason}`, "invalid_request_error");
}
