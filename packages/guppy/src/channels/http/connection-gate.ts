import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { ConnectionBudget } from "@guppy/core/fs";

/** What a client told to come back later waits first (seconds), as `retry-after` says. */
export const RETRY_AFTER_SECONDS = 2;

/** How long a refused connection may stay open for its client to read the 503 and close. */
const SHED_LINGER_MS = 5_000;

/**
 * Hands each accepted connection to `server` while fewer than `budget.admit` are open, and
 * answers the others `503` with `retry-after` before reading their request, so a burst of clients
 * cannot take the descriptors accepted runs need (descriptor-budget.ts): with `ulimit -n 300`,
 * 1,000 concurrent requests once left 902 accepted runs failing with EMFILE as they opened their
 * thread's files. Idle keep-alive connections are closed first when the budget is reached.
 *
 * A refused connection stays open until its client has read the answer and closed (up to
 * 5 s), its request read and dropped so that closing sends no reset; past `budget.shed` open
 * connections it is closed as soon as the answer is written, since its descriptor is needed.
 * Returns the `connection` listener of the server that accepts (listen-http.ts).
 */
export function createConnectionGate(
  server: Server,
  budget: ConnectionBudget,
  log: (message: string) => void,
): (socket: Socket) => void {
  const open = new Set<Socket>();
  let refused = 0;
  const track = (socket: Socket) => {
    open.add(socket);
    socket.once("close", () => {
      open.delete(socket);
      if (refused > 0 && open.size < budget.admit / 2) {
        log(`HTTP API: connections below the limit again, after ${refused} answered 503`);
        refused = 0;
      }
    });
  };
  /** Open connections not yet destroyed (a destroyed one's descriptor is closed already). */
  const live = () => {
    for (const socket of open) if (socket.destroyed) open.delete(socket);
    return open.size;
  };
  return (socket) => {
    if (open.size >= budget.admit) {
      server.closeIdleConnections();
      live();
    }
    if (open.size < budget.admit) {
      track(socket);
      server.emit("connection", socket);
      return;
    }
    if (refused++ === 0) {
      log(
        `HTTP API: ${open.size} connections open, at the limit the open-files limit allows: answering 503 (retry-after ${RETRY_AFTER_SECONDS} s)`,
      );
    }
    const linger = open.size < budget.shed;
    track(socket);
    refuse(socket, linger);
  };
}

const BODY = JSON.stringify({
  error: {
    message: `The gateway has as many connections open as its open-files limit allows: try again in ${RETRY_AFTER_SECONDS} s.`,
    type: "unavailable",
  },
});

const ANSWER = [
  "HTTP/1.1 503 Service Unavailable",
  `Retry-After: ${RETRY_AFTER_SECONDS}`,
  "Content-Type: application/json",
  `Content-Length: ${Buffer.byteLength(BODY)}`,
  "Connection: close",
  "",
  BODY,
].join("\r\n");

/** Answers 503 on a connection no request of which was read, then closes it. */
function refuse(socket: Socket, linger: boolean): void {
  socket.on("error", () => socket.destroy());
  if (!linger) {
    socket.end(ANSWER);
    socket.destroy();
    return;
  }
  // Read and drop the request: closing with unread data would reset the connection, and a
  // client may then lose the answer.
  socket.resume();
  socket.end(ANSWER);
  socket.once("end", () => socket.destroy());
  socket.setTimeout(SHED_LINGER_MS, () => socket.destroy());
}
