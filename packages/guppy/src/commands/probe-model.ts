import type { ResolvedModel } from "@guppy/core";
import { maskUrlCredentials } from "@guppy/core/config";
import { completeSimple } from "@mariozechner/pi-ai";
import { createModelErrorExplainer } from "../terminal/model-connection-error.js";

export type ProbeResult =
  | { ok: true; ms: number }
  /** `problem`: one line naming the URL, the status and the provider's own message, plus a hint. */
  | { ok: false; problem: string };

/**
 * One tiny request to the model (a one-word prompt, a few tokens of answer): is the endpoint
 * there and the key accepted? Used by `guppy setup` and `guppy doctor`.
 */
export async function probeModel(
  resolved: ResolvedModel,
  timeoutMs = 20_000,
): Promise<ProbeResult> {
  const { model } = resolved;
  const url = maskUrlCredentials(model.baseUrl);
  const explainer = createModelErrorExplainer(model.baseUrl);
  const started = performance.now();
  try {
    const apiKey = resolved.getApiKey ? await resolved.getApiKey() : resolved.apiKey;
    const answer = await completeSimple(
      model,
      { messages: [{ role: "user", content: "Say ok.", timestamp: Date.now() }] },
      { ...(apiKey ? { apiKey } : {}), maxTokens: 16, signal: AbortSignal.timeout(timeoutMs) },
    );
    if (answer.stopReason === "error" || answer.stopReason === "aborted") {
      const said = explainer.explain(answer.errorMessage ?? "no answer");
      return { ok: false, problem: describeFailure(url, said, resolved) };
    }
    return { ok: true, ms: Math.round(performance.now() - started) };
  } catch (error) {
    const said = explainer.explain(error instanceof Error ? error.message : String(error));
    return { ok: false, problem: describeFailure(url, said, resolved) };
  } finally {
    explainer.close();
  }
}

/** `<url>: 401 invalid x-api-key` and, for a likely cause, a hint. */
function describeFailure(url: string, said: string, resolved: ResolvedModel): string {
  const line = said.replace(/\s+/g, " ").trim().slice(0, 300);
  const text = line.startsWith("cannot reach") ? line : `${url} answered: ${line}`;
  const hints: string[] = [];
  if (resolved.model.api === "anthropic-messages" && /\/v1\/?$/.test(resolved.model.baseUrl)) {
    hints.push(
      "an Anthropic base URL is given without /v1 (the client adds /v1/messages itself): drop the /v1",
    );
  }
  if (/^(401|403)\b/.test(line)) hints.push("the key was refused: check it");
  return hints.length > 0 ? `${text} (${hints.join("; ")})` : text;
}
