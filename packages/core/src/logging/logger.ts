import { format } from "node:util";
import { booleanValue } from "../config/setting-parsers.js";
import type { SettingDefinitions, SettingValues } from "../config/settings-schema.js";

/** Minimal structured logger the runtime writes through; the CLI and gateway choose the sink. */
export type LogLevel = "debug" | "info" | "warn" | "error";

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * Writes one readable line per entry to a stream (stderr by default) at or above `level`:
 * `guppy: warning: …`, as the CLI's own warnings read.
 */
export function createLineLogger(
  options: { level?: LogLevel; write?: (line: string) => void } = {},
): Logger {
  const min = order[options.level ?? "warn"];
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const log = (level: LogLevel, message: string, fields?: LogFields) => {
    if (order[level] < min) return;
    const extra = fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : "";
    write(`guppy: ${level === "warn" ? "warning" : level}: ${message}${extra}`);
  };
  return {
    debug: (m, f) => log("debug", m, f),
    info: (m, f) => log("info", m, f),
    warn: (m, f) => log("warn", m, f),
    error: (m, f) => log("error", m, f),
  };
}

export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};

/** Longest line kept of what a library prints to the console (a raw chunk may be megabytes). */
const CONSOLE_LINE_CHARS = 300;

/**
 * Routes what libraries print with console.error/console.warn — the OpenAI SDK prints a
 * provider's malformed chunk raw, whatever its size — to `logger` at `level`, cut to one short
 * line. Returns the function that puts the console back.
 */
export function routeConsoleTo(logger: Logger, level: LogLevel): () => void {
  const { error, warn } = console;
  const route = (...args: unknown[]) => {
    const text = format(...args).slice(0, 4 * CONSOLE_LINE_CHARS);
    let line = text.replace(/\s+/g, " ").trim();
    if (line.length > CONSOLE_LINE_CHARS) line = `${line.slice(0, CONSOLE_LINE_CHARS - 1)}…`;
    logger[level](`a library printed: ${line}`);
  };
  console.error = route;
  console.warn = route;
  return () => {
    console.error = error;
    console.warn = warn;
  };
}

/** The logger's setting. */
export const loggingSettings = {
  debug: {
    env: "GUPPY_DEBUG",
    parse: booleanValue,
    default: false,
    description: "Verbose logging to stderr",
  },
} satisfies SettingDefinitions;

export type LoggingSettingValues = SettingValues<typeof loggingSettings>;
