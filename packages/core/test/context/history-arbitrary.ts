import type { AssistantMessage, Message, ToolCall, ToolResultMessage } from "@mariozechner/pi-ai";
import fc from "fast-check";
import { zeroUsage } from "../../src/runner/message-text.js";

export const user = (text: string, t = 0): Message => ({
  role: "user",
  content: text,
  timestamp: t,
});

export function assistant(
  text: string,
  calls: ToolCall[] = [],
  stopReason: AssistantMessage["stopReason"] = calls.length ? "toolUse" : "stop",
): AssistantMessage {
  return {
    role: "assistant",
    content: [...(text ? [{ type: "text" as const, text }] : []), ...calls],
    api: "openai-completions",
    provider: "openai",
    model: "mock-model",
    usage: zeroUsage(),
    stopReason,
    timestamp: 0,
  };
}

export const call = (id: string): ToolCall => ({
  type: "toolCall",
  id,
  name: "bash",
  arguments: { command: `echo ${id}` },
});

export const result = (id: string, text = `out ${id}`): ToolResultMessage => ({
  role: "toolResult",
  toolCallId: id,
  toolName: "bash",
  content: [{ type: "text", text }],
  isError: false,
  timestamp: 0,
});

type Step =
  | { kind: "user" }
  | { kind: "text" }
  | { kind: "tools"; calls: number; answer: "all" | "some" | "shuffled" | "duplicated" }
  | { kind: "orphan" }
  | { kind: "failed"; stop: "error" | "aborted"; calls: number };

const step = (messy: boolean): fc.Arbitrary<Step> =>
  messy
    ? fc.oneof(
        fc.constant<Step>({ kind: "user" }),
        fc.constant<Step>({ kind: "text" }),
        fc.record({
          kind: fc.constant("tools" as const),
          calls: fc.integer({ min: 1, max: 3 }),
          answer: fc.constantFrom("all", "some", "shuffled", "duplicated" as const),
        }),
        fc.constant<Step>({ kind: "orphan" }),
        fc.record({
          kind: fc.constant("failed" as const),
          stop: fc.constantFrom("error", "aborted" as const),
          calls: fc.integer({ min: 0, max: 2 }),
        }),
      )
    : fc.oneof(
        fc.constant<Step>({ kind: "user" }),
        fc.constant<Step>({ kind: "text" }),
        fc.record({
          kind: fc.constant("tools" as const),
          calls: fc.integer({ min: 1, max: 3 }),
          answer: fc.constant("all" as const),
        }),
      );

/** Builds messages from steps; `clean` histories are well-formed (what a healthy run stores). */
function build(steps: Step[], clean: boolean): Message[] {
  let n = 0;
  const out: Message[] = [user("start")];
  for (const s of steps) {
    switch (s.kind) {
      case "user":
        out.push(user(`u${n++}`));
        break;
      case "text":
        out.push(assistant(`a${n++}`));
        if (clean) out.push(user(`u${n++}`));
        break;
      case "orphan":
        out.push(result(`ghost${n++}`));
        break;
      case "failed": {
        const ids = Array.from({ length: s.calls }, () => `f${n++}`);
        out.push(assistant("partial", ids.map(call), s.stop));
        break;
      }
      case "tools": {
        const ids = Array.from({ length: s.calls }, () => `c${n++}`);
        out.push(assistant("", ids.map(call)));
        let answered = ids;
        if (s.answer === "some") answered = ids.slice(0, ids.length - 1);
        if (s.answer === "shuffled") answered = [...ids].reverse();
        if (s.answer === "duplicated") answered = [...ids, ids[0]!];
        for (const id of answered) out.push(result(id));
        break;
      }
    }
  }
  return out;
}

export const messyHistory = fc
  .array(step(true), { minLength: 0, maxLength: 30 })
  .map((steps) => build(steps, false));

export const cleanHistory = fc
  .array(step(false), { minLength: 1, maxLength: 40 })
  .map((steps) => build(steps, true));
