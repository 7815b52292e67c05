import { type ChatCompletionRequest, type FixtureResponse, LLMock } from "@copilotkit/aimock";

export type WireApi = "openai-completions" | "anthropic-messages";

/** A scripted LLM over real HTTP (aimock), answering every request with `respond(request, index)`. */
export interface MockLlm {
  url: string;
  mock: LLMock;
  /** Requests as the mock normalised them (OpenAI chat shape, whatever the wire), oldest first. */
  requests(): ChatCompletionRequest[];
  /** Raw request bodies from the mock's journal (the wire format as sent). */
  rawBodies(): unknown[];
  /** Environment that points guppy at this mock over `api`. */
  env(api: WireApi, model?: string): Record<string, string>;
  stop(): Promise<void>;
}

export async function startMockLlm(
  respond: (request: ChatCompletionRequest, index: number) => FixtureResponse,
): Promise<MockLlm> {
  const mock = new LLMock({ port: 0, host: "127.0.0.1" });
  const seen: ChatCompletionRequest[] = [];
  mock.on({ predicate: () => true }, (request) => {
    const plain = withoutTimeStamps(request);
    seen.push(plain);
    return respond(plain, seen.length - 1);
  });
  const url = await mock.start();
  return {
    url,
    mock,
    requests: () => seen,
    rawBodies: () =>
      mock
        .getRequests()
        .filter((r) => r.body && /\/(chat\/completions|messages)$/.test(r.path))
        .map((r) => r.body),
    env: (api, model) => ({
      GUPPY_MODEL:
        model ?? (api === "anthropic-messages" ? "anthropic/mock-claude" : "openai/mock-gpt"),
      GUPPY_BASE_URL: api === "anthropic-messages" ? url : `${url}/v1`,
      GUPPY_API: api,
      GUPPY_API_KEY: "test-key",
      GUPPY_MAX_RETRIES: "2",
    }),
    stop: () => mock.stop(),
  };
}

/** The local time guppy puts before each user message (`[Fri 2026-11-27 09:14 Europe/Berlin] `). */
export const TIME_STAMP =
  /^\[(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{4}-\d{2}-\d{2} \d{2}:\d{2} [^\]\s]+\] /;

/**
 * A copy of `request` with the time stamp taken off its user messages: what tests script and
 * assert on is the text as typed (the stamp's own test reads the raw bodies).
 */
export function withoutTimeStamps(request: ChatCompletionRequest): ChatCompletionRequest {
  const copy = structuredClone(request);
  for (const m of copy.messages) {
    if (m.role !== "user") continue;
    if (typeof m.content === "string") m.content = m.content.replace(TIME_STAMP, "");
    else if (Array.isArray(m.content)) {
      const first = m.content.find((p) => "text" in p);
      if (first && "text" in first) first.text = String(first.text).replace(TIME_STAMP, "");
    }
  }
  return copy;
}

/** The last message of a request, as the mock normalised it. */
export function lastMessage(request: ChatCompletionRequest) {
  return request.messages[request.messages.length - 1];
}

/** Every text the request carries (system, user, assistant, tool), joined. */
export function requestText(request: ChatCompletionRequest): string {
  return request.messages
    .map((m) =>
      typeof m.content === "string"
        ? m.content
        : Array.isArray(m.content)
          ? m.content.map((p) => ("text" in p ? String(p.text) : "")).join("")
          : "",
    )
    .join("\n");
}

/** A mock LLM that answers "echo: <the last message's text>". */
export function startEchoLlm(): Promise<MockLlm> {
  return startMockLlm((request) => {
    const last = lastMessage(request);
    return { content: `echo: ${requestText({ ...request, messages: last ? [last] : [] })}` };
  });
}
