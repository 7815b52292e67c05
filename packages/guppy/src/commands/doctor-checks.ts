import { existsSync, statfsSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, relative } from "node:path";
import { isConfigError, loadConfig, resolveModel } from "@guppy/core";
import { maskUrlCredentials } from "@guppy/core/config";
import { describeSandbox, resolveSandbox } from "@guppy/core/sandbox";
import { checkBotToken, DISCORD_API_DEFAULT } from "../channels/discord/check-bot-token.js";
import { readGatewayFile } from "../channels/http/gateway-file.js";
import { type AppConfig, checkToolChannels, guppySettings } from "../channels/registry.js";
import {
  checkBotToken as checkTelegramToken,
  TELEGRAM_API_DEFAULT,
} from "../channels/telegram/check-bot-token.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { findLoosePaths, fixPermissions, type LoosePath, octal } from "./home-permissions.js";
import { probeModel } from "./probe-model.js";

// `guppy doctor`'s checks: each gives one line, ✓ or ✗ with the fix, and sometimes indented
// details under it. Every check catches its own failures: a doctor that crashes helps no one.

export type CheckLine =
  | { ok: true; text: string; details?: string[] }
  | { ok: false; text: string; fix: string; details?: string[] };

/** `✓ text` or `✗ text — fix: fix`, then its details indented. */
export function formatCheck(line: CheckLine): string {
  const head = line.ok ? `✓ ${line.text}` : `✗ ${line.text} — fix: ${line.fix}`;
  return [head, ...(line.details ?? []).map((d) => `    ${d}`)].join("\n");
}

const ok = (text: string, details?: string[]): CheckLine => ({
  ok: true,
  text,
  ...(details && details.length > 0 ? { details } : {}),
});
const failed = (text: string, fix: string, details?: string[]): CheckLine => ({
  ok: false,
  text,
  fix,
  ...(details && details.length > 0 ? { details } : {}),
});

/** The Node guppy needs (package.json's engines). */
const NODE_MIN = [20, 15] as const;

export function checkNode(version = process.versions.node): CheckLine {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const good = major > NODE_MIN[0] || (major === NODE_MIN[0] && minor >= NODE_MIN[1]);
  const text = `Node ${version} (guppy needs ${NODE_MIN.join(".")} or later)`;
  return good ? ok(text) : failed(text, "install a current Node LTS (https://nodejs.org)");
}

/** A loose path as the line names it: relative to the home, the home by its own path. */
function describeLoose(home: string, entry: LoosePath): string {
  const name = entry.path === home ? home : relative(home, entry.path);
  return `${name} ${octal(entry.mode)}`;
}

/**
 * The home and its files: private (700 / 600) or not. With `fix`, repairs them first and says
 * what it changed, one indented line a path.
 */
export function checkPermissions(home: string, fix: boolean): CheckLine {
  if (!existsSync(home)) return ok(`home ${home} does not exist yet (it is created private, 700)`);
  try {
    const details: string[] = [];
    if (fix) {
      for (const entry of fixPermissions(home)) {
        const to = entry.mode & 0o700;
        details.push(`${entry.path}: ${octal(entry.mode)} → ${octal(to)}`);
      }
    }
    const { loose, unreadable } = findLoosePaths(home);
    if (unreadable.length > 0) {
      return failed(
        `permissions: cannot list ${unreadable[0]}${unreadable.length > 1 ? ` and ${unreadable.length - 1} more` : ""}`,
        `make it readable by you (chmod u+rwx ${unreadable[0]}), then run guppy doctor again`,
        details,
      );
    }
    if (loose.length > 0) {
      const shown = loose.slice(0, 3).map((entry) => describeLoose(home, entry));
      const more = loose.length > 3 ? `, and ${loose.length - 3} more` : "";
      return failed(
        `permissions: ${loose.length} path${loose.length === 1 ? "" : "s"} in ${home} can be read by others (${shown.join(", ")}${more})`,
        "guppy doctor --fix (home and directories 700, files 600)",
        details,
      );
    }
    const n = details.length;
    const changed = n > 0 ? `: fixed ${n} path${n === 1 ? "" : "s"}` : "";
    return ok(`permissions: ${home} and its files are yours alone (700/600)${changed}`, details);
  } catch (error) {
    return failed(
      `permissions: ${(error as Error).message}`,
      `check who owns ${home} (ls -ld ${home})`,
    );
  }
}

/** The configuration as every command loads it, or the line saying why it does not load. */
export function checkSettings(
  args: CliArgs,
  home: string,
): { line: CheckLine; config?: AppConfig } {
  try {
    const config = loadConfig({
      flags: args.configFlags,
      home: args.home,
      settings: guppySettings,
    });
    checkToolChannels(config);
    const where = existsSync(config.settingsPath)
      ? `${config.settingsPath} reads`
      : `no ${config.settingsPath} (defaults and environment)`;
    return { line: ok(`settings: ${where}`, config.warnings), config };
  } catch (error) {
    if (!isConfigError(error)) throw error;
    return {
      line: failed(
        `settings: ${error.message}`,
        `correct what the line names (${join(home, "settings.json")} or the environment)`,
      ),
    };
  }
}

