import { ConfigError, type ConfigWith, type HeartbeatAdapters, withAppSettings } from "@guppy/core";
import type { SettingDefinitions } from "@guppy/core/config";
import { toolPolicyChannelProblem } from "@guppy/core/tools";
import { accessSettings } from "../access/access-settings.js";
import type { ChannelDescriptor, GatewayChannel } from "./channel.js";
import { discord } from "./discord/descriptor.js";
import { http } from "./http/descriptor.js";
import { slack } from "./slack/descriptor.js";
import { telegram } from "./telegram/descriptor.js";

/** The gateway's channels, in the order `guppy serve` starts them: a new one is a folder and a line. */
export const channels = [http, telegram, slack, discord] as const;

/** Every member of a union at once: the channels' settings tables as one table's type. */
type AllOf<U> = (U extends unknown ? (all: U) => void : never) extends (all: infer I) => void
  ? I
  : never;

/** The settings guppy adds to core's: the shared access settings, then each channel's. */
export const guppySettings = Object.assign(
  {},
  accessSettings,
  ...channels.map((channel) => channel.settings),
) as typeof accessSettings & AllOf<(typeof channels)[number]["settings"]>;

/** Core's settings and guppy's, in the order `guppy config` and docs/configuration.md list them. */
export const allSettings: SettingDefinitions = withAppSettings(guppySettings);

/** guppy's configuration: core's settings, access control's and every channel's. */
export type AppConfig = ConfigWith<typeof guppySettings>;

/** The channels whose users pass access control: what `guppy pairing` and `guppy invite` take. */
export const accessChannels: readonly string[] = channels
  .filter((channel) => channel.access)
  .map((channel) => channel.name);

/** The adapter of the terminal's thread ids (`cli:local:<session>`). */
export const TERMINAL_ADAPTER = "cli";

/** The adapters thread ids start with, the terminal's and each channel's: the keys of the `tools` setting. */
export const threadAdapters: readonly string[] = [
  TERMINAL_ADAPTER,
  ...channels.map((channel) => channel.name),
];

/** The channels whose capabilities give them the heartbeat as `role`. */
function heartbeatChannels(role: "chat" | "fallback"): string[] {
  return (channels as readonly ChannelDescriptor[])
    .filter((channel) => channel.capabilities?.heartbeat === role)
    .map((channel) => channel.name);
}

/** Where the heartbeat goes (core's last channel): the chat channels, else the API or terminal. */
export const heartbeatAdapters: HeartbeatAdapters = {
  chat: heartbeatChannels("chat"),
  fallback: [...heartbeatChannels("fallback"), TERMINAL_ADAPTER],
};

/** Refuses a `tools` setting that names a channel guppy does not have, with a did-you-mean. */
export function checkToolChannels(config: AppConfig): void {
  const problem = toolPolicyChannelProblem(config.tools, threadAdapters);
  if (problem) throw new ConfigError(`Invalid setting in ${config.settingsPath}: ${problem}`);
}

/** The channels this configuration turns on, their code loaded. */
export async function loadEnabledChannels(config: AppConfig): Promise<GatewayChannel<AppConfig>[]> {
  const enabled = (channels as readonly ChannelDescriptor[]).filter((c) => c.enabled(config));
  return Promise.all(enabled.map((channel) => channel.load()));
}
