import type { Role } from "@guppy/core";
import { type ChannelDescriptor, settingName } from "../channels/channel.js";
import { type AppConfig, accessChannels, channels } from "../channels/registry.js";

/**
 * The one-line messages `guppy pairing`/`guppy invite` and the HTTP API's access routes both
 * give (the CLI prefixes "guppy: "): one wording wherever the owner manages access.
 */

export const accessRoles: readonly Role[] = ["owner", "guest"];

/** `1001`, or `ann (1001)`: a user as the owner's messages name it. */
export function describeUser(user: { id: string; name?: string }): string {
  return user.name ? `${user.name} (${user.id})` : user.id;
}

/** The channel guppy's access control knows by `value` (any case), or undefined. */
export function accessChannel(value: string): string | undefined {
  const channel = value.toLowerCase();
  return accessChannels.includes(channel) ? channel : undefined;
}

export const unknownChannel = (value: string) =>
  `unknown channel "${value}": expected one of ${accessChannels.join(", ")}`;

export const unknownRole = (role: string) => `unknown role "${role}": expected owner or guest`;

export const noPendingRequest = (channel: string, code: string) =>
  `no pending pairing request on ${channel} has code ${code} (codes expire after an hour; see guppy pairing list ${channel})`;

export const noAdmittedUser = (channel: string, userId: string) =>
  `no admitted user ${userId} on ${channel} (see guppy pairing list ${channel}; user ids, not names)`;

export const noUnusedInvite = (channel: string, code: string) =>
  `no unused invite on ${channel} has code ${code} (see guppy invite list ${channel})`;

/** Revoking a user GUPPY_ALLOWED_USERS admits changes nothing: only the setting can. */
export const admittedByAllowlist = (config: AppConfig, user: { id: string; name?: string }) =>
  `${describeUser(user)} is admitted by ${settingName(config, "allowedUsers")}: take the id out of it to shut them out`;

/**
 * An invite for a channel guppy does not run (no bot token) could never be redeemed: the message
 * refusing it, naming the setting that turns the channel on; undefined when the channel runs.
 */
export function unconfiguredChannel(config: AppConfig, channel: string): string | undefined {
  const descriptor = (channels as readonly ChannelDescriptor[]).find((c) => c.name === channel);
  if (!descriptor || descriptor.enabled(config)) return undefined;
  const [token] = Object.values(descriptor.settings).filter((setting) => setting.secret);
  return `${descriptor.label} is not configured: set ${token?.env ?? `the ${descriptor.label} settings`} first (the invited user redeems the code by writing to the bot)`;
}
