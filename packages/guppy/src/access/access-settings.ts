import type { ConfigWith } from "@guppy/core";
import { integerValue, listValue, oneOf, type SettingDefinition } from "@guppy/core/config";
import {
  type AccessPolicy,
  accessPolicies,
  type ChannelAccessSettings,
  groupContexts,
  groupReplyModes,
} from "./access-types.js";

/** The settings every chat channel shares; a channel adds its own policy (accessPolicySetting). */
export const accessSettings = {
  accessPolicy: {
    env: "GUPPY_ACCESS_POLICY",
    parse: oneOf(accessPolicies),
    default: "pairing",
    description: "Who may talk to guppy on chat channels",
  },
  allowedUsers: {
    env: "GUPPY_ALLOWED_USERS",
    parse: listValue(),
    default: [],
    description: "User ids admitted by the allowlist policy (comma-separated)",
  },
  groupReplies: {
    env: "GUPPY_GROUP_REPLIES",
    parse: oneOf(groupReplyModes),
    default: "mention",
    description:
      "In group chats answer only when mentioned or replied to (mention), or always (all)",
  },
  // The conversation settings of chat channels: who is talked to in a group is access's business.
  threadFollowHours: {
    env: "GUPPY_THREAD_FOLLOW_HOURS",
    parse: integerValue(1, 24 * 365),
    default: 24,
    description:
      "Slack and Discord: hours without a message after which guppy stops following a thread it was mentioned in (/new stops it at once)",
  },
  groupContext: {
    env: "GUPPY_GROUP_CONTEXT",
    parse: oneOf(groupContexts),
    default: "shared",
    description:
      "In group chats one conversation for everyone (shared) or one per member, with its own /new and history (per-user)",
  },
};

/** A configuration with the access settings: what a chat channel's access check reads. */
export type AccessConfig = ConfigWith<typeof accessSettings>;

/** A chat channel's own policy: `telegramAccessPolicy`, GUPPY_TELEGRAM_ACCESS_POLICY. */
export function accessPolicySetting<const N extends string>(
  name: N,
  label: string,
): Record<`${N}AccessPolicy`, SettingDefinition<AccessPolicy>> {
  const setting: SettingDefinition<AccessPolicy> = {
    env: `GUPPY_${name.toUpperCase()}_ACCESS_POLICY`,
    parse: oneOf(accessPolicies),
    description: `Access policy of the ${label} channel (default: GUPPY_ACCESS_POLICY)`,
  };
  return { [`${name}AccessPolicy`]: setting } as Record<`${N}AccessPolicy`, typeof setting>;
}

/** The channel's own policy (accessPolicySetting) or the global one. */
export function channelAccessSettings(
  config: AccessConfig,
  channel: string,
): ChannelAccessSettings {
  const own = (config as unknown as Record<string, AccessPolicy | undefined>)[
    `${channel}AccessPolicy`
  ];
  return { policy: own ?? config.accessPolicy, allowedUsers: config.allowedUsers };
}
