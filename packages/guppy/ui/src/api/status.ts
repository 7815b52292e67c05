import { get } from "./client.js";

// GET /v1/status (docs/channels.md "HTTP API"): what `guppy status` prints, for the Status page
// and for the Access page's list of running channels.

/** Ledger totals as the API gives them (today's or this month's). */
export interface TotalsJson {
  requests: number;
  input: number;
  cache_read: number;
  cache_write: number;
  output: number;
  cost: number;
  /** Of `requests`, those made through a subscription's sign-in: not in `cost`. */
  subscription_requests: number;
}

export interface ChannelStateJson {
  name: string;
  state: "running" | "off";
}

/** A warning or error the gateway logged (the last 20, oldest first). */
export interface LoggedErrorJson {
  time: string;
  level?: "warn" | "error";
  message: string;
}

export interface StatusJson {
  status: "running";
  pid: number;
  started: string;
  uptime_seconds: number;
  model: string;
  channels: ChannelStateJson[];
  threads: { running: number; queued: number; loaded: number };
  events: { count: number; next: { id: string; target: string; at: string } | null };
  usage: { today: TotalsJson; month: TotalsJson };
  memory: { rss_bytes: number; heap_used_bytes: number };
  recent_errors: LoggedErrorJson[];
}

export const gatewayStatus = () => get<StatusJson>("/v1/status");
