import { ConfigError, type Role, silentLogger } from "@guppy/core";
import {
  accessChannel,
  accessRoles,
  admittedByAllowlist,
  describeUser as describe,
  noAdmittedUser,
  noPendingRequest,
  noUnusedInvite,
  unconfiguredChannel,
  unknownChannel,
  unknownRole,
} from "../access/access-messages.js";
import { channelAccessSettings } from "../access/access-settings.js";
import { createAccessStore } from "../access/access-store.js";
import type { AdmittedUser } from "../access/access-types.js";
import { createAccessControl } from "../access/create-access-control.js";
import type { AppConfig } from "../channels/registry.js";
import { ExitCode, UsageError } from "../cli/cli-error.js";
import { rejectExtraArguments } from "../cli/extra-arguments.js";
import { commandHelp } from "../cli/help-text.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { loadCliConfig } from "./load-cli-config.js";

const PAIRING_USAGE =
  "guppy pairing list|approve|role|revoke <channel> ...; see guppy pairing --help";
const INVITE_USAGE = "guppy invite create|list|revoke <channel> ...; see guppy invite --help";

function channelArg(value: string | undefined, usage: string): string {
  if (!value) throw new UsageError(`missing <channel> (usage: ${usage})`);
  const channel = accessChannel(value);
  if (!channel) throw new UsageError(unknownChannel(value));
  return channel;
}

/** `--owner` is taken by `approve` and `invite create` only (parse-cli-args lets it through for both commands). */
function rejectOwnerFlag(args: CliArgs, usage: string): void {
  if (args.owner) throw new UsageError(`--owner does not apply here (usage: ${usage})`);
}

/** A bare `guppy pairing` or `guppy invite`: its usage lines, as `--help` gives them. */
function printUsage(command: "pairing" | "invite"): number {
  process.stdout.write(`Usage:\n${commandHelp[command]}\n`);
  return ExitCode.usage;
}

function accessFor(args: CliArgs, config: AppConfig = loadCliConfig(args)) {
  return createAccessControl({
    store: createAccessStore(config.home),
    settings: (channel) => channelAccessSettings(config, channel),
    logger: silentLogger,
  });
}

/** How `guppy pairing list` says a user got in. */
const admittedHow: Record<AdmittedUser["via"], string> = {
  pairing: "approved pairing",
  invite: "invite",
  allowlist: "GUPPY_ALLOWED_USERS",
};

/**
 * `guppy pairing list <channel>`, `guppy pairing approve <channel> <code> [--owner]` and
 * `guppy pairing role <channel> <user> owner|guest`.
 */
export async function pairingCommand(args: CliArgs): Promise<number> {
  const [action, rawChannel, code] = args.positionals;
  if (action === undefined) return printUsage("pairing");
  if (action === "approve") {
    const usage = "guppy pairing approve <channel> <code> [--owner]";
    rejectExtraArguments(args, usage, 3);
    const channel = channelArg(rawChannel, usage);
    if (!code) throw new UsageError(`missing <code> (usage: ${usage})`);
    const role: Role = args.owner ? "owner" : "guest";
    const user = accessFor(args).approvePairing(channel, code, role);
    if (!user) {
      process.stderr.write(`guppy: ${noPendingRequest(channel, code)}\n`);
      return ExitCode.failed;
    }
    const hint =
      role === "guest" ? ` (guppy pairing role ${channel} ${user.id} owner to change)` : "";
    process.stdout.write(
      `Approved ${describe(user)} on ${channel} as ${role}${hint}.\nguppy serve tells them so on ${channel}: at once when it is running, else when it next starts.\n`,
    );
    return ExitCode.ok;
  }
  if (action === "list") {
    const usage = "guppy pairing list <channel>";
    rejectExtraArguments(args, usage, 2);
    rejectOwnerFlag(args, usage);
    const channel = channelArg(rawChannel, usage);
    const access = accessFor(args);
    const pending = access.pendingPairings(channel);
    const users = access.admittedUsers(channel);
    if (pending.length === 0) process.stdout.write(`No pending pairing requests on ${channel}.\n`);
    else process.stdout.write(`Pending pairing requests on ${channel} (code, user, since):\n`);
    for (const p of pending) {
      process.stdout.write(
        `  ${p.code}  ${p.userId}${p.userName ? ` (${p.userName})` : ""}  ${p.createdAt}\n`,
      );
    }
    if (users.length === 0) process.stdout.write(`No admitted users on ${channel}.\n`);
    else process.stdout.write(`Admitted users on ${channel} (user, role, admitted by):\n`);
    for (const u of users) {
      process.stdout.write(
        `  ${u.id}${u.name ? ` (${u.name})` : ""}  ${u.role}  ${admittedHow[u.via]}\n`,
      );
    }
    return ExitCode.ok;
  }
  if (action === "role") {
    const usage = "guppy pairing role <channel> <user> owner|guest";
    rejectExtraArguments(args, usage, 4);
    rejectOwnerFlag(args, usage);
    const channel = channelArg(rawChannel, usage);
    const [, , userId, role] = args.positionals;
    if (!userId) throw new UsageError(`missing <user> (usage: ${usage})`);
    if (!role) throw new UsageError(`missing role owner or guest (usage: ${usage})`);
    if (!accessRoles.includes(role as Role)) throw new UsageError(unknownRole(role));
    const result = accessFor(args).setRole(channel, userId, role as Role);
    if (result.kind === "unknown") {
      process.stderr.write(`guppy: ${noAdmittedUser(channel, userId)}\n`);
      return ExitCode.failed;
    }
    process.stdout.write(
      result.kind === "changed"
        ? `${describe(result.user)} on ${channel} is now ${role} (was ${result.from}).\n`
        : `${describe(result.user)} on ${channel} is ${role} already.\n`,
    );
    return ExitCode.ok;
  }
  if (action === "revoke") return revokeUser(args);
  throw new UsageError(`unknown pairing action "${action}" (usage: ${PAIRING_USAGE})`);
}

