import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { EventBusReport, Logger, OrchestratorEvent, Redactor } from "@guppy/core";
import { oneLine } from "@guppy/core/runner";
import { pino } from "pino";
import { terminalSafe } from "../terminal/terminal-safe.js";
import { createRecentErrors, type LoggedProblem } from "./recent-errors.js";
import { createLogFileWriter, createTurnBatchedWriter } from "./turn-batched-writer.js";

export interface GatewayLogger {
  /** Writes JSON lines (pino) to the log file and a readable line to the terminal for warnings and errors. */
  logger: Logger;
  /** One readable terminal line (and a JSON line in the file) per orchestrator event. */
  event(event: OrchestratorEvent): void;
  /** A readable line on the terminal only (startup banner, shutdown progress). */
  say(text: string): void;
  /** The terminal went away (its pipe closed, it hung up): from now on lines go to the file only. */
  terminalClosed(reason: string): void;
  readonly path: string;
  flush(): void;
  /**
   * The last warnings and errors logged (a run's error event among them), oldest first, redacted
   * as the log is: GET /v1/status's `recent_errors`.
   */
  recentErrors(): LoggedProblem[];
}

/** `<home>/logs/gateway.log`: pino JSON lines; the terminal gets one short line per event. */
export function createGatewayLogger(options: {
  home: string;
  debug: boolean;
  /** Where terminal lines go (whole lines, each ending in a newline); stdout by default. */
  write?: (lines: string) => void;
  /** Takes configured secrets out of every line, in the file and on the terminal. */
  redactor?: Redactor;
}): GatewayLogger {
  const redact = options.redactor?.active ? options.redactor.text : (text: string) => text;
  const dir = join(options.home, "logs");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "gateway.log");
  // HH:MM:SS (UTC), worked out once per second: under load there are thousands of lines a second.
  let stampSecond = -1;
  let stampText = "";
  const stamp = () => {
    const now = Date.now();
    const second = Math.floor(now / 1000);
    if (second !== stampSecond) {
      stampSecond = second;
      stampText = new Date(now).toISOString().slice(11, 19);
    }
    return stampText;
  };
  const writeTerminal = options.write ?? ((lines: string) => process.stdout.write(lines));
  let terminalOpen = true;
  const terminal = createTurnBatchedWriter((lines) => {
    if (terminalOpen) writeTerminal(lines);
  });
  // One line per entry whatever it holds: a remote user's thread id or text may carry line
  // breaks and escape sequences.
  const say = (text: string) => {
    terminal.write(`${stamp()} ${terminalSafe(redact(text))}\n`);
  };
  const recent = createRecentErrors();
  /** A warning or error: on the terminal and in the ring the status page reads. */
  const problem = (level: LoggedProblem["level"], text: string) => {
    say(text);
    recent.add(level, terminalSafe(redact(text)));
  };
  const destination = createLogFileWriter(path, (error) =>
    say(`warning: could not write ${path}: ${String(error)}`),
  );
  const file = pino(
    { level: options.debug ? "debug" : "info", base: { pid: process.pid } },
    { write: (line: string) => destination.write(redact(line)) },
  );

  const logger: Logger = {
    debug: (m, f) => file.debug(f ?? {}, m),
    info: (m, f) => file.info(f ?? {}, m),
    warn: (m, f) => {
      file.warn(f ?? {}, m);
      problem("warn", `warning: ${m}`);
    },
    error: (m, f) => {
      file.error(f ?? {}, m);
      problem("error", `error: ${m}${f?.error ? ` (${String(f.error)})` : ""}`);
    },
  };

  return {
    logger,
    path,
    say,
    event(event) {
      const line = describeEvent(event);
      if (line === undefined) return;
      file.info({ event: eventFields(event) }, line);
      say(`${event.threadId}  ${line}`);
      // A run's error (the provider failed, the context overflowed) is the user's problem to see.
      if (event.type === "runner" && event.event.type === "error") {
        recent.add("error", terminalSafe(redact(`${event.threadId} ${line.trim()}`)));
      }
    },
    terminalClosed(reason) {
      if (!terminalOpen) return;
      terminalOpen = false;
      file.warn(
        { reason },
        `The terminal is gone: guppy serve keeps running and logs to ${path} only`,
      );
    },
    flush() {
      terminal.flushSync();
      destination.flushSync();
    },
    recentErrors: recent.list,
  };
}

