import {
  type AgentContext,
  type AgentEvent,
  type AgentLoopConfig,
  type AgentMessage,
  type AgentTool,
  runAgentLoop,
  runAgentLoopContinue,
  type StreamFn,
} from "@mariozechner/pi-agent-core";
import type { Api, ImageContent, Model } from "@mariozechner/pi-ai";
import { abortableTools } from "./abortable-tools.js";
import { zeroUsage } from "./message-text.js";

/**
 * A thread's agent: its transcript and one run of pi-agent-core's loop at a time, with a steering
 * queue and an abort. What pi-agent-core's `Agent` class does for the runner, without what the
 * runner never uses (listener sets awaited per event, follow-up queues, streaming state, a copy
 * of the transcript and the tools for every run): a run's ~10 events each reached the runner
 * through two async calls there — per prompt, several microseconds of the agents' thread, which
 * every other run waits on. Same loop, same events, same order; `onEvent` is called synchronously
 * after the transcript took the event in. One difference, by design: a tool call of a batch that has
 * not started when a message is steered is not run — it gets SKIPPED_FOR_STEER as its result (an
 * error, so pairing stays valid) and the model sees the steer right after the batch, instead of
 * after every call it issued ran (seed 002: the user changed course; a `rm` queued behind a long
 * `bash` should not run once they said "stop, do X instead").
 */
export interface LoopAgent {
  readonly state: LoopAgentState;
  /** One user message (text, images) and the loop until the model stops. Throws while running. */
  prompt(text: string, images?: ImageContent[]): Promise<void>;
  /** The loop again from the transcript as it is (its last message a user or tool result). */
  continue(): Promise<void>;
  /** Cancels the run: its stream and tools get the abort signal. */
  abort(): void;
  /**
   * A message for the running loop, taken after the running tool call (one per turn): the batch's
   * calls not started yet are skipped.
   */
  steer(message: AgentMessage): void;
  clearAllQueues(): void;
}

export interface LoopAgentState {
  systemPrompt: string;
  readonly model: Model<Api>;
  /** The transcript: assigned whole (compaction, reset) or grown by the run's messages. */
  messages: AgentMessage[];
  /** The tools a run offers the model: assigned whole between runs (a guest's run has fewer). */
  tools: AgentTool[];
}

export interface LoopAgentOptions {
  model: Model<Api>;
  messages: AgentMessage[];
  tools: AgentTool[];
  convertToLlm: AgentLoopConfig["convertToLlm"];
  transformContext?: AgentLoopConfig["transformContext"];
  afterToolCall?: AgentLoopConfig["afterToolCall"];
  streamFn: StreamFn;
  sessionId?: string;
  toolExecution?: AgentLoopConfig["toolExecution"];
  /** Every loop event, after the transcript took it in. Must not throw. */
  onEvent(event: AgentEvent): void;
}

/** The result of a call not run because a message was steered while its batch went on. */
export const SKIPPED_FOR_STEER = "skipped: the user changed course";

/** What `prompt` and `continue` reject with while a run is going (the runner checks first). */
const ALREADY_RUNNING = "The agent is already running.";

export function createLoopAgent(options: LoopAgentOptions): LoopAgent {
  const { onEvent } = options;
  const state: LoopAgentState = {
    systemPrompt: "",
    model: options.model,
    messages: options.messages.slice(),
    tools: options.tools.slice(),
  };
  let steering: AgentMessage[] = [];
  let active: AbortController | undefined;

  /** The oldest steered message, taken off the queue (one per turn). */
  const takeSteered = (): AgentMessage | undefined => {
    const first = steering[0];
    if (first !== undefined) steering = steering.slice(1);
    return first;
  };

  const emit = (event: AgentEvent): void => {
    if (event.type === "message_end") state.messages.push(event.message);
    onEvent(event);
  };

  /** The loop's settings for one run; the first steering poll skipped when `skipSteering`. */
  const config = (skipSteering: boolean): AgentLoopConfig => ({
    model: state.model,
    sessionId: options.sessionId,
    transport: "auto",
    toolExecution: options.toolExecution,
    convertToLlm: options.convertToLlm,
    transformContext: options.transformContext,
    afterToolCall: options.afterToolCall,
    // Calls run one at a time (sequential), so this is asked just before each starts: a steer
    // waiting means the rest of the batch is skipped and the loop takes the steer after it.
    beforeToolCall: async () =>
      steering.length > 0 ? { block: true, reason: SKIPPED_FOR_STEER } : undefined,
    getSteeringMessages: async () => {
      if (skipSteering) {
        skipSteering = false;
        return [];
      }
      const first = takeSteered();
      return first === undefined ? [] : [first];
    },
    getFollowUpMessages: async () => [],
  });

  /**
   * The transcript as a run starts. runAgentLoop copies `messages` before adding to it;
   * runAgentLoopContinue adds to the array it is given, so it gets a copy (`copy`).
   */
  const context = (copy: boolean): AgentContext => ({
    systemPrompt: state.systemPrompt,
    messages: copy ? state.messages.slice() : state.messages,
    // Each ends soon after an abort, whether it listens to its signal or not.
    tools: abortableTools(state.tools),
  });

  async function run(loop: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
    if (active) throw new Error(ALREADY_RUNNING);
    const controller = new AbortController();
    active = controller;
    try {
      await loop(controller.signal);
    } catch (error) {
      // The loop itself failed (not the provider: its errors come as a message): the run ends
      // with an error answer in the transcript, as pi-agent-core's Agent ends it.
      const failure: AgentMessage = {
        role: "assistant",
        content: [{ type: "text", text: "" }],
        api: state.model.api,
        provider: state.model.provider,
        model: state.model.id,
        usage: zeroUsage(),
        stopReason: controller.signal.aborted ? "aborted" : "error",
        errorMessage: error instanceof Error ? error.message : String(error),
        timestamp: Date.now(),
      };
      state.messages.push(failure);
      onEvent({ type: "agent_end", messages: [failure] });
    } finally {
      active = undefined;
    }
  }

  const runPrompts = (prompts: AgentMessage[], skipSteering = false) =>
    run((signal) =>
      runAgentLoop(prompts, context(false), config(skipSteering), emit, signal, options.streamFn),
    );

  return {
    state,
    prompt(text, images) {
      const content: Array<{ type: "text"; text: string } | ImageContent> = [
        { type: "text", text },
      ];
      if (images && images.length > 0) content.push(...images);
      return runPrompts([{ role: "user", content, timestamp: Date.now() }]);
    },
    continue() {
      if (active) return Promise.reject(new Error(ALREADY_RUNNING));
      const last = state.messages[state.messages.length - 1];
      if (!last) return Promise.reject(new Error("No messages to continue from."));
      if (last.role === "assistant") {
        // A finished answer: a message steered meanwhile starts the next turn.
        const first = takeSteered();
        if (first !== undefined) return runPrompts([first], true);
        return Promise.reject(new Error("Cannot continue from an assistant message."));
      }
      return run((signal) =>
        runAgentLoopContinue(context(true), config(false), emit, signal, options.streamFn),
      );
    },
    abort() {
      active?.abort();
    },
    steer(message) {
      steering.push(message);
    },
    clearAllQueues() {
      steering = [];
    },
  };
}
