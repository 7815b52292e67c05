import { wireApis } from "@guppy/core/config";
import { EVENT_TYPES } from "@guppy/core/events";
import { accessChannels } from "../channels/registry.js";

/**
 * Each command's usage lines, as `guppy --help` lists them and `guppy <command> --help` prints
 * them: one entry per command (one line each in main.ts's table too).
 */
export const commandHelp: Record<string, string> = {
  setup: `  guppy setup                       pick a provider, model and key (and a Telegram bot), checked
                                    with a test request; writes settings.json and guppy.env
  guppy setup --non-interactive --provider P [--model ID] [--api-key K] [--base-url URL]
                   [--api PROTOCOL] [--telegram-bot-token T]
                                    the same from flags (P: anthropic, openai, openrouter, google,
                                    ollama, lmstudio, custom; a key may come from its variable)
  guppy setup --provider anthropic --login | --provider openai-codex | --provider github-copilot
                                    a subscription instead of a key: signs in (guppy login) first`,
  chat: `  guppy chat [--session NAME]       talk to guppy in the terminal
  guppy chat -m "TEXT"              one prompt; the answer alone on stdout
  guppy chat --workspace DIR        the tools work in DIR instead of the thread's own workspace`,
  serve: `  guppy serve                       run the gateway: HTTP API (127.0.0.1:7420) and configured channels`,
  status: `  guppy status [--json]             ask the running gateway: uptime, model, channels, threads,
                                    events, today's and this month's tokens and cost`,
  doctor: `  guppy doctor [--fix]              check Node, the home's permissions, settings, model, channels,
                                    sandbox, port and disk, one line each (--fix: repair permissions)`,
  usage: `  guppy usage [--days N] [--by day|thread|model] [--json]
                                    tokens and cost of every model request, totalled`,
  login: `  guppy login anthropic|openai-codex|github-copilot
                                    sign in with a subscription (Claude Pro/Max, ChatGPT, Copilot)
                                    instead of an API key: prints the address to open, reads the
                                    code pasted back; saved in <home>/auth.json`,
  logout: `  guppy logout <provider>           remove that sign-in from <home>/auth.json`,
  config: `  guppy config                      print the effective configuration (secrets masked) and
                                    each value's source (flag, env, guppy.env, settings); the
                                    files read, provider keys set (masked), the local server`,
  init: `  guppy init                        create GUPPY_HOME with settings.json, memory, identity and skills files`,
  skills: `  guppy skills [--thread A:C:T]     list the skills a thread sees and where each comes from`,
  events: `  guppy events list                 scheduled events: id, type, target, schedule, next run
  guppy events add --type T --text TEXT [--schedule S] [--timezone Z] [--id ID]
                   [--thread A:C:T | --adapter A --channel C]
                                    add an event file (T: ${EVENT_TYPES.join(", ")};
                                    S: ISO time or cron; default target the terminal's thread)
  guppy events rm <id>              remove a scheduled event`,
  mcp: `  guppy mcp list                    the MCP servers of mcpServers: state (connected, starting,
                                    failed: why) and their tools' names`,
  pairing: `  guppy pairing list <channel>      pending pairing requests and admitted users with their roles
                                    (channels: ${accessChannels.join(", ")})
  guppy pairing approve <channel> <code> [--owner]
                                    admit the user who was given that pairing code, as a guest
                                    (--owner: as an owner); guppy serve tells them
  guppy pairing role <channel> <user> owner|guest
                                    change an admitted user's role
  guppy pairing revoke <channel> <user>
                                    take an admitted user out: their next message is refused`,
  invite: `  guppy invite create <channel> [--owner]
                                    a one-time code a user redeems with /start <code>; it admits
                                    a guest (--owner: an owner)
  guppy invite list <channel>       the unused invite codes and the role each admits
  guppy invite revoke <channel> <code>
                                    withdraw an unused invite code`,
};

const options = `Options (each also an environment variable or a settings.json key; see docs/configuration.md):
  --home DIR             data directory (GUPPY_HOME, default ~/.guppy)
  --model P/ID           model as provider/model-id (GUPPY_MODEL)
  --base-url URL         custom endpoint (GUPPY_BASE_URL)
  --api PROTOCOL         ${wireApis.join(" | ")} (GUPPY_API)
  --session NAME         terminal conversation to use (default "default")
  --thread ID            thread id adapter:channel:thread (default cli:local:default)
  --debug                verbose logs on stderr (GUPPY_DEBUG); --debug=false or --no-debug
                         turns it off (so does either form of every on/off setting)
  -m, --message TEXT     run one prompt and exit`;

export const helpText = `guppy — a small, self-hosted personal AI agent

Usage:
${Object.values(commandHelp).join("\n")}
  guppy <command> --help            that command's usage
  guppy --version | --help

${options}

Roles: a chat user is an owner (every tool) or a guest (the guest tool set: no bash, no
writing); the terminal and the HTTP API act as owner. See docs/channels.md.

In chat: /new starts fresh, /status shows model, tokens and cost, /exit (or exit, quit) quits;
/compact summarises the older part of the conversation now;
Ctrl+C stops the current answer, Ctrl+C twice at the prompt exits.
`;

/** `guppy <command> --help`: the command's usage lines and the options every command takes. */
export function commandHelpText(command: string): string | undefined {
  if (!Object.hasOwn(commandHelp, command)) return undefined;
  return `Usage:\n${commandHelp[command]}\n\n${options}\n`;
}