/** The model answers a tiny request: endpoint reachable, key accepted. */
export async function checkModel(config: AppConfig, timeoutMs?: number): Promise<CheckLine> {
  let resolved: Awaited<ReturnType<typeof resolveModel>>;
  try {
    resolved = await resolveModel(config);
  } catch (error) {
    if (!isConfigError(error)) throw error;
    return failed(`model: ${error.message}`, "guppy setup");
  }
  const { model } = resolved;
  const name = `${model.provider}/${model.id}`;
  const probe = await probeModel(resolved, timeoutMs);
  if (probe.ok) {
    return ok(`model ${name} at ${maskUrlCredentials(model.baseUrl)} answered in ${probe.ms} ms`);
  }
  const refused = /\b(401|403)\b/.test(probe.problem);
  return failed(
    `model ${name}: ${probe.problem}`,
    refused
      ? "set the right key for it (guppy config shows where each value comes from), or run guppy setup"
      : "check the base URL and that the server is up (guppy config shows where each value comes from), or run guppy setup",
  );
}

/** How long a channel's token check waits. */
const CHANNEL_TIMEOUT_MS = 15_000;

/** `text` with `secret` masked wherever it appears (an error quoting a URL with the token). */
function masked(text: string, secret: string): string {
  return secret ? text.split(secret).join("****") : text;
}

function reason(error: unknown): string {
  const e = error as { message?: unknown; cause?: { message?: unknown } } | undefined;
  const cause = e?.cause?.message;
  return String(typeof cause === "string" && cause ? cause : (e?.message ?? error));
}

/** GET or POST `url` and its JSON answer; throws a one-line error naming `shown` (never the token). */
async function askJson(
  url: string,
  shown: string,
  init: RequestInit,
  secret: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(CHANNEL_TIMEOUT_MS) });
    text = await response.text();
  } catch (error) {
    throw new Error(`cannot reach ${shown}: ${masked(reason(error), secret)}`);
  }
  try {
    const body = JSON.parse(text) as unknown;
    if (body && typeof body === "object") {
      return { status: response.status, body: body as Record<string, unknown> };
    }
  } catch {
    // not JSON: said below
  }
  throw new Error(`${shown} answered ${response.status} without JSON`);
}

export async function checkTelegram(config: AppConfig): Promise<CheckLine> {
  const check = await checkTelegramToken(
    config.telegramBotToken ?? "",
    config.telegramApiUrl ?? TELEGRAM_API_DEFAULT,
    CHANNEL_TIMEOUT_MS,
  );
  if (check.ok) return ok(`telegram: bot @${check.username} accepted the token (getMe)`);
  if (check.refused) {
    return failed(
      `telegram: the bot token was refused (${check.problem})`,
      "a token from @BotFather (/mybots → API Token) in TELEGRAM_BOT_TOKEN",
    );
  }
  return failed(`telegram: ${check.problem}`, "check the network (or GUPPY_TELEGRAM_API_URL)");
}

/** Slack's Web API root; SLACK_API_URL points it elsewhere (a test server). */
function slackApi(): string {
  const base = process.env.SLACK_API_URL || "https://slack.com/api/";
  return base.endsWith("/") ? base : `${base}/`;
}

