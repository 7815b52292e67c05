import {
  ConfigError,
  type ConfigWith,
  type GuppyConfig,
  type Logger,
  type Orchestrator,
  type OrchestratorListener,
  type Store,
} from "@guppy/core";
import { kebab, type SettingDefinitions, type SettingValues } from "@guppy/core/config";
import type { AccessConfig } from "../access/access-settings.js";
import type { AccessAnswer, AccessRequest } from "../access/access-types.js";
import type { GatewayStatus } from "../gateway/gateway-status.js";

/** What a channel's platform does that the code shared by the chat channels depends on. */
export interface ChannelCapabilities {
  /**
   * Its group conversations are threads of their own, which guppy follows after a mention
   * (Slack, Discord). A Telegram group is one long chat: following it would answer every message.
   */
  readonly followsThreads?: boolean;
  /** It lists a thread's messages: a group thread's first prompt logs what the log lacks of them. */
  readonly listsHistory?: boolean;
  /**
   * Where the heartbeat runs: `chat`, a person chats here, so an owner's prompt here makes its
   * thread the beat's; `fallback`, its latest thread takes the beat while the owner never chatted.
   */
  readonly heartbeat?: "chat" | "fallback";
}

/** What a channel's code is told about itself: the names its messages use, what it can do. */
export interface ChannelInfo {
  /** `telegram`: the adapter part of its thread ids and its folder under `<home>/access/`. */
  readonly name: string;
  /** `Telegram`: how messages to the user name it. */
  readonly label: string;
  /** Absent: none. */
  readonly capabilities?: ChannelCapabilities;
}

/** The configuration a channel's code may read: its own settings and the shared access settings. */
export type ChannelConfig<S extends SettingDefinitions> = AccessConfig & SettingValues<S>;

/** What `guppy serve` hands each channel it starts; `C`: the settings the channel reads. */
export interface GatewayContext<C extends GuppyConfig = GuppyConfig> {
  orchestrator: Orchestrator;
  config: C;
  store: Store;
  logger: Logger;
  /** Every thread's orchestrator events (runner events, notices, busy): the HTTP API's SSE stream. */
  subscribe?: (listener: OrchestratorListener) => () => void;
  /** A readable line on the gateway's terminal (e.g. where a channel listens). */
  say?: (text: string) => void;
  /** The HTTP API listens at `url` (as a client on this machine reaches it): gateway.json. */
  listening?: (url: string) => void;
  /** The gateway's uptime, channels, threads, events and usage (GET /v1/status). */
  gatewayStatus?: () => GatewayStatus;
  /** The chat channels' pairing requests, users and invites (GET/POST /v1/access/{channel}…). */
  access?: (request: AccessRequest) => AccessAnswer;
}

/**
 * A channel of the gateway (HTTP API, Telegram, Slack, Discord): it turns its platform's input
 * into `orchestrator.send(...)` calls and registers a `ChannelLink` for replies.
 */
export interface GatewayChannel<C extends GuppyConfig = GuppyConfig> {
  /** `http`, `telegram`, `slack`, `discord`: also the adapter part of its thread ids. */
  readonly name: string;
  /** A property, not a method: a channel that reads a setting the gateway lacks does not compile. */
  start: (context: GatewayContext<C>) => Promise<void>;
  /**
   * Stops taking input at once; resolves once the channel's connections are closed. A chat
   * channel keeps posting until `runsEnded` settles (the orchestrator's drain), so the answers of
   * the turns a shutdown lets finish still reach their chats.
   */
  stop(runsEnded?: Promise<unknown>): Promise<void>;
}

/**
 * A channel of the gateway, as the registry (registry.ts) lists it: everything about it that
 * the rest of guppy needs before its code is loaded.
 */
export interface ChannelDescriptor<S extends SettingDefinitions = SettingDefinitions>
  extends ChannelInfo {
  /** Its settings, read with core's (flags, environment, settings.json) and in the docs table. */
  readonly settings: S;
  /** Its users pass guppy's access control: `guppy pairing` and `guppy invite` take it. */
  readonly access: boolean;
  /** Whether the configuration turns it on (a bot token is set, ...). */
  enabled(config: ConfigWith<S>): boolean;
  /** Its code, imported only now: `guppy --version` or `guppy chat` load no chat SDK. */
  load(): Promise<GatewayChannel<ChannelConfig<S>>>;
}

/** A descriptor, its settings' types kept (a channel's folder exports one). */
export function defineChannel<const S extends SettingDefinitions>(
  descriptor: ChannelDescriptor<S>,
): ChannelDescriptor<S> {
  return descriptor;
}

/** How the user gave setting `key`: its environment variable, settings.json key or flag. */
export function settingName(config: GuppyConfig, key: string): string {
  const source = config.sources[key];
  if (source === "settings") return `"${key}" in ${config.settingsPath}`;
  if (source === "flag") return `--${kebab(key)}`;
  return config.settings[key]?.env ?? key;
}

/**
 * A chat platform refusing a token when its channel starts, as a one-line configuration error
 * (`guppy serve` exits 2) that names the setting: "Telegram refused the bot token
 * (TELEGRAM_BOT_TOKEN): 401 Unauthorized".
 */
export function refusedToken(
  config: GuppyConfig,
  channel: ChannelInfo,
  key: string,
  what: string,
  detail: string,
): ConfigError {
  return new ConfigError(
    `${channel.label} refused the ${what} (${settingName(config, key)}): ${detail}`,
  );
}
