import {
  Agent,
  type AgentEvent,
  type AgentMessage,
  type AgentTool,
} from "@mariozechner/pi-agent-core";
import {
  type FauxProviderRegistration,
  type FauxResponseStep,
  fauxAssistantMessage,
  fauxToolCall,
  registerFauxProvider,
  streamSimple,
} from "@mariozechner/pi-ai";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { createLoopAgent } from "../../src/runner/loop-agent.js";

/**
 * loop-agent.ts against pi-agent-core's `Agent`, which it stands in for: each scenario runs on
 * both over the same scripted faux stream, and the transcripts, the events and what the model
 * was sent must be the same.
 */

/** What a scenario drives: the part of `Agent` the runner uses. */
interface Subject {
  messages(): AgentMessage[];
  prompt(text: string): Promise<void>;
  continue(): Promise<void>;
  steer(message: AgentMessage): void;
  abort(): void;
}

interface Setup {
  tools?: AgentTool[];
  messages?: AgentMessage[];
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => Promise<AgentMessage[]>;
}

type Scenario = (run: {
  faux: FauxProviderRegistration;
  make(setup?: Setup): Subject;
}) => Promise<void>;

const SYSTEM_PROMPT = "You are a test.";

const convertToLlm = (messages: AgentMessage[]) =>
  messages.filter((m) => m.role === "user" || m.role === "assistant" || m.role === "toolResult");

function makeSubject(
  kind: "loop" | "agent",
  faux: FauxProviderRegistration,
  setup: Setup,
  seen: { events: AgentEvent[]; requests: unknown[] },
): Subject {
  const tools = setup.tools ?? [echoTool()];
  const messages = setup.messages ?? [];
  const streamFn: Parameters<typeof createLoopAgent>[0]["streamFn"] = (model, context, options) => {
    seen.requests.push({
      systemPrompt: context.systemPrompt,
      messages: structuredClone(context.messages),
      tools: context.tools?.map((tool) => tool.name),
    });
    return streamSimple(model, context, { ...options, apiKey: "x" });
  };
  const common = {
    convertToLlm,
    streamFn,
    toolExecution: "sequential" as const,
    ...(setup.transformContext ? { transformContext: setup.transformContext } : {}),
  };
  if (kind === "loop") {
    const agent = createLoopAgent({
      ...common,
      model: faux.getModel(),
      messages,
      tools,
      onEvent: (event) => seen.events.push(event),
    });
    agent.state.systemPrompt = SYSTEM_PROMPT;
    return {
      messages: () => agent.state.messages,
      prompt: (text) => agent.prompt(text),
      continue: () => agent.continue(),
      steer: (message) => agent.steer(message),
      abort: () => agent.abort(),
    };
  }
  const agent = new Agent({ ...common, initialState: { model: faux.getModel() } });
  agent.state.systemPrompt = SYSTEM_PROMPT;
  agent.state.tools = tools;
  agent.state.messages = messages;
  agent.subscribe((event) => {
    seen.events.push(event);
  });
  return {
    messages: () => agent.state.messages,
    prompt: (text) => agent.prompt(text),
    continue: () => agent.continue(),
    steer: (message) => agent.steer(message),
    abort: () => agent.abort(),
  };
}

/** A scenario's transcript, events and requests on one implementation, times set to 0. */
async function observe(kind: "loop" | "agent", scenario: Scenario) {
  // A provider of its own for each run: the faux provider's prompt cache is per registration.
  const faux = registerFauxProvider({
    api: "faux-parity",
    models: [{ id: "faux-1", contextWindow: 100_000 }],
    tokenSize: { min: 2, max: 2 },
  });
  const seen = { events: [] as AgentEvent[], requests: [] as unknown[] };
  let subject: Subject | undefined;
  try {
    await scenario({
      faux,
      make: (setup = {}) => {
        subject = makeSubject(kind, faux, setup, seen);
        return subject;
      },
    });
  } finally {
    faux.unregister();
  }
  return untimed({ messages: subject?.messages(), events: seen.events, requests: seen.requests });
}

function untimed(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (key, v) => (key === "timestamp" ? 0 : v)));
}

/** Runs `scenario` on both and expects the same; returns loop-agent's for further checks. */
async function same(scenario: Scenario) {
  const loop = await observe("loop", scenario);
  const agent = await observe("agent", scenario);
  expect(loop).toEqual(agent);
  return loop as { messages: AgentMessage[]; events: AgentEvent[]; requests: unknown[] };
}

/** Answers "echo:<text>"; with a gate, waits in every call until the gate opens. */
function echoTool(gate?: Gate): AgentTool {
  return {
    name: "echo",
    label: "echo",
    description: "echo text",
    parameters: Type.Object({ text: Type.String() }),
    async execute(_id, params, signal) {
      if (gate) {
        gate.entered();
        await Promise.race([
          gate.opened,
          new Promise((_, reject) =>
            signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true }),
          ),
        ]);
      }
      return {
        content: [{ type: "text", text: `echo:${(params as { text: string }).text}` }],
        details: {},
      };
    },
  };
}

