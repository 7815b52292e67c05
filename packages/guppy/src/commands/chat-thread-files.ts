import {
  type AgentRunner,
  createLogTail,
  type Logger,
  type LogTail,
  type RunResult,
  type Store,
  threadFigures,
} from "@guppy/core";

/** The chat's runs, with the thread files `guppy serve` keeps besides the context. */
export interface ChatThreadFiles {
  /** Runs one prompt, then moves the log cursor past its lines. */
  prompt(text: string): Promise<RunResult>;
  /** At exit: the log cursor, and the thread's figures to status.json. */
  close(): void;
}

/**
 * The terminal keeps a thread's `log-cursor` and `status.json` as the orchestrator does: without
 * the cursor, the gateway's next run of the thread backfilled every line typed in the chat as
 * "posted while I was not running" — the context already holds them. The cursor moves after each
 * run (a few bytes in place; a chat killed later does not lose it) and not past a line another
 * sender logged (it is backfilled, as in the gateway). Failures are warnings: the chat goes on.
 */
export function createChatThreadFiles(
  store: Store,
  runner: AgentRunner,
  logger: Logger,
): ChatThreadFiles {
  const { threadId } = runner;
  let tail: LogTail | undefined;
  let lastActivity = Date.now();
  const saveCursor = () => {
    try {
      tail?.save();
    } catch (error) {
      logger.warn(`Could not save the log cursor of ${threadId}`, { error: String(error) });
    }
  };
  return {
    async prompt(text) {
      // The id the runner logs the prompt with, which the cursor then knows as a run's.
      const messageId = `local-${Date.now()}`;
      try {
        tail ??= createLogTail(store, threadId);
        tail.afterRun(messageId);
      } catch (error) {
        logger.warn(`Could not read the log cursor of ${threadId}`, { error: String(error) });
      }
      try {
        return await runner.prompt({ text, messageId, userName: process.env.USER ?? "user" });
      } finally {
        lastActivity = Date.now();
        saveCursor();
      }
    },
    close() {
      saveCursor();
      try {
        store.saveStatus(threadId, {
          lastActivity: new Date(lastActivity).toISOString(),
          ...threadFigures(runner.stats()),
        });
      } catch (error) {
        logger.warn(`Could not save the status of ${threadId}`, { error: String(error) });
      }
    },
  };
}
