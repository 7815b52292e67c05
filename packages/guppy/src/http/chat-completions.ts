import type { RunnerEvent } from "@guppy/core";
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { createAsyncQueue } from "./async-queue.js";
import type { HttpBackend, PromptReply } from "./http-backend.js";
import { jsonError } from "./json-error.js";
import { readJsonBody } from "./request-body.js";

/** What a chat-completions request waits for: its run's events, or a notice instead of a run. */
type Outcome = { type: "event"; event: RunnerEvent } | { type: "notice"; text: string };
type RunEnd = Extract<RunnerEvent, { type: "run_end" }>;

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
 * POST /v1/chat/completions, OpenAI-compatible: the thread is
 * `http:<user or "api">:<X-Guppy-Thread or "default">`, the last user message is the prompt,
 * the full tool loop runs and the final answer comes back (streamed as text deltas on request).
 */
export async function chatCompletions(
  c: Context,
  backend: Pick<HttpBackend, "send">,
  modelName: string,
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
  const threadName = c.req.header("x-guppy-thread")?.trim() || "default";
  const threadId = `http:${user}:${threadName}`;
  const model = typeof body.model === "string" && body.model ? body.model : modelName;
  const created = Math.floor(Date.now() / 1000);
  const includeUsage =
    (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;

  // Streaming reads every event through a queue; a plain answer only needs the end of the run
  // (and its usage), so it waits on one promise instead.
  let runUsage = { input: 0, output: 0 };
  const track = (event: RunnerEvent) => {
    if (event.type === "usage") {
      runUsage = {
        input: runUsage.input + event.usage.input + event.usage.cacheRead + event.usage.cacheWrite,
        output: runUsage.output + event.usage.output,
      };
    }
  };
  const queue = body.stream === true ? createAsyncQueue<Outcome>() : undefined;
  let settle: (end: RunEnd | { type: "notice"; text: string }) => void = () => {};
  const ended = new Promise<RunEnd | { type: "notice"; text: string }>((resolve) => {
    settle = resolve;
  });
  const reply: PromptReply = {
    events: queue ? "all" : "end",
    onEvent(event) {
      if (queue) {
        queue.push({ type: "event", event });
        if (event.type === "run_end") queue.close();
        return;
      }
      track(event);
      if (event.type === "run_end") settle(event);
    },
    notice(noticeText) {
      if (!queue) return settle({ type: "notice", text: noticeText });
      queue.push({ type: "notice", text: noticeText });
      queue.close();
    },
  };
  // The answer is the acknowledgement here: the prompt's fsync runs meanwhile.
  const result = await backend.send(threadId, {
    type: "prompt",
    text,
    userId: user,
    userName: user,
    reply,
  });
  if (result.status === "busy") {
    return jsonError(
      c,
      429,
      `Thread ${threadId} is busy (${result.queued} prompts queued); try again shortly.`,
      "busy",
    );
  }
  if (result.status !== "queued") {
    const reason = "reason" in result ? result.reason : result.status;
    return jsonError(c, 503, `The prompt was not accepted: ${reason}.`, "unavailable");
  }
  const id = `chatcmpl-${result.inboxId}`;
  c.header("X-Guppy-Thread-Id", threadId);
  c.header("X-Guppy-Message-Id", result.inboxId);
  const usageBody = () => ({
    prompt_tokens: runUsage.input,
    completion_tokens: runUsage.output,
    total_tokens: runUsage.input + runUsage.output,
  });

  if (!queue) {
    const event = await ended;
    if (event.type === "notice") return jsonError(c, 503, event.text, "unavailable");
    if (event.stopReason === "error") {
      return jsonError(c, 502, event.errorMessage ?? "The model request failed.", "upstream_error");
    }
    return c.json({
      id,
      object: "chat.completion",
      created,
      model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: event.text },
          finish_reason: finishReason(event.stopReason),
        },
      ],
      usage: usageBody(),
      guppy: { thread_id: threadId, message_id: result.inboxId, stop_reason: event.stopReason },
    });
  }

  return streamSSE(c, async (stream) => {
    const chunk = (delta: Record<string, unknown>, finish: string | null) =>
      stream.writeSSE({
        data: JSON.stringify({
          id,
          object: "chat.completion.chunk",
          created,
          model,
          choices: [{ index: 0, delta, finish_reason: finish }],
        }),
      });
    await chunk({ role: "assistant", content: "" }, null);
    for await (const outcome of queue) {
      if (stream.aborted) break;
      if (outcome.type === "notice") {
        await stream.writeSSE({
          data: JSON.stringify({ error: { message: outcome.text, type: "unavailable" } }),
        });
        break;
      }
      const event = outcome.event;
      track(event);
      if (event.type === "text_delta") await chunk({ content: event.delta }, null);
      else if (event.type === "run_end") {
        if (event.stopReason === "error") {
          await stream.writeSSE({
            data: JSON.stringify({
              error: {
                message: event.errorMessage ?? "The model request failed.",
                type: "upstream_error",
              },
            }),
          });
          break;
        }
        await chunk({}, finishReason(event.stopReason));
        if (includeUsage) {
          await stream.writeSSE({
            data: JSON.stringify({
              id,
              object: "chat.completion.chunk",
              created,
              model,
              choices: [],
              usage: usageBody(),
            }),
          });
        }
      }
    }
    if (!stream.aborted) await stream.writeSSE({ data: "[DONE]" });
  });
}