/** What a revoked user meets next, by the channel's policy. */
const afterRevoke: Record<string, string> = {
  pairing: "their next message is refused (they may ask again: the request comes to you)",
  allowlist: "their next message is refused",
  disabled: "their next message is refused (the channel refuses everyone)",
  open: "the channel's policy is open, so they are still answered, as a guest",
};

/** `guppy pairing revoke <channel> <user>`: takes an admitted user out. */
function revokeUser(args: CliArgs): number {
  const usage = "guppy pairing revoke <channel> <user>";
  rejectExtraArguments(args, usage, 3);
  rejectOwnerFlag(args, usage);
  const channel = channelArg(args.positionals[1], usage);
  const userId = args.positionals[2];
  if (!userId) throw new UsageError(`missing <user> (usage: ${usage})`);
  const config = loadCliConfig(args);
  const result = accessFor(args, config).revoke(channel, userId);
  if (result.kind === "unknown") {
    process.stderr.write(`guppy: ${noAdmittedUser(channel, userId)}\n`);
    return ExitCode.failed;
  }
  if (result.kind === "allowlisted") {
    process.stderr.write(`guppy: ${admittedByAllowlist(config, result.user)}\n`);
    return ExitCode.failed;
  }
  const { policy } = channelAccessSettings(config, channel);
  process.stdout.write(
    `Revoked ${describe(result.user)} on ${channel} (was ${result.user.role}): ${afterRevoke[policy]}.\n`,
  );
  return ExitCode.ok;
}

/**
 * `guppy invite create <channel> [--owner]` (a one-time code a user redeems with `/start
 * <code>`), `guppy invite list <channel>` and `guppy invite revoke <channel> <code>`.
 */
export async function inviteCommand(args: CliArgs): Promise<number> {
  const [action, rawChannel, code] = args.positionals;
  if (action === undefined) return printUsage("invite");
  if (action === "create") {
    const usage = "guppy invite create <channel> [--owner]";
    rejectExtraArguments(args, usage, 2);
    const channel = channelArg(rawChannel, usage);
    const config = loadCliConfig(args);
    refuseUnconfigured(config, channel);
    const role: Role = args.owner ? "owner" : "guest";
    const created = accessFor(args, config).createInvite(channel, role);
    process.stdout.write(
      `${created}\nSend it to the person you invite; they write /start ${created} to the bot (one use) and join as ${role}.\n`,
    );
    return ExitCode.ok;
  }
  if (action === "list") {
    const usage = "guppy invite list <channel>";
    rejectExtraArguments(args, usage, 2);
    rejectOwnerFlag(args, usage);
    const channel = channelArg(rawChannel, usage);
    const invites = accessFor(args).invites(channel);
    if (invites.length === 0) process.stdout.write(`No unused invites on ${channel}.\n`);
    else process.stdout.write(`Unused invites on ${channel} (code, role, created):\n`);
    for (const invite of invites) {
      process.stdout.write(`  ${invite.code}  ${invite.role}  ${invite.createdAt}\n`);
    }
    return ExitCode.ok;
  }
  if (action === "revoke") {
    const usage = "guppy invite revoke <channel> <code>";
    rejectExtraArguments(args, usage, 3);
    rejectOwnerFlag(args, usage);
    const channel = channelArg(rawChannel, usage);
    if (!code) throw new UsageError(`missing <code> (usage: ${usage})`);
    const revoked = accessFor(args).revokeInvite(channel, code);
    if (!revoked) {
      process.stderr.write(`guppy: ${noUnusedInvite(channel, code)}\n`);
      return ExitCode.failed;
    }
    process.stdout.write(`Revoked invite ${revoked.code} on ${channel}: it admits no one now.\n`);
    return ExitCode.ok;
  }
  throw new UsageError(`unknown invite action "${action}" (usage: ${INVITE_USAGE})`);
}

/** An invite for a channel guppy does not run could never be redeemed: refused (a config error). */
function refuseUnconfigured(config: AppConfig, channel: string): void {
  const message = unconfiguredChannel(config, channel);
  if (message) throw new ConfigError(message);
}
