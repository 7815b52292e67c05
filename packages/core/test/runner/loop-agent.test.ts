import type { AgentEvent, AgentMessage, AgentTool } from "@mariozechner/pi-agent-core";
import {
  type FauxProviderRegistration,
  fauxAssistantMessage,
  fauxToolCall,
  registerFauxProvider,
  streamSimple,
} from "@mariozechner/pi-ai";
import { Type } from "typebox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createLoopAgent,
  type LoopAgentOptions,
  SKIPPED_FOR_STEER,
} from "../../src/runner/loop-agent.js";

/** Answers "echo:<text>"; the first call waits for `release` when one is set. */
function echoTool(gate?: { wait: Promise<void>; entered: () => void }): AgentTool {
  return {
    name: "echo",
    label: "echo",
    description: "echo text",
    parameters: Type.Object({ text: Type.String() }),
    async execute(_id, params) {
      if (gate) {
        gate.entered();
        await gate.wait;
      }
      return {
        content: [{ type: "text", text: `echo:${(params as { text: string }).text}` }],
        details: {},
      };
    },
  };
}

const textOf = (m: AgentMessage): string => {
  if (!("content" in m)) return "";
  const content = m.content;
  if (typeof content === "string") return content;
  return content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("");
};

const userText = (text: string): AgentMessage => ({
  role: "user",
  content: [{ type: "text", text }],
  timestamp: Date.now(),
});

