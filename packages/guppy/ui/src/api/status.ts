import { get } from "./client.js";
import type { UsageTotalsJson } from "./usage.js";

// GET /v1/status (docs/channels.md "HTTP API"): what `guppy status` prints, for the Status page
// and for the Access page's list of running channels.

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
  usage: { today: UsageTotalsJson; month: UsageTotalsJson };
  memory: { rss_bytes: number; heap_used_bytes: number };
  recent_errors: LoggedErrorJson[];
}

export const gatewayStatus = () => get<StatusJson>("/v1/status");