/** The readable line for what the event bus did: an event fired, was skipped, missed or invalid. */
export function describeEventBusReport(report: EventBusReport): string {
  switch (report.type) {
    case "fired":
      return `${report.threadId}  event "${report.id}" fired${report.late ? " (late: its time passed while guppy was down)" : ""}`;
    case "skipped":
      return `event "${report.id}" skipped: ${oneLine(report.reason, 120)}`;
    case "missed":
      return `event "${report.id}": ${report.count >= 10_000 ? "10000+" : report.count} run(s) missed while guppy was down (recorded, not replayed)`;
    case "loaded":
      return `events: ${report.count} scheduled event(s) loaded in ${report.ms} ms`;
    case "invalid":
      return `event file ${report.id}.json is invalid: ${oneLine(report.problem, 160)}; renamed to ${report.file}`;
  }
}

/** The readable line for an event, or undefined for events too chatty for the terminal. */
export function describeEvent(event: OrchestratorEvent): string | undefined {
  switch (event.type) {
    case "queued":
      return `queued ${event.inboxId} (position ${event.position})`;
    case "busy":
      return `busy: a prompt was refused (${event.queued} queued)`;
    case "activated":
      return "agent loaded";
    case "deactivated":
      return "agent unloaded (idle)";
    case "steered":
      return event.delivered ? "steer delivered" : "steer dropped (nothing running)";
    case "aborted":
      return event.delivered ? "abort delivered" : "abort ignored (nothing running)";
    case "notice":
      return `notice: ${oneLine(event.text, 100)}`;
    case "message":
      return `message posted${event.from ? ` from ${event.from}` : ""}: ${oneLine(event.text, 100)}`;
    case "backfilled":
      return `backfilled ${event.count} message(s)`;
    case "replayed":
      return event.action === "rerun"
        ? `replaying ${event.inboxId} (interrupted before any tool ran)`
        : `reporting ${event.inboxId} as interrupted (it had run tools)`;
    case "runner": {
      const e = event.event;
      switch (e.type) {
        case "run_start":
          return `▶ run: ${oneLine(e.text, 60)}`;
        case "tool_call":
          return `  tool ${e.name} ${oneLine(JSON.stringify(e.args ?? {}), 80)}`;
        case "tool_result":
          return `  tool ${e.name} ${e.isError ? "failed" : "ok"}: ${oneLine(e.text, 60)}`;
        case "error":
          return `  error (${e.kind}): ${oneLine(e.message, 100)}`;
        case "run_end":
          if (e.quiet) return `■ heartbeat: nothing for the user (${e.stopReason}), not kept`;
          return `■ ${e.stopReason}: ${oneLine(e.text, 60)}`;
        default:
          return undefined;
      }
    }
  }
}

function eventFields(event: OrchestratorEvent): Record<string, unknown> {
  if (event.type !== "runner") return event;
  const e = event.event;
  const { threadId, inboxId } = event;
  // Object literals, not a spread of shared fields: this runs for several events per prompt.
  switch (e.type) {
    case "run_start":
      return { type: e.type, threadId, inboxId, chars: e.text.length };
    case "tool_call":
      return { type: e.type, threadId, inboxId, tool: e.name, toolCallId: e.toolCallId };
    case "tool_result":
      return {
        type: e.type,
        threadId,
        inboxId,
        tool: e.name,
        isError: e.isError,
        chars: e.text.length,
      };
    case "error":
      return { type: e.type, threadId, inboxId, kind: e.kind, message: e.message };
    case "run_end":
      return { type: e.type, threadId, inboxId, stopReason: e.stopReason, chars: e.text.length };
    default:
      return { type: e.type, threadId, inboxId };
  }
}
