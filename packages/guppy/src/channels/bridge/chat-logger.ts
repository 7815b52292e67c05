import type { GuppyConfig, Logger } from "@guppy/core";
import type { Logger as ChatLogger } from "chat";

/** How much of one logged value is kept (a response body, a whole update). */
const VALUE_MAX_CHARS = 1000;

/** Field names of the log file's own (pino's): an adapter's detail of that name is renamed. */
const RESERVED = new Set(["level", "time", "msg", "pid", "hostname", "args"]);

/** The values of the settings marked secret (bot tokens, API keys) that `config` holds. */
export function secretValues(config: GuppyConfig): string[] {
  const values: string[] = [];
  for (const [key, def] of Object.entries(config.settings)) {
    const value = (config as unknown as Record<string, unknown>)[key];
    if (def.secret && typeof value === "string" && value !== "") values.push(value);
  }
  return values;
}

/** One logged value as text (not yet capped): an Error as "Name: message", an object as JSON. */
function describe(value: unknown): string | number | boolean | null {
  if (value === null || typeof value === "number" || typeof value === "boolean") return value;
  if (typeof value === "string") return value;
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  if (typeof value !== "object") return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value); // a cycle
  }
}

/** Values this short are not masked: a placeholder key ("ollama", "x") would blank every mention. */
const MASKED_MIN_CHARS = 8;

/**
 * Chat SDK's logger interface on top of guppy's (SDK chatter goes to debug, problems to
 * warn/error). The adapters pass details as an object (`{ error, threadId }`): its fields become
 * the line's fields — they were printed as "[object Object]" — with every secret setting's value
 * masked (an adapter may log a request URL, and Telegram's holds the bot token).
 */
export function toChatLogger(
  logger: Logger,
  prefix = "chat",
  secrets: readonly string[] = [],
): ChatLogger {
  const masking = secrets.filter((secret) => secret.length >= MASKED_MIN_CHARS);
  const mask = (text: string) =>
    masking.reduce((masked, secret) => masked.split(secret).join("****"), text);
  // Masked before it is cut: a cut through a token would leave its first part unmasked.
  const masked = (value: unknown) => {
    const described = describe(value);
    return typeof described === "string" ? mask(described).slice(0, VALUE_MAX_CHARS) : described;
  };
  const fields = (args: unknown[]): Record<string, unknown> | undefined => {
    if (args.length === 0) return undefined;
    const [only] = args;
    if (
      args.length === 1 &&
      typeof only === "object" &&
      only !== null &&
      !(only instanceof Error) &&
      !Array.isArray(only)
    ) {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(only)) {
        out[RESERVED.has(key) ? `detail_${key}` : key] = masked(value);
      }
      return out;
    }
    return { args: args.map(masked) };
  };
  return {
    child: (p) => toChatLogger(logger, `${prefix}:${p}`, secrets),
    debug: (m, ...a) => logger.debug(`${prefix}: ${mask(m)}`, fields(a)),
    info: (m, ...a) => logger.debug(`${prefix}: ${mask(m)}`, fields(a)),
    warn: (m, ...a) => logger.warn(`${prefix}: ${mask(m)}`, fields(a)),
    error: (m, ...a) => logger.error(`${prefix}: ${mask(m)}`, fields(a)),
  };
}
