import { constants } from "node:os";
import { isatty } from "node:tty";
import { killRunningTrees } from "@guppy/core/sandbox";
import { oneShot, whenOutputFails } from "../cli/output-errors.js";

/**
 * How long a run stopped by SIGHUP or SIGTERM may take to end (its tool's tree killed, its turn
 * saved) before guppy exits anyway, killing what is left.
 */
const STOP_WAIT_MS = 5000;

/** SIGHUP (the terminal was closed, an ssh session dropped) and SIGTERM (`kill`). */
const STOP_SIGNALS = ["SIGHUP", "SIGTERM"] as const;

export interface ChatStop {
  /** Aborted when SIGHUP or SIGTERM came: the terminal stops reading and returns. */
  readonly signal: AbortSignal;
  /** The exit code of a chat stopped by a signal (128 + its number), else undefined. */
  exitCode(): number | undefined;
  /** The signal's name, for the one line `chat -m` prints. */
  stoppedBy(): NodeJS.Signals | undefined;
  /**
   * Removes the handlers, once the chat is done. A chat stopped by SIGHUP on a terminal dies of
   * SIGHUP here (see `dieOfHangup`).
   */
  end(): void;
}

/**
 * Makes SIGHUP and SIGTERM end `guppy chat` the way Ctrl+C ends a run, then the chat: the run is
 * aborted (the LLM stream stopped, the tool command's whole process tree killed) and saves what it
 * did as an aborted turn, and the command returns `exitCode()`. Without this node's default ends
 * the process at once, and the tool command — in its own process group, so the terminal's SIGHUP
 * does not reach it — goes on with its side effects. Whatever way the process exits, the tool
 * commands still running are killed first (SIGKILL). A run that does not end within a few
 * seconds is not waited for: `beforeExit` runs and the process exits with the signal's code.
 */
export function watchStopSignals(abort: () => void, beforeExit: () => void): ChatStop {
  const controller = new AbortController();
  // Asked now: a terminal that hung up no longer says it is one.
  const terminal = [0, 1, 2].some((fd) => isatty(fd));
  let stoppedBy: NodeJS.Signals | undefined;
  const code = () => (stoppedBy ? 128 + constants.signals[stoppedBy] : undefined);
  const exitNow = () => {
    killRunningTrees();
    try {
      beforeExit();
    } finally {
      end();
      process.exit(code());
    }
  };
  const end = () => {
    for (const name of STOP_SIGNALS) process.off(name, onSignal);
    whenOutputFails(oneShot);
    if (stoppedBy === "SIGHUP" && terminal) dieOfHangup();
  };
  const onSignal = (name: NodeJS.Signals) => {
    if (stoppedBy !== undefined) {
      // A closed terminal may send SIGHUP twice (the kernel, then the shell): only a second
      // SIGTERM means "now".
      if (name === "SIGTERM") exitNow();
      return;
    }
    stoppedBy = name;
    process.exitCode = code();
    // Nobody may read the terminal any more (EIO): that must not end the process before the
    // turn is saved.
    whenOutputFails(() => {});
    controller.abort();
    abort();
    setTimeout(exitNow, STOP_WAIT_MS).unref();
  };
  for (const name of STOP_SIGNALS) process.on(name, onSignal);
  // A terminal that hung up fails the next write (EIO), which may come before the SIGHUP (the
  // shell passes it on to its jobs): the same stop. Other output errors end the chat as before —
  // a reader that went away (EPIPE: `guppy chat … | head -1`) quietly, exit code 0.
  whenOutputFails((stream, error) => {
    if (error.code === "EIO") onSignal("SIGHUP");
    else oneShot(stream, error);
  });
  // However the process ends (an output error, an uncaught one), no tool command outlives it.
  const onExit = () => killRunningTrees();
  process.on("exit", onExit);
  return {
    signal: controller.signal,
    exitCode: code,
    stoppedBy: () => stoppedBy,
    end,
  };
}

/**
 * After a hangup, a process that had a terminal for stdin, stdout or stderr ends by SIGHUP itself
 * (the handlers removed, the default action) rather than exiting: on exit node 20 restores the
 * terminal's settings and aborts when the terminal is gone (EIO; nodejs/node#51519) — a native
 * stack trace and a core dump instead of the exit. A shell sees 129 either way.
 */
function dieOfHangup(): void {
  killRunningTrees();
  process.kill(process.pid, "SIGHUP");
}
