import { ServerResponse } from "node:http";
import type { RunnerEvent, SendResult } from "@guppy/core";
import type { HttpBindings } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { createAnswerText } from "./answer-text.js";
import { type AsyncQueue, createAsyncQueue } from "./async-queue.js";
import { busyMessage } from "./busy-message.js";
import type { HttpBackend, HttpMessage, PromptReply } from "./http-backend.js";
import { chatThreadId, threadHeader, threadIdInPath } from "./http-thread-id.js";
import { honoJsonAnswer, type JsonAnswer, setHeaders, writeJsonAnswer } from "./json-answer.js";
import { errorAnswer, internalErrorAnswer, jsonError } from "./json-error.js";
import { readJsonBody } from "./request-body.js";

/**
 * What a streamed chat completion waits for: its run's events, a notice instead of a run, or
 * a time to send the client a keep-alive comment.
 */
type Outcome =
  | { type: "event"; event: RunnerEvent }
  | { type: "notice"; text: string }
  | { type: "keep-alive" };
type RunEnd = Extract<RunnerEvent, { type: "run_end" }>;

/**
 * A streamed answer that sent nothing for this long (a tool running) sends an SSE comment, so
 * proxies and chat UIs that drop an idle connection (often after 30–60 s) keep it.
 */
export const KEEP_ALIVE_MS = 15_000;

/**
 * The request header by which a streaming client keeps its run going after it disconnects
 * (`true`, in any case): without it, a client that goes away stops the run it started.
 */
export const KEEP_RUNNING_HEADER = "X-Guppy-Keep-Running";

/** The text of the request's last user message (the only new input; the thread keeps its history). */
export function lastUserText(messages: unknown): string | undefined {
  if (!Array.isArray(messages)) return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: unknown; content?: unknown } | null;
    if (m?.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    if (Array.isArray(m.content)) {
      return m.content
        .map((part: { type?: unknown; text?: unknown }) =>
          part && part.type === "text" && typeof part.text === "string" ? part.text : "",
        )
        .join("");
    }
    return undefined;
  }
  return undefined;
}

const finishReason = (stop: string) => (stop === "length" ? "length" : "stop");

/**
 * No standard status says "cancelled": 499 is what Google's APIs give a cancelled call, and
 * OpenAI's clients raise it as an APIError without retrying (they retry a 409 or a 5xx, which
 * would run an aborted prompt again).
 */
const ABORTED_STATUS = 499 as ContentfulStatusCode;

/**
 * A run that ended without an answer, as the error the client gets instead: the model request
 * failed, or the run was aborted (it is not a complete answer, even with some text).
 */
function runFailure(
  event: RunEnd,
  threadId: string,
): { status: ContentfulStatusCode; message: string; type: string } | undefined {
  if (event.stopReason === "error") {
    const message = event.errorMessage ?? "The model request failed.";
    return { status: 502, message, type: "upstream_error" };
  }
  if (event.stopReason === "aborted") {
    const message = `The run was aborted before it finished (POST /v1/threads/${threadIdInPath(threadId)}/abort, /stop, or guppy shutting down).`;
    return { status: ABORTED_STATUS, message, type: "aborted" };
  }
  return undefined;
}

interface ChatPrompt {
  threadId: string;
  text: string;
  user: string;
}

/** The prompt as it goes to the backend, its run's events to `reply`. */
const promptMessage = (prompt: ChatPrompt, reply: PromptReply): HttpMessage => ({
  type: "prompt",
  text: prompt.text,
  userId: prompt.user,
  userName: prompt.user,
  reply,
});

/** The run's token usage, as the OpenAI shape reports it, summed over its `usage` events. */
function usageTally() {
  let input = 0;
  let output = 0;
  return {
    track(event: RunnerEvent) {
      if (event.type !== "usage") return;
      input += event.usage.input + event.usage.cacheRead + event.usage.cacheWrite;
      output += event.usage.output;
    },
    body: () => ({ prompt_tokens: input, completion_tokens: output, total_tokens: input + output }),
  };
}