describe("loop agent", () => {
  let faux: FauxProviderRegistration;
  beforeEach(() => {
    faux = registerFauxProvider({ models: [{ id: "faux-1", contextWindow: 100_000 }] });
  });
  afterEach(() => faux.unregister());

  const make = (events: AgentEvent[], overrides: Partial<LoopAgentOptions> = {}) =>
    createLoopAgent({
      model: faux.getModel(),
      messages: [],
      tools: [echoTool()],
      convertToLlm: (messages) =>
        messages.filter(
          (m) => m.role === "user" || m.role === "assistant" || m.role === "toolResult",
        ),
      streamFn: (model, context, options) =>
        streamSimple(model, context, { ...options, apiKey: "x" }),
      toolExecution: "sequential",
      onEvent: (event) => events.push(event),
      ...overrides,
    });

  it("runs a prompt through the tool loop, growing the transcript as each message ends", async () => {
    faux.setResponses([
      fauxAssistantMessage(fauxToolCall("echo", { text: "hi" }), { stopReason: "toolUse" }),
      fauxAssistantMessage("done"),
    ]);
    const events: AgentEvent[] = [];
    const lengths: number[] = [];
    const agent = make(events, {
      onEvent: (event) => {
        events.push(event);
        if (event.type === "message_end") lengths.push(agent.state.messages.length);
      },
    });
    agent.state.systemPrompt = "You are a test.";
    await agent.prompt("say hi");
    expect(agent.state.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "assistant",
    ]);
    expect(agent.state.messages.map(textOf)).toEqual(["say hi", "[toolCall]", "echo:hi", "done"]);
    // The transcript had taken each message in when its event arrived.
    expect(lengths).toEqual([1, 2, 3, 4]);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("agent_start");
    expect(types.at(-1)).toBe("agent_end");
    expect(types.filter((t) => t === "turn_end")).toHaveLength(2);
    expect(types).toContain("tool_execution_start");
  });

  it("takes a steered message after the running tool batch, and refuses a second prompt meanwhile", async () => {
    let release = () => {};
    let entered = () => {};
    const inTool = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const wait = new Promise<void>((resolve) => {
      release = resolve;
    });
    const seen: string[] = [];
    faux.setResponses([
      fauxAssistantMessage(fauxToolCall("echo", { text: "slow" }), { stopReason: "toolUse" }),
      (context) => {
        seen.push(context.messages.map((m) => m.role).join(","));
        return fauxAssistantMessage("after steer");
      },
    ]);
    const events: AgentEvent[] = [];
    const agent = make(events, { tools: [echoTool({ wait, entered })] });
    const run = agent.prompt("start");
    await inTool;
    await expect(agent.prompt("again")).rejects.toThrow(/already running/);
    agent.steer(userText("change of plan"));
    release();
    await run;
    expect(seen).toEqual(["user,assistant,toolResult,user"]);
    expect(agent.state.messages.map(textOf)).toEqual([
      "start",
      "[toolCall]",
      "echo:slow",
      "change of plan",
      "after steer",
    ]);
  });

  it("skips the batch's calls not started when a message is steered: each gets a skipped result, the steer follows", async () => {
    let release = () => {};
    let entered = () => {};
    const inTool = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const wait = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ran: string[] = [];
    const gated = echoTool({ wait, entered });
    const tool: AgentTool = {
      ...gated,
      execute: async (id, params, signal, onUpdate) => {
        ran.push((params as { text: string }).text);
        if (ran.length === 1) return gated.execute(id, params, signal, onUpdate);
        return { content: [{ type: "text", text: "ran" }], details: {} };
      },
    };
    const sent: string[][] = [];
    faux.setResponses([
      fauxAssistantMessage(
        [
          fauxToolCall("echo", { text: "one" }),
          fauxToolCall("echo", { text: "two" }),
          fauxToolCall("echo", { text: "three" }),
        ],
        { stopReason: "toolUse" },
      ),
      (context) => {
        sent.push(context.messages.map((m) => `${m.role}:${textOf(m as AgentMessage)}`));
        return fauxAssistantMessage("changed course");
      },
    ]);
    const events: AgentEvent[] = [];
    const agent = make(events, { tools: [tool] });
    const run = agent.prompt("start");
    await inTool;
    agent.steer(userText("do something else"));
    release();
    await run;
    expect(ran).toEqual(["one"]);
    expect(sent).toEqual([
      [
        "user:start",
        "assistant:[toolCall][toolCall][toolCall]",
        "toolResult:echo:one",
        `toolResult:${SKIPPED_FOR_STEER}`,
        `toolResult:${SKIPPED_FOR_STEER}`,
        "user:do something else",
      ],
    ]);
    const results = agent.state.messages.filter((m) => m.role === "toolResult");
    expect(results.map((m) => m.role === "toolResult" && m.isError)).toEqual([false, true, true]);
  });

  it("runs every call of a batch when nothing is steered", async () => {
    const ran: string[] = [];
    const tool: AgentTool = {
      ...echoTool(),
      execute: async (_id, params) => {
        ran.push((params as { text: string }).text);
        return { content: [{ type: "text", text: "ran" }], details: {} };
      },
    };
    faux.setResponses([
      fauxAssistantMessage(
        [fauxToolCall("echo", { text: "one" }), fauxToolCall("echo", { text: "two" })],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ]);
    const agent = make([], { tools: [tool] });
    await agent.prompt("start");
    expect(ran).toEqual(["one", "two"]);
  });

  it("continues from a transcript that ends in a user message without adding it twice", async () => {
    faux.setResponses([fauxAssistantMessage("continued")]);
    const events: AgentEvent[] = [];
    const agent = make(events, { messages: [userText("where were we")] });
    await agent.continue();
    expect(agent.state.messages.map(textOf)).toEqual(["where were we", "continued"]);
    await expect(agent.continue()).rejects.toThrow(/assistant message/);
  });

  it("ends a run whose loop fails with an error answer in the transcript and an agent_end", async () => {
    const events: AgentEvent[] = [];
    let broken = true;
    const agent = make(events, {
      transformContext: async (messages) => {
        if (broken) throw new Error("transform broke");
        return messages;
      },
    });
    await agent.prompt("hello");
    const last = agent.state.messages.at(-1);
    expect(last).toMatchObject({
      role: "assistant",
      stopReason: "error",
      errorMessage: "transform broke",
    });
    expect(events.at(-1)).toMatchObject({ type: "agent_end", messages: [last] });
    // Usable afterwards.
    broken = false;
    faux.setResponses([fauxAssistantMessage("fine")]);
    await agent.prompt("again");
    expect(textOf(agent.state.messages.at(-1) as AgentMessage)).toBe("fine");
  });

  it("abort cancels the running tool batch and the run ends aborted", async () => {
    let entered = () => {};
    const inTool = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const stuck: AgentTool = {
      name: "echo",
      label: "echo",
      description: "waits for the abort",
      parameters: Type.Object({ text: Type.String() }),
      execute: (_id, _params, signal) =>
        new Promise((_resolve, reject) => {
          entered();
          signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
        }),
    };
    faux.setResponses([
      fauxAssistantMessage(fauxToolCall("echo", { text: "x" }), { stopReason: "toolUse" }),
      fauxAssistantMessage("never asked"),
    ]);
    const events: AgentEvent[] = [];
    const agent = make(events, { tools: [stuck] });
    const run = agent.prompt("go");
    await inTool;
    agent.abort();
    await run;
    const last = agent.state.messages.at(-1);
    expect(last?.role === "assistant" && last.stopReason).toBe("aborted");
    expect(events.at(-1)?.type).toBe("agent_end");
  });
});
