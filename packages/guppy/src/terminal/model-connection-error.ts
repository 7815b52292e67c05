import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { maskUrlCredentials } from "@guppy/core/config";

/**
 * What the provider SDKs say when a request never reached the server (the OpenAI and Anthropic
 * SDKs, and fetch itself). pi-ai keeps only that message, not why.
 */
const CONNECTION_ERRORS: ReadonlySet<string> = new Set(["Connection error.", "fetch failed"]);

/** Node's fetch (undici) reports every failed connection here, with where it went and why. */
const CONNECT_ERROR_CHANNEL = "undici:client:connectError";

const REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  ETIMEDOUT: "connection timed out",
  UND_ERR_CONNECT_TIMEOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
};

interface ConnectError {
  connectParams?: { protocol?: string; hostname?: string; port?: string | number };
  error?: { code?: string; message?: string };
}

export interface ModelErrorExplainer {
  /** A failed request's message, naming the endpoint when it could not be reached. */
  explain(message: string): string;
  close(): void;
}

/**
 * Turns the SDKs' bare "Connection error." into "cannot reach the model at <url>: connection
 * refused" for the terminal: the URL with any password masked, the reason from the latest failed
 * connection Node reported for that host and port (when it made one). Only the terminal names the
 * endpoint; the chat channels keep the provider's words.
 */
export function createModelErrorExplainer(baseUrl: string | undefined): ModelErrorExplainer {
  const target = baseUrl ? endpoint(baseUrl) : undefined;
  let reason: string | undefined;
  const onConnectError = (message: unknown) => {
    const { connectParams: p, error } = message as ConnectError;
    if (!target || !p || !error) return;
    if (endpointKey(p.protocol, p.hostname, p.port) !== target.key) return;
    const code = error.code;
    reason = code ? (REASONS[code] ?? code) : firstLine(error.message ?? "") || undefined;
  };
  subscribe(CONNECT_ERROR_CHANNEL, onConnectError);
  return {
    explain(message) {
      if (!target || !CONNECTION_ERRORS.has(message.trim())) return message;
      return reason
        ? `cannot reach the model at ${target.shown}: ${reason}`
        : `cannot reach the model at ${target.shown} (${message.trim()})`;
    },
    close() {
      unsubscribe(CONNECT_ERROR_CHANNEL, onConnectError);
    },
  };
}

function endpoint(raw: string): { key: string; shown: string } | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  const key = endpointKey(url.protocol, url.hostname, url.port);
  return { key, shown: maskUrlCredentials(raw) };
}

function endpointKey(protocol = "", hostname = "", port: string | number = ""): string {
  const host = hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  const p = String(port) || (protocol === "https:" ? "443" : "80");
  return `${protocol}//${host}:${p}`;
}

function firstLine(text: string): string {
  return text.split("\n")[0]?.trim() ?? "";
}