/**
 * On an error answer to a prompt the thread has accepted: OpenAI's clients send a request again
 * after a 5xx (twice, by default) unless the answer says not to, and each request is a new prompt
 * — the run, its tool commands included, went again, or the prompt a shutdown saved (503) was
 * answered twice. A 429 (busy: not queued) or a 503 before acceptance has no such header.
 */
const NO_RETRY = { "X-Should-Retry": "false" };

/** A prompt the orchestrator queued (its inbox id), or the answer to one it did not (busy, stopping). */
type Intake = { queued: true; inboxId: string } | { queued: false; answer: JsonAnswer };

function intake(result: SendResult, threadId: string): Intake {
  if (result.status === "queued") return { queued: true, inboxId: result.inboxId };
  if (result.status === "busy") {
    return {
      queued: false,
      answer: errorAnswer(429, busyMessage(threadId, result.queued), "busy"),
    };
  }
  const reason = "reason" in result ? result.reason : result.status;
  const message = `The prompt was not accepted: ${reason}.`;
  return { queued: false, answer: errorAnswer(503, message, "unavailable") };
}

/**
 * What a queued prompt's answer carries: its thread (URL-encoded as in a path: a header takes
 * visible ASCII only, and a `user` may be any text) and inbox id.
 */
const answerHeaders = (threadId: string, inboxId: string) => ({
  "X-Guppy-Thread-Id": threadIdInPath(threadId),
  "X-Guppy-Message-Id": inboxId,
});

/**
 * A plain answer: the prompt goes in, and once its run ends the whole answer comes back (or the
 * error or notice that took its place). Rejects only when the backend does (a 500).
 */
async function plainAnswer(
  backend: Pick<HttpBackend, "send">,
  prompt: ChatPrompt,
  meta: { model: string; created: number },
): Promise<JsonAnswer> {
  const usage = usageTally();
  let settle: (end: RunEnd | { type: "notice"; text: string }) => void = () => {};
  const ended = new Promise<RunEnd | { type: "notice"; text: string }>((resolve) => {
    settle = resolve;
  });
  const reply: PromptReply = {
    events: "end",
    onEvent(event) {
      usage.track(event);
      if (event.type === "run_end") settle(event);
    },
    notice: (text) => settle({ type: "notice", text }),
  };
  const { threadId } = prompt;
  // The answer is the acknowledgement here: the prompt's fsync runs meanwhile.
  const result = await backend.send(threadId, promptMessage(prompt, reply));
  const taken = intake(result, threadId);
  if (!taken.queued) return taken.answer;
  const { inboxId } = taken;
  const headers = answerHeaders(threadId, inboxId);
  const event = await ended;
  // The prompt is in the thread now: an error is not a request to send it again.
  const failed = { ...headers, ...NO_RETRY };
  if (event.type === "notice") {
    return { ...errorAnswer(503, event.text, "unavailable"), headers: failed };
  }
  const failure = runFailure(event, threadId);
  if (failure) {
    return { ...errorAnswer(failure.status, failure.message, failure.type), headers: failed };
  }
  // A plain reply's end holds the whole answer (http-backend.ts), as a stream would give it.
  return {
    status: 200,
    headers,
    body: {
      id: `chatcmpl-${inboxId}`,
      object: "chat.completion",
      created: meta.created,
      model: meta.model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: event.text },
          finish_reason: finishReason(event.stopReason),
        },
      ],
      usage: usage.body(),
      guppy: { thread_id: threadId, message_id: inboxId, stop_reason: event.stopReason },
    },
  };
}

/**
 * Writes a plain answer to the node response once it is ready. An answer that cannot be written
 * (a header Node refuses) is logged, and the client gets a 500 in its place — or, when its
 * headers are out already, the end of the connection.
 */