/** One Slack Web API method with a token: its `ok` and `error`, or a line why it could not ask. */
async function slackCall(method: string, token: string) {
  const url = `${slackApi()}${method}`;
  return askJson(
    url,
    `${maskUrlCredentials(url)}`,
    {
      method: "POST",
      headers: {
        Authorization: `Bearer ${token}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
    },
    token,
  );
}

export async function checkSlack(config: AppConfig): Promise<CheckLine> {
  const bot = config.slackBotToken;
  const app = config.slackAppToken;
  if (!bot || !app) {
    const missing = !bot ? "SLACK_BOT_TOKEN" : "SLACK_APP_TOKEN";
    return failed(
      `slack: ${missing} is not set (Socket Mode needs both tokens)`,
      `set ${missing} (docs/channels.md#slack)`,
    );
  }
  try {
    const auth = await slackCall("auth.test", bot);
    if (auth.body.ok !== true) {
      return failed(
        `slack: the bot token was refused (auth.test: ${String(auth.body.error ?? auth.status)})`,
        "the Bot User OAuth Token (xoxb-...) of your Slack app in SLACK_BOT_TOKEN",
      );
    }
    const socket = await slackCall("apps.connections.open", app);
    if (socket.body.ok !== true) {
      return failed(
        `slack: the app token was refused (apps.connections.open: ${String(socket.body.error ?? socket.status)})`,
        "an app-level token (xapp-...) with connections:write in SLACK_APP_TOKEN",
      );
    }
    const who = typeof auth.body.user === "string" ? ` @${auth.body.user}` : "";
    const team = typeof auth.body.team === "string" ? ` in ${auth.body.team}` : "";
    return ok(`slack: bot${who}${team} accepted both tokens`);
  } catch (error) {
    return failed(`slack: ${(error as Error).message}`, "check the network");
  }
}

export async function checkDiscord(config: AppConfig): Promise<CheckLine> {
  const token = config.discordBotToken ?? "";
  const api = (process.env.DISCORD_API_URL || DISCORD_API_DEFAULT).replace(/\/+$/, "");
  try {
    return (await checkBotToken(api, token)) === "accepted"
      ? ok("discord: the bot token is accepted")
      : failed(
          "discord: the bot token was refused (401)",
          "the bot's token (Developer Portal → Bot → Reset Token) in DISCORD_BOT_TOKEN",
        );
  } catch (error) {
    return failed(`discord: ${masked((error as Error).message, token)}`, "check the network");
  }
}

/** One check per configured chat channel, or one line saying there is none. */
export function checkChannels(config: AppConfig): Promise<CheckLine>[] {
  const checks: Promise<CheckLine>[] = [];
  if (config.telegramBotToken) checks.push(checkTelegram(config));
  if (config.slackBotToken || config.slackAppToken) checks.push(checkSlack(config));
  if (config.discordBotToken) checks.push(checkDiscord(config));
  if (checks.length === 0) checks.push(Promise.resolve(ok("channels: none configured")));
  return checks;
}

/** Where the tools run, as `guppy serve` and `guppy chat` resolve it (`auto` included). */
export function checkSandbox(config: AppConfig): CheckLine {
  const setting = config.sandbox ?? "auto";
  try {
    const { sandbox, notice } = resolveSandbox(config);
    return ok(`sandbox: ${setting} → ${describeSandbox(sandbox)}`, notice ? [notice] : []);
  } catch (error) {
    if (!isConfigError(error)) throw error;
    return failed(`sandbox: ${error.message}`, "as the line says, or GUPPY_SANDBOX=host");
  }
}

/** Whether something listens on `host:port`, tried by listening there for a moment. */
function tryListen(host: string, port: number): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/** Whether a guppy gateway answers `/health` at `url`. */
async function gatewayAnswers(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) });
    const body = (await response.json()) as { status?: unknown };
    return response.ok && body.status === "ok";
  } catch {
    return false;
  }
}

/** The HTTP API's port: this home's gateway answers on it, or it is free for `guppy serve`. */
export async function checkPort(config: AppConfig): Promise<CheckLine> {
  const running = readGatewayFile(config.home);
  if (running) {
    return (await gatewayAnswers(running.url))
      ? ok(`HTTP: the gateway of this home (pid ${running.pid}) answers at ${running.url}`)
      : failed(
          `HTTP: the gateway of this home (pid ${running.pid}) does not answer at ${running.url}/health`,
          `restart it (kill ${running.pid}, then guppy serve)`,
        );
  }
  const host = config.httpHost;
  const port = config.httpPort;
  if (port === 0) return ok("HTTP: port 0 (guppy serve takes any free port)");
  const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  const error = await tryListen(host, port);
  if (!error) return ok(`HTTP: ${where} is free for guppy serve`);
  if (error.code === "EADDRINUSE") {
    const client = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "[::1]" : where.split(":")[0];
    const guppy = await gatewayAnswers(`http://${client}:${port}`);
    return failed(
      `HTTP: ${where} is taken by ${guppy ? "another home's guppy gateway" : "another program"}`,
      "stop it, or give this home another port (GUPPY_HTTP_PORT or httpPort)",
    );
  }
  return failed(
    `HTTP: cannot listen on ${where} (${error.code ?? error.message})`,
    "another address or port (GUPPY_HTTP_HOST / GUPPY_HTTP_PORT)",
  );
}

const GB = 1024 ** 3;
/** Below either, the disk is too full for conversations, logs and tool outputs to grow safely. */
export const DISK_MIN_FREE_BYTES = GB;
export const DISK_MIN_FREE_SHARE = 0.05;

/** The free space where the home is (its nearest existing folder when it does not exist yet). */
export function checkDisk(home: string): CheckLine {
  let path = home;
  while (!existsSync(path) && dirname(path) !== path) path = dirname(path);
  try {
    const stat = statfsSync(path);
    const free = stat.bavail * stat.bsize;
    const total = stat.blocks * stat.bsize;
    const share = total > 0 ? free / total : 1;
    const text = `disk: ${(free / GB).toFixed(1)} GB free of ${(total / GB).toFixed(1)} GB (${Math.round(share * 100)}%) at ${path}`;
    return free >= DISK_MIN_FREE_BYTES && share >= DISK_MIN_FREE_SHARE
      ? ok(text)
      : failed(text, "free some space (at least 1 GB and 5%): old thread folders, logs, artifacts");
  } catch (error) {
    return failed(`disk: ${(error as Error).message}`, `check that ${path} is readable`);
  }
}
