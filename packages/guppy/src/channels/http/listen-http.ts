import type { Server } from "node:http";
import { type AddressInfo, createServer, type Server as NetServer } from "node:net";
import {
  type ConnectionBudget,
  connectionBudget,
  openFilesLimit,
  readProcessLimits,
} from "@guppy/core/fs";
import { createAdaptorServer } from "@hono/node-server";
import type { Hono } from "hono";
import { createConnectionGate } from "./connection-gate.js";

/**
 * Connections the kernel may hold for the server before it accepts them (capped by the system's
 * net.core.somaxconn). Node's default of 511 overflows when many clients connect at once: a
 * burst of 1,000 new connections lost ~7 % of its handshakes here, each of which then waited for
 * the kernel's retransmit (about a second) before its request was even read.
 */
export const ACCEPT_BACKLOG = 4096;

export interface Listening {
  /** The HTTP server: it does not listen itself, the gate hands it the connections it admits. */
  server: Server;
  /** The listening socket's server (connection-gate.ts). */
  gate: NetServer;
  address: string;
  port: number;
}

/**
 * Serves `app` on host:port; rejects with a one-line reason (port in use, address refused).
 * Connections are accepted by a plain TCP server and handed to the HTTP server within `budget`
 * (default: the share of the open-files limit descriptor-budget.ts gives them); the rest are
 * answered 503 (connection-gate.ts).
 */
export function listenHttp(
  app: Hono,
  host: string,
  port: number,
  options: { budget?: ConnectionBudget; log?: (message: string) => void } = {},
): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = createAdaptorServer({ fetch: app.fetch, hostname: host }) as Server;
    const budget = options.budget ?? connectionBudget(openFilesLimit(readProcessLimits()));
    const log = options.log ?? ((message: string) => console.error(message));
    // As http.Server accepts its own: half-open allowed (it ends the response itself), no delay.
    const gate = createServer(
      { allowHalfOpen: true, noDelay: true },
      createConnectionGate(server, budget, log),
    );
    gate.listen({ host, port, backlog: ACCEPT_BACKLOG }, () => {
      // An HTTP server starts checking its connections' header and request timeouts when it
      // listens: it never does here, so it is told.
      server.emit("listening");
      const info = gate.address() as AddressInfo;
      resolve({ server, gate, address: info.address, port: info.port });
    });
    gate.once("error", (error: NodeJS.ErrnoException) =>
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
export async function closeHttp(listening: Listening): Promise<void> {
  const { server, gate } = listening;
  const sweep = setInterval(() => server.closeIdleConnections(), 100);
  await new Promise<void>((resolve) => {
    // The gate's close calls back once every connection it accepted is closed.
    gate.close(() => resolve());
    // Stops the HTTP server's timeout checks; it has no listening socket of its own to close.
    server.close(() => {});
    server.closeIdleConnections();
  });
  clearInterval(sweep);
}
