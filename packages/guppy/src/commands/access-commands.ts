import { silentLogger } from "@guppy/core";
import { channelAccessSettings } from "../access/access-settings.js";
import { createAccessStore, isChannelName } from "../access/access-store.js";
import { createAccessControl } from "../access/create-access-control.js";
import { accessChannels } from "../channels/registry.js";
import { ExitCode, UsageError } from "../cli/cli-error.js";
import { rejectExtraArguments } from "../cli/extra-arguments.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { loadCliConfig } from "./load-cli-config.js";

function channelArg(value: string | undefined, usage: string): string {
  if (!value) throw new UsageError(`missing <channel> (usage: ${usage})`);
  const channel = value.toLowerCase();
  if (!isChannelName(channel) || !accessChannels.includes(channel)) {
    throw new UsageError(
      `unknown channel "${value}": expected one of ${accessChannels.join(", ")}`,
    );
  }
  return channel;
}

function accessFor(args: CliArgs) {
  const config = loadCliConfig(args);
  return createAccessControl({
    store: createAccessStore(config.home),
    settings: (channel) => channelAccessSettings(config, channel),
    logger: silentLogger,
  });
}

/** `guppy pairing list <channel>` and `guppy pairing approve <channel> <code>`. */
export async function pairingCommand(args: CliArgs): Promise<number> {
  const [action, rawChannel, code] = args.positionals;
  if (action === "approve") {
    const usage = "guppy pairing approve <channel> <code>";
    rejectExtraArguments(args, usage, 3);
    const channel = channelArg(rawChannel, usage);
    if (!code) throw new UsageError(`missing <code> (usage: ${usage})`);
    const user = accessFor(args).approvePairing(channel, code);
    if (!user) {
      process.stderr.write(
        `guppy: no pending pairing request on ${channel} has code ${code} (codes expire after an hour; see guppy pairing list ${channel})\n`,
      );
      return ExitCode.failed;
    }
    process.stdout.write(
      `Approved ${user.name ? `${user.name} (${user.id})` : user.id} on ${channel}.\n`,
    );
    return ExitCode.ok;
  }
  if (action === "list") {
    const usage = "guppy pairing list <channel>";
    rejectExtraArguments(args, usage, 2);
    const channel = channelArg(rawChannel, usage);
    const pending = accessFor(args).pendingPairings(channel);
    if (pending.length === 0) process.stdout.write(`No pending pairing requests on ${channel}.\n`);
    for (const p of pending) {
      process.stdout.write(
        `${p.code}  ${p.userId}${p.userName ? ` (${p.userName})` : ""}  ${p.createdAt}\n`,
      );
    }
    return ExitCode.ok;
  }
  throw new UsageError(
    `unknown pairing action "${action ?? ""}" (usage: guppy pairing list <channel> | guppy pairing approve <channel> <code>)`,
  );
}

/** `guppy invite create <channel>`: a one-time code a user redeems with `/start <code>`. */
export async function inviteCommand(args: CliArgs): Promise<number> {
  const [action, rawChannel] = args.positionals;
  if (action !== "create") {
    throw new UsageError(
      `unknown invite action "${action ?? ""}" (usage: guppy invite create <channel>)`,
    );
  }
  const usage = "guppy invite create <channel>";
  rejectExtraArguments(args, usage, 2);
  const channel = channelArg(rawChannel, usage);
  const code = accessFor(args).createInvite(channel);
  process.stdout.write(
    `${code}\nSend it to the person you invite; they write /start ${code} to the bot (one use).\n`,
  );
  return ExitCode.ok;
}
