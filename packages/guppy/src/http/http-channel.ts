import type { Server } from "node:http";
import { type ServerType, serve } from "@hono/node-server";
import type { GatewayChannel, GatewayContext } from "../gateway/gateway-channel.js";
import { resolveApiToken } from "./api-token.js";
import { createHttpApp } from "./create-http-app.js";

/** The HTTP API as a gateway channel: Hono on @hono/node-server, threads `http:<user>:<thread>`. */
export function createHttpChannel(): GatewayChannel {
  let server: ServerType | undefined;
  const streams = new Set<() => void>();
  return {
    name: "http",
    async start(context: GatewayContext) {
      const { config, orchestrator, store } = context;
      const say = context.say ?? ((text: string) => context.logger.info(text));
      const token = resolveApiToken(config);
      if (token.source === "generated") {
        say(
          `HTTP API token generated and saved to ${token.path} (mode 600); read it with: cat ${token.path}`,
        );
      }
      orchestrator.registerChannel({
        adapterId: "http",
        // Replies of HTTP threads are read from the event stream or GET /v1/threads/{id}/messages.
        threadHandle: (threadId) => ({ threadId, notice: () => {} }),
      });
      const app = createHttpApp({
        orchestrator,
        store,
        token: token.token,
        tokenHint: token.path ? `it is stored in ${token.path}` : "it is GUPPY_API_TOKEN",
        modelName: config.model ?? "guppy",
        ...(context.subscribe ? { subscribe: context.subscribe } : {}),
        onStream: (close) => {
          streams.add(close);
          return () => streams.delete(close);
        },
      });
      const address = await new Promise<{ address: string; port: number }>((resolve, reject) => {
        const s = serve(
          { fetch: app.fetch, hostname: config.httpHost, port: config.httpPort },
          (info) => resolve(info),
        );
        s.once("error", (error: NodeJS.ErrnoException) =>
          reject(
            new Error(
              error.code === "EADDRINUSE"
                ? `port ${config.httpPort} on ${config.httpHost} is already in use (set GUPPY_HTTP_PORT)`
                : `the HTTP API could not listen on ${config.httpHost}:${config.httpPort}: ${error.message}`,
            ),
          ),
        );
        // A client reusing a keep-alive socket just as the server times it out gets a reset;
        // Node's 5 s default makes that race likely under load or after an event-loop stall.
        (s as Server).keepAliveTimeout = 65_000;
        (s as Server).headersTimeout = 66_000;
        server = s;
      });
      const host = address.address.includes(":") ? `[${address.address}]` : address.address;
      say(`HTTP API listening on http://${host}:${address.port}`);
      context.logger.info("HTTP API listening", { host: address.address, port: address.port });
    },
    async stop() {
      const s = server as Server | undefined;
      server = undefined;
      if (!s) return;
      for (const close of streams) close();
      // close() waits for open connections; keep-alive sockets of finished requests are closed
      // as soon as they go idle, so in-flight answers (running turns) still get through.
      const sweep = setInterval(() => s.closeIdleConnections?.(), 100);
      await new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeIdleConnections?.();
      });
      clearInterval(sweep);
    },
  };
}