export function writeWhenReady(
  res: ServerResponse,
  answer: Promise<JsonAnswer>,
  log: (message: string) => void,
): void {
  // A 500 here may come after the prompt was accepted, even run: not one to send again either.
  const failed = (error: unknown): JsonAnswer => ({
    ...internalErrorAnswer(error),
    headers: NO_RETRY,
  });
  answer
    .catch(failed)
    .then((a) => writeJsonAnswer(res, a))
    .catch((error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      log(`The HTTP API could not write an answer: ${reason}`);
      try {
        if (res.headersSent) res.destroy();
        else writeJsonAnswer(res, failed(new Error(`the answer could not be written (${reason})`)));
      } catch {
        res.destroy();
      }
    });
}

/** The node response under a request served by @hono/node-server, if this is one. */
function nodeResponse(c: Context): ServerResponse | undefined {
  const outgoing = (c.env as Partial<HttpBindings> | undefined)?.outgoing;
  return outgoing instanceof ServerResponse ? outgoing : undefined;
}

/**
 * POST /v1/chat/completions, OpenAI-compatible: the thread is
 * `http:<user or "api">:<X-Guppy-Thread or "default">` (`chatThreadId`), the last user message
 * is the prompt, the full tool loop runs and the answer comes back (streamed as text deltas on
 * request; the same text either way: answer-text.ts).
 *
 * A plain answer served by @hono/node-server is written to the node response when the run ends,
 * and the handler returns at once: Hono's request, context and middleware frames are not held
 * for the run's length (seconds with a real model; ~0.4 s queued behind 64 slots in
 * bench/gateway's load). Under that load the HTTP worker's objects that outlive a scavenge fell
 * by about a third, and its CPU per request by ~10 %.
 */
