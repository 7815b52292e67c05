import { type Api, type Message, type Model, streamSimple, type Tool } from "@mariozechner/pi-ai";
import { Type } from "typebox";

export type WireApi = "openai-completions" | "anthropic-messages";

const tools: Tool[] = [
  { name: "bash", description: "run", parameters: Type.Object({ command: Type.String() }) },
];

/**
 * The request body pi-ai's real provider code builds for `messages` (captured through
 * `onPayload`, which throws so nothing is sent).
 */
export async function wirePayload(api: WireApi, messages: Message[]): Promise<unknown> {
  const model: Model<Api> = {
    id: "mock-model",
    name: "mock",
    api,
    provider: api === "anthropic-messages" ? "anthropic" : "openai",
    baseUrl: "http://127.0.0.1:9",
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 100_000,
    maxTokens: 1000,
  };
  let payload: unknown;
  const stream = streamSimple(
    model,
    { systemPrompt: "test", messages, tools },
    {
      apiKey: "test",
      maxRetries: 0,
      onPayload: (p) => {
        payload = p;
        throw new Error("captured");
      },
    },
  );
  await stream.result();
  if (payload === undefined) throw new Error(`no payload captured for ${api}`);
  return payload;
}

type Obj = Record<string, unknown>;

/** Problems with tool pairing in an OpenAI chat-completions body (empty = valid). */
export function openAiProblems(body: unknown): string[] {
  const problems: string[] = [];
  const messages = ((body as Obj).messages ?? []) as Obj[];
  let i = 0;
  while (i < messages.length) {
    const m = messages[i]!;
    i++;
    if (m.role === "tool") {
      problems.push(`orphan tool message ${String(m.tool_call_id)} at ${i - 1}`);
      continue;
    }
    const calls = (m.role === "assistant" ? (m.tool_calls as Obj[] | undefined) : undefined) ?? [];
    const wanted = new Set(calls.map((c) => String(c.id)));
    if (wanted.size !== calls.length) problems.push(`duplicate tool call ids at ${i - 1}`);
    const seen = new Set<string>();
    while (i < messages.length && messages[i]!.role === "tool") {
      const id = String(messages[i]!.tool_call_id);
      if (!wanted.has(id))
        problems.push(`tool message ${id} answers no call of the assistant before it`);
      if (seen.has(id)) problems.push(`two tool messages for ${id}`);
      seen.add(id);
      i++;
    }
    for (const id of wanted) if (!seen.has(id)) problems.push(`call ${id} has no tool message`);
  }
  return problems;
}

/** Problems with tool pairing in an Anthropic messages body (empty = valid). */
export function anthropicProblems(body: unknown): string[] {
  const problems: string[] = [];
  const messages = ((body as Obj).messages ?? []) as Obj[];
  if (messages.length > 0 && messages[0]!.role !== "user")
    problems.push("first message is not user");
  const blocks = (m: Obj | undefined, type: string): Obj[] =>
    m && Array.isArray(m.content) ? (m.content as Obj[]).filter((b) => b.type === type) : [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const uses = m.role === "assistant" ? blocks(m, "tool_use") : [];
    const results = m.role === "user" ? blocks(m, "tool_result") : [];
    if (results.length > 0) {
      const prev = messages[i - 1];
      const ids = new Set(
        prev?.role === "assistant" ? blocks(prev, "tool_use").map((b) => String(b.id)) : [],
      );
      const seen = new Set<string>();
      for (const r of results) {
        const id = String(r.tool_use_id);
        if (!ids.has(id)) problems.push(`tool_result ${id} at ${i} has no tool_use just before`);
        if (seen.has(id)) problems.push(`two tool_results for ${id}`);
        seen.add(id);
      }
    }
    if (uses.length > 0) {
      const next = messages[i + 1];
      const answered = new Set(blocks(next, "tool_result").map((b) => String(b.tool_use_id)));
      for (const u of uses)
        if (!answered.has(String(u.id)))
          problems.push(`tool_use ${String(u.id)} at ${i} unanswered`);
    }
  }
  return problems;
}

export function wireProblems(api: WireApi, body: unknown): string[] {
  return api === "anthropic-messages" ? anthropicProblems(body) : openAiProblems(body);
}
