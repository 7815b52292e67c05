import { isOverflowError } from "../context/compaction.js";
import { createDeliveredWatch } from "../messaging/delivered-answer.js";
import { newRunState, runResult, toolRoundsNote } from "./agent-events.js";
import type { AgentThread } from "./agent-thread.js";
import { oneLine } from "./message-text.js";
import { isHeartbeatOk } from "./quiet-run.js";
import type { PromptInput, RunResult } from "./types.js";

/**
 * One prompt's run on `thread`: the prompt logged, the loop run (once more after an overflow),
 * then the answer logged and the run's end told. A heartbeat's exchange is kept (saved, logged,
 * shown) only if it says something. `runner.running` is the runner's own flag.
 */
export async function runPrompt(
  thread: AgentThread,
  runner: { running: boolean },
  input: PromptInput,
): Promise<RunResult> {
  const { threadId, store, logger, redactor, agent, quiet, emit } = thread;
  if (runner.running) throw new Error(`A run is already active on ${threadId}.`);
  runner.running = true;
  thread.runListener = input.onEvent;
  thread.run = newRunState();
  const heartbeat = input.origin?.kind === "heartbeat";
  const rewritesBefore = thread.rewrites;
  const sent = createDeliveredWatch(threadId);
  thread.sent = sent;
  try {
    agent.state.tools = thread.options.toolsFor?.(input.role ?? "owner") ?? thread.options.tools;
    agent.state.systemPrompt = thread.currentSystemPrompt();
    const promptDate = new Date();
    const logPrompt = () => {
      if (!input.logged)
        thread.safeLog(() =>
          store.appendLog(threadId, {
            date: promptDate.toISOString(),
            messageId: input.messageId ?? `local-${promptDate.getTime()}`,
            userId: input.userId ?? "local",
            userName: input.userName ?? "user",
            text: input.text,
            isBot: false,
          }),
        );
    };
    // A heartbeat's prompt is logged once the beat is kept (it said something, or was steered).
    quiet.start(heartbeat, logPrompt);
    if (!heartbeat) logPrompt();
    emit({ type: "run_start", threadId, text: input.text });
    try {
      await agent.prompt(thread.stamped(input.text, promptDate), input.images);
      await recoverFromOverflow(thread);
    } catch (error) {
      logger.error(`Run failed on ${threadId}`, { error: String(error) });
      emit({ type: "error", kind: "internal", message: oneLine(String(error)) });
    }
    const outcome = runResult(thread.run, thread.idleTimeoutMs);
    // Nothing for the user (or a beat that failed or was stopped): the exchange leaves no
    // trace, so the next beat's request is what this one's was.
    // A beat a person steered is a conversation: it is kept whatever it ended with.
    const nothingToSay =
      heartbeat &&
      !quiet.steered &&
      (outcome.stopReason === "error" ||
        outcome.stopReason === "aborted" ||
        isHeartbeatOk(outcome.text));
    if (nothingToSay) {
      quiet.drop();
      thread.dropRun(thread.rewrites !== rewritesBefore);
      logger.info(`Heartbeat on ${threadId}: nothing for the user (${outcome.stopReason})`, {
        ...(outcome.errorMessage ? { error: outcome.errorMessage } : {}),
      });
      emit({ type: "run_end", text: "", stopReason: outcome.stopReason, quiet: true });
      return redactor.value({ ...outcome, text: "" });
    }
    quiet.release();
    thread.persist();
    const result = redactor.value(outcome);
    if (result.stopReason === "error" && result.errorMessage) {
      emit({ type: "error", kind: "provider", message: result.errorMessage });
    }
    if (result.stopReason === "max_tool_rounds") {
      emit({ type: "error", kind: "tool_rounds", message: toolRoundsNote(thread.run.toolRounds) });
    }
    const delivered = sent.delivered(result.text);
    if (result.text !== "" && !delivered) {
      thread.safeLog(() =>
        store.appendLog(threadId, {
          date: new Date().toISOString(),
          messageId: `bot-${Date.now()}`,
          userId: "guppy",
          userName: "guppy",
          text: result.text,
          isBot: true,
        }),
      );
    }
    emit({
      type: "run_end",
      text: result.text,
      stopReason: result.stopReason,
      ...(result.errorMessage ? { errorMessage: result.errorMessage } : {}),
      ...(delivered ? { delivered: true as const } : {}),
    });
    return result;
  } finally {
    quiet.end();
    agent.clearAllQueues();
    runner.running = false;
    thread.events.endThinking();
    thread.runListener = undefined;
  }
}

/**
 * A provider still answered "context too long" (its tokenizer counts more than ours): take the
 * error out, compact (the engine drops the oldest turns if the summary fails) and retry once.
 */
async function recoverFromOverflow(thread: AgentThread): Promise<void> {
  const { agent, run } = thread;
  const state = agent.state.messages;
  const last = state[state.length - 1];
  if (!isOverflowError(last)) return;
  thread.logger.warn(
    `The provider said the context of ${thread.threadId} is too long; compacting and retrying`,
    { error: last.errorMessage ?? "" },
  );
  agent.state.messages = state.slice(0, -1);
  run.messages = run.messages.filter((m) => m !== last);
  thread.engine.tighten();
  const outcome = await thread.compactOutsideLoop("overflow");
  if (!outcome.compacted) {
    // Nothing older to summarise: the retry's request is trimmed to the tightened budget
    // instead (oldest turns dropped, then long texts cut). The error answer leaves the file.
    thread.rewrites++;
    thread.store.saveContext(thread.threadId, agent.state.messages);
    thread.persisted = agent.state.messages.length;
  }
  if (run.abortRequested) return;
  await agent.continue();
}