export async function chatCompletions(
  c: Context,
  backend: Pick<HttpBackend, "send">,
  modelName: string,
  log: (message: string) => void,
): Promise<Response> {
  const parsed = await readJsonBody(c);
  if (!parsed.ok) return parsed.response;
  const body = parsed.body;
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return jsonError(c, 400, "`messages` must be a non-empty array.", "invalid_request_error");
  }
  const text = lastUserText(body.messages);
  if (text === undefined || text.trim() === "") {
    return jsonError(
      c,
      400,
      "`messages` has no user message with text content.",
      "invalid_request_error",
    );
  }
  const user = typeof body.user === "string" && body.user.trim() !== "" ? body.user.trim() : "api";
  const header = threadHeader(c.req.header("x-guppy-thread"));
  if (!header.ok) return jsonError(c, 400, header.message, "invalid_request_error");
  const threadName = header.name.trim() || "default";
  const threadId = chatThreadId(user, threadName);
  const model = typeof body.model === "string" && body.model ? body.model : modelName;
  const created = Math.floor(Date.now() / 1000);
  const prompt = { threadId, text, user };

  if (body.stream !== true) {
    const answer = plainAnswer(backend, prompt, { model, created });
    const res = nodeResponse(c);
    if (res) {
      writeWhenReady(res, answer, log);
      return RESPONSE_ALREADY_SENT;
    }
    return honoJsonAnswer(c, await answer);
  }

  const includeUsage =
    (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  const keepRunning = c.req.header(KEEP_RUNNING_HEADER)?.trim().toLowerCase() === "true";
  const usage = usageTally();
  const answer = createAnswerText();
  const queue = createAsyncQueue<Outcome>();
  /** The run ended (or a notice took its place): a client going now stops nothing. */
  let over = false;
  const result = await backend.send(
    threadId,
    promptMessage(prompt, {
      events: "all",
      onEvent(event) {
        queue.push({ type: "event", event });
        if (event.type === "run_end") {
          over = true;
          queue.close();
        }
      },
      notice(noticeText) {
        over = true;
        queue.push({ type: "notice", text: noticeText });
        queue.close();
      },
    }),
  );
  const taken = intake(result, threadId);
  if (!taken.queued) return honoJsonAnswer(c, taken.answer);
  const { inboxId } = taken;
  const id = `chatcmpl-${inboxId}`;
  setHeaders(c, answerHeaders(threadId, inboxId));

  return streamSSE(c, async (stream) => {
    // A client that goes (a UI's Stop button, a closed tab) stops its run — that run only, and
    // as it starts if it still waits (http-backend.ts) — unless it asked to keep it running.
    stream.onAbort(() => {
      queue.close();
      if (over || keepRunning) return;
      backend.send(threadId, { type: "abort", prompt: inboxId }).then(
        (stopped) => {
          if (stopped.status !== "delivered" && stopped.status !== "dropped") {
            log(`A disconnected client's run in ${threadId} was not stopped: ${stopped.status}.`);
          }
        },
        (error: unknown) => log(`A disconnected client's run was not stopped: ${String(error)}`),
      );
    });
    let idle: ReturnType<typeof setTimeout> | undefined;
    /** Every write starts the quiet period again: a comment only while nothing else goes. */
    const wrote = () => {
      clearTimeout(idle);
      idle = setTimeout(() => queue.push({ type: "keep-alive" }), KEEP_ALIVE_MS);
    };
    const chunk = async (delta: Record<string, unknown>, finish: string | null) => {
      await stream.writeSSE({
        data: JSON.stringify({
          id,
          object: "chat.completion.chunk",
          created,
          model,
          choices: [{ index: 0, delta, finish_reason: finish }],
        }),
      });
      wrote();
    };
    const usageChunk = (body: ReturnType<typeof usage.body>) =>
      stream.writeSSE({
        data: JSON.stringify({
          id,
          object: "chat.completion.chunk",
          created,
          model,
          choices: [],
          usage: body,
        }),
      });
    try {
      await chunk({ role: "assistant", content: "" }, null);
      await streamRun(stream, queue, {
        chunk,
        usageChunk,
        wrote,
        usage,
        answer,
        threadId,
        includeUsage,
      });
    } finally {
      clearTimeout(idle);
    }
    if (!stream.aborted) await stream.writeSSE({ data: "[DONE]" });
  });
}

/** Writes a streamed answer's outcomes as they come, until its run ends or the client goes. */
async function streamRun(
  stream: SSEStreamingApi,
  queue: AsyncQueue<Outcome>,
  run: {
    chunk: (delta: Record<string, unknown>, finish: string | null) => Promise<void>;
    usageChunk: (body: ReturnType<ReturnType<typeof usageTally>["body"]>) => Promise<void>;
    wrote: () => void;
    usage: ReturnType<typeof usageTally>;
    answer: ReturnType<typeof createAnswerText>;
    threadId: string;
    includeUsage: boolean;
  },
): Promise<void> {
  const { chunk, usage, answer, threadId } = run;
  for await (const outcome of queue) {
    if (stream.aborted) break;
    if (outcome.type === "keep-alive") {
      // A comment line: SSE readers (the openai clients' too) skip it.
      await stream.write(": keep-alive\n\n");
      run.wrote();
      continue;
    }
    if (outcome.type === "notice") {
      await stream.writeSSE({
        data: JSON.stringify({ error: { message: outcome.text, type: "unavailable" } }),
      });
      return;
    }
    const event = outcome.event;
    usage.track(event);
    if (event.type !== "run_end") {
      const text = answer.add(event);
      if (text) await chunk({ content: text }, null);
      continue;
    }
    const failure = runFailure(event, threadId);
    if (failure) {
      const { message, type } = failure;
      await stream.writeSSE({ data: JSON.stringify({ error: { message, type } }) });
      return;
    }
    const rest = answer.add(event);
    if (rest) await chunk({ content: rest }, null);
    await chunk({}, finishReason(event.stopReason));
    if (run.includeUsage) await run.usageChunk(usage.body());
  }
}
