import type { Logger } from "@guppy/core";
import type { Logger as ChatLogger } from "chat";

/** Chat SDK's logger interface on top of guppy's (SDK chatter goes to debug, problems to warn/error). */
export function toChatLogger(logger: Logger, prefix = "chat"): ChatLogger {
  const fields = (args: unknown[]) => (args.length > 0 ? { args: args.map(String) } : undefined);
  return {
    child: (p) => toChatLogger(logger, `${prefix}:${p}`),
    debug: (m, ...a) => logger.debug(`${prefix}: ${m}`, fields(a)),
    info: (m, ...a) => logger.debug(`${prefix}: ${m}`, fields(a)),
    warn: (m, ...a) => logger.warn(`${prefix}: ${m}`, fields(a)),
    error: (m, ...a) => logger.error(`${prefix}: ${m}`, fields(a)),
  };
}
