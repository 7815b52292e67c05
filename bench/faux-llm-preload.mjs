// Helper of bench/gateway (`node --import ./bench/faux-llm-preload.mjs bench/serve-unbundled.mjs
// serve`): the faux LLM inside the gateway process. It replaces pi-ai's "openai-completions"
// wire with a stream that answers "ok" after FAUX_LATENCY_MS (default 20) — what pi-ai's faux
// provider does, without its per-request token estimate of the whole context (a cost a real
// LLM puts on its own machine). Everything of guppy's runs as in production: HTTP API, actors,
// inbox, store, context engine, agent loop, logging. Only the network hop to the LLM is gone.
import { writeFileSync } from "node:fs";
import { createAssistantMessageEventStream, registerApiProvider } from "@mariozechner/pi-ai";

const LATENCY_MS = Number(process.env.FAUX_LATENCY_MS ?? 20);

/**
 * How late the gateway's agents' thread took each answer: its timer was due LATENCY_MS after the
 * request, and the thread ran it this much later (busy with other runs, paused by GC, waiting for
 * a CPU). With FAUX_LATENESS_FILE set, written there at exit as flat pairs: the wall-clock time
 * it was taken (Date.now(), so the bench can pick its measured pass) and how many ms late.
 */
const latenessFile = process.env.FAUX_LATENESS_FILE;
const lateness = [];
if (latenessFile) process.on("exit", () => writeFileSync(latenessFile, JSON.stringify(lateness)));
const api = "openai-completions";
const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };

function stream(model, _context, options) {
  const out = createAssistantMessageEventStream();
  const message = {
    role: "assistant",
    content: [{ type: "text", text: "ok" }],
    api,
    provider: model.provider,
    model: model.id,
    usage: { input: 10, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 11, cost: zero },
    stopReason: "stop",
    timestamp: Date.now(),
  };
  const armed = performance.now();
  const timer = setTimeout(() => {
    if (latenessFile) lateness.push(Date.now(), performance.now() - armed - LATENCY_MS);
    out.push({ type: "start", partial: { ...message, content: [] } });
    out.push({
      type: "text_start",
      contentIndex: 0,
      partial: { ...message, content: [{ type: "text", text: "" }] },
    });
    out.push({ type: "text_delta", contentIndex: 0, delta: "ok", partial: message });
    out.push({ type: "text_end", contentIndex: 0, content: "ok", partial: message });
    out.push({ type: "done", reason: "stop", message });
    out.end(message);
  }, LATENCY_MS);
  options?.signal?.addEventListener(
    "abort",
    () => {
      clearTimeout(timer);
      const aborted = { ...message, stopReason: "aborted", errorMessage: "Request was aborted" };
      out.push({ type: "error", reason: "aborted", error: aborted });
      out.end(aborted);
    },
    { once: true },
  );
  return out;
}

registerApiProvider({ api, stream, streamSimple: stream }, "bench-faux-llm");
