import type { GuppyConfig, Logger, Orchestrator, OrchestratorListener, Store } from "@guppy/core";

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
