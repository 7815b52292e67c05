import { join } from "node:path";
import { API_TOKEN_FILE, existingApiToken } from "../channels/http/api-token.js";
import { localUrl, readGatewayFile } from "../channels/http/gateway-file.js";
import { ExitCode, UsageError } from "../cli/cli-error.js";
import { rejectExtraArguments } from "../cli/extra-arguments.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { totalsFromJson } from "../gateway/gateway-status.js";
import { totalsText } from "../terminal/status-text.js";
import { terminalSafe } from "../terminal/terminal-safe.js";
import { loadCliConfig } from "./load-cli-config.js";

/** How long the gateway has to answer before it is reported as not answering. */
const TIMEOUT_MS = 10_000;

/**
 * `guppy status`: asks the gateway running on this home (gateway.json, as `guppy chat` finds it)
 * for GET /v1/status and prints its uptime, model, channels, threads, events and usage; `--json`
 * prints the answer as it came. No gateway: one line and exit 1.
 */
export async function statusCommand(args: CliArgs): Promise<number> {
  rejectExtraArguments(args, "guppy status [--json]");
  const config = loadCliConfig(args);
  const gateway = readGatewayFile(config.home);
  const notRunning = () => {
    const address = localUrl(config.httpHost, config.httpPort).replace(/^http:\/\//, "");
    process.stdout.write(
      args.flags.json === true
        ? `${JSON.stringify({ status: "not running", address })}\n`
        : `guppy is not running (no gateway on ${address})\n`,
    );
    return ExitCode.failed;
  };
  if (!gateway) return notRunning();
  const token = existingApiToken(config);
  if (!token) {
    throw new UsageError(
      `guppy serve (pid ${gateway.pid}) runs on ${config.home} but its API token is not in ${join(config.home, API_TOKEN_FILE)}: set GUPPY_API_TOKEN as it has it`,
    );
  }
  let response: Response;
  try {
    response = await fetch(`${gateway.url}/v1/status`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    // Its pid is another process's now, or it is starting or stopping: nothing answers there.
    if ((error as { cause?: { code?: string } }).cause?.code === "ECONNREFUSED") {
      return notRunning();
    }
    throw new Error(`guppy serve (pid ${gateway.pid}) at ${gateway.url} did not answer: ${error}`);
  }
  const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok) {
    const message = (json.error as { message?: unknown } | undefined)?.message;
    throw new Error(
      `guppy serve (pid ${gateway.pid}) at ${gateway.url} refused the status: ${typeof message === "string" ? message : `HTTP ${response.status}`}`,
    );
  }
  process.stdout.write(
    args.flags.json === true ? `${JSON.stringify(json, null, 2)}\n` : statusLines(json),
  );
  return ExitCode.ok;
}

/** GET /v1/status's answer as a few readable lines. */
function statusLines(json: Record<string, unknown>): string {
  const obj = (v: unknown) => (v ?? {}) as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === "number" ? v : 0);
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  const channels = Array.isArray(json.channels) ? json.channels.map(obj) : [];
  const threads = obj(json.threads);
  const events = obj(json.events);
  const next = events.next ? obj(events.next) : undefined;
  const usage = obj(json.usage);
  const count = num(events.count);
  const memory = obj(json.memory);
  const errors = Array.isArray(json.recent_errors) ? json.recent_errors.map(obj) : [];
  const last = errors.at(-1);
  return `${[
    `guppy is running (pid ${num(json.pid)}, up ${duration(num(json.uptime_seconds))}, since ${str(json.started)})`,
    `model     ${str(json.model)}`,
    `channels  ${channels.map((c) => `${str(c.name)} ${str(c.state)}`).join(", ")}`,
    `threads   ${num(threads.running)} running, ${num(threads.queued)} queued, ${num(threads.loaded)} loaded`,
    `events    ${count} scheduled${next ? `, next ${str(next.id)} at ${str(next.at)} (${str(next.target)})` : ""}`,
    `today     ${totalsText(totalsFromJson(usage.today))}`,
    `month     ${totalsText(totalsFromJson(usage.month))}`,
    ...(json.memory
      ? [`memory    ${mb(num(memory.rss_bytes))} RSS, ${mb(num(memory.heap_used_bytes))} heap`]
      : []),
    // The newest only: the rest are in the log (or GET /v1/status's `recent_errors`).
    ...(last
      ? [
          `problems  ${errors.length} recent warning(s)/error(s), last at ${str(last.time)}: ${terminalSafe(str(last.message))}`,
        ]
      : []),
  ].join("\n")}\n`;
}

/** `123.4 MB` (10^6 bytes, as the status page shows it). */
function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** `3 d 4 h`, `2 h 5 min`, `12 min`, `40 s`. */
function duration(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  if (m > 0) return `${m} min`;
  return `${Math.floor(seconds)} s`;
}
