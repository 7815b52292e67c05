import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import type { Hono } from "hono";

/**
 * Connections the kernel may hold for the server before it accepts them (capped by the system's
 * net.core.somaxconn). Node's default of 511 overflows when many clients connect at once: a
 * burst of 1,000 new connections lost ~7 % of its handshakes here, each of which then waited for
 * the kernel's retransmit (about a second) before its request was even read.
 */
export const ACCEPT_BACKLOG = 4096;

export interface Listening {
  server: Server;
  address: string;
  port: number;
}

/** Serves `app` on host:port; rejects with a one-line reason (port in use, address refused). */
export function listenHttp(app: Hono, host: string, port: number): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = createAdaptorServer({ fetch: app.fetch, hostname: host }) as Server;
    server.listen({ host, port, backlog: ACCEPT_BACKLOG }, () => {
      const info = server.address() as AddressInfo;
      resolve({ server, address: info.address, port: info.port });
    });
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          error.code === "EADDRINUSE"
            ? `port ${port} on ${host} is already in use (set GUPPY_HTTP_PORT)`
            : `the HTTP API could not listen on ${host}:${port}: ${error.message}`,
        ),
      ),
    );
    // A client reusing a keep-alive socket just as the server times it out gets a reset;
    // Node's 5 s default makes that race likely under load or after an event-loop stall.
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
  });
}

/**
 * Stops taking connections and resolves once the open ones are closed. Keep-alive sockets of
 * finished requests close as soon as they go idle, so in-flight answers (running turns) still
 * get through.
 */
export async function closeHttp(server: Server): Promise<void> {
  const sweep = setInterval(() => server.closeIdleConnections?.(), 100);
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections?.();
  });
  clearInterval(sweep);
}