interface Gate {
  /** Resolves once something waits at the gate. */
  reached: Promise<void>;
  entered(): void;
  opened: Promise<void>;
  open(): void;
}

function gate(): Gate {
  let entered = () => {};
  let open = () => {};
  const reached = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { reached, entered, opened, open };
}

const user = (text: string): AgentMessage => ({
  role: "user",
  content: [{ type: "text", text }],
  timestamp: 0,
});

const textOf = (m: AgentMessage): string => {
  if (!("content" in m)) return "";
  const content = m.content;
  if (typeof content === "string") return content;
  return content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("");
};

const callEcho = (text: string, id: string): FauxResponseStep =>
  fauxAssistantMessage(fauxToolCall("echo", { text }, { id }), { stopReason: "toolUse" });

describe("loop agent and pi-agent-core's Agent on the same faux stream", () => {
  it("run a prompt through a tool call to the answer, then a second prompt on the transcript", async () => {
    const seen = await same(async ({ faux, make }) => {
      faux.setResponses([
        callEcho("hi", "call-1"),
        fauxAssistantMessage("done"),
        fauxAssistantMessage("again"),
      ]);
      const subject = make();
      await subject.prompt("say hi");
      await subject.prompt("once more");
    });
    expect(seen.messages.map(textOf)).toEqual([
      "say hi",
      "[toolCall]",
      "echo:hi",
      "done",
      "once more",
      "again",
    ]);
    expect(seen.requests).toHaveLength(3);
    expect(seen.events.map((e) => e.type)).toContain("tool_execution_end");
  });

  it("take steered messages one per turn after the running tool batch, and refuse a prompt meanwhile", async () => {
    const seen = await same(async ({ faux, make }) => {
      const tool = gate();
      faux.setResponses([
        callEcho("slow", "call-1"),
        fauxAssistantMessage("after the first"),
        fauxAssistantMessage("after the second"),
      ]);
      const subject = make({ tools: [echoTool(tool)] });
      const run = subject.prompt("start");
      await tool.reached;
      await expect(subject.prompt("again")).rejects.toThrow();
      await expect(subject.continue()).rejects.toThrow();
      subject.steer(user("first change"));
      subject.steer(user("second change"));
      tool.open();
      await run;
    });
    expect(seen.messages.map(textOf)).toEqual([
      "start",
      "[toolCall]",
      "echo:slow",
      "first change",
      "after the first",
      "second change",
      "after the second",
    ]);
  });

  it("abort a run in its tool batch and while the model answers", async () => {
    const seen = await same(async ({ faux, make }) => {
      const tool = gate();
      const model = gate();
      faux.setResponses([callEcho("stuck", "call-1"), fauxAssistantMessage("never asked")]);
      const subject = make({ tools: [echoTool(tool)] });
      const inTool = subject.prompt("go");
      await tool.reached;
      subject.abort();
      await inTool;
      faux.setResponses([
        async () => {
          model.entered();
          await model.opened;
          return fauxAssistantMessage("a late answer");
        },
      ]);
      const answering = subject.prompt("go on");
      await model.reached;
      subject.abort();
      model.open();
      await answering;
    });
    const stops = seen.messages.map((m) => (m.role === "assistant" ? m.stopReason : m.role));
    expect(stops).toEqual(["user", "toolUse", "toolResult", "aborted", "user", "aborted"]);
  });

  it("continue from a user message, refuse from an answer, and run a message steered after the end", async () => {
    const seen = await same(async ({ faux, make }) => {
      faux.setResponses([fauxAssistantMessage("continued"), fauxAssistantMessage("steered")]);
      const subject = make({ messages: [user("where were we")] });
      await subject.continue();
      await expect(subject.continue()).rejects.toThrow();
      subject.steer(user("one more thing"));
      await subject.continue();
    });
    expect(seen.messages.map(textOf)).toEqual([
      "where were we",
      "continued",
      "one more thing",
      "steered",
    ]);
  });

  it("end a run whose loop fails (or is aborted outside the stream) with an error answer and an agent_end", async () => {
    const seen = await same(async ({ faux, make }) => {
      let mode: "broken" | "fine" | "stuck" = "broken";
      const stuck = gate();
      faux.setResponses([fauxAssistantMessage("fine")]);
      const subject = make({
        transformContext: async (messages, signal) => {
          if (mode === "broken") throw new Error("transform broke");
          if (mode === "stuck") {
            stuck.entered();
            await new Promise((_, reject) =>
              signal?.addEventListener("abort", () => reject(new Error("stopped")), { once: true }),
            );
          }
          return messages;
        },
      });
      await subject.prompt("hello");
      mode = "fine";
      await subject.prompt("again");
      mode = "stuck";
      const run = subject.prompt("and again");
      await stuck.reached;
      subject.abort();
      await run;
    });
    const answers = seen.messages.filter((m) => m.role === "assistant");
    expect(answers.map((m) => [m.stopReason, m.errorMessage, textOf(m)])).toEqual([
      ["error", "transform broke", ""],
      ["stop", undefined, "fine"],
      ["aborted", "stopped", ""],
    ]);
  });
});
