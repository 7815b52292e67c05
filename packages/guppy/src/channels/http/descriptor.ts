import { hostValue, integerValue, stringValue } from "@guppy/core/config";
import { defineChannel } from "../channel.js";

/** The HTTP API (OpenAI-compatible and guppy's own routes): always on, on loopback by default. */
export const http = defineChannel({
  name: "http",
  label: "HTTP API",
  capabilities: { heartbeat: "fallback" },
  settings: {
    httpHost: {
      env: "GUPPY_HTTP_HOST",
      parse: hostValue,
      default: "127.0.0.1",
      description: "Address the HTTP API binds",
    },
    httpPort: {
      env: "GUPPY_HTTP_PORT",
      parse: integerValue(0, 65_535),
      default: 7420,
      description: "Port of the HTTP API",
    },
    apiToken: {
      env: "GUPPY_API_TOKEN",
      parse: stringValue,
      secret: true,
      description:
        "Bearer token for the HTTP API: at least 16 characters of visible ASCII (generated into <home>/api-token on first start when unset)",
    },
  },
  access: false,
  enabled: () => true,
  load: async () => (await import("./http-channel.js")).createHttpChannel(),
});
