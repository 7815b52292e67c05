// Helper of bench/gateway: the load generator. Each virtual user keeps one keep-alive socket and
// writes its requests as raw HTTP/1.1 — the way wrk or autocannon drive a server. node:http's
// client cost this process ~240 µs per request (fetch about twice that); on a 2-core machine the
// client shares the CPU with the gateway under test, so a lighter client measures the gateway
// more and itself less. Responses are parsed (status, Content-Length or chunked body) and
// checked by the caller.
import { connect } from "node:net";

/** A client for one server; `post` sends on the socket of `user` (one request at a time each). */
export function createHttpLoadClient(port) {
  const sockets = new Map();

  const open = (user) => {
    const socket = connect(port, "127.0.0.1");
    socket.setNoDelay(true);
    const state = { socket, buffer: Buffer.alloc(0), waiting: undefined };
    socket.on("data", (chunk) => {
      state.buffer = state.buffer.length > 0 ? Buffer.concat([state.buffer, chunk]) : chunk;
      const response = takeResponse(state);
      if (!response) return;
      const waiting = state.waiting;
      state.waiting = undefined;
      waiting?.resolve(response);
    });
    const fail = (error) => {
      sockets.delete(user);
      const waiting = state.waiting;
      state.waiting = undefined;
      waiting?.reject(error ?? new Error("the server closed the connection"));
    };
    socket.on("error", fail);
    socket.on("close", () => fail());
    sockets.set(user, state);
    return state;
  };

  return {
    /** Resolves with `{ status, body }`. */
    post(user, path, headers, body) {
      const state = sockets.get(user) ?? open(user);
      let head = `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
      for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
      return new Promise((resolve, reject) => {
        state.waiting = { resolve, reject };
        state.socket.write(`${head}\r\n${body}`);
      });
    },
    close() {
      for (const state of sockets.values()) state.socket.destroy();
      sockets.clear();
    },
  };
}

/** One whole response from the front of the buffer (removed from it), or undefined for more. */
function takeResponse(state) {
  const buffer = state.buffer;
  const end = buffer.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const head = buffer.subarray(0, end).toString("latin1");
  const status = Number(head.slice(9, 12));
  const length = /\r\ncontent-length: *(\d+)/i.exec(head);
  if (length) {
    const bodyEnd = end + 4 + Number(length[1]);
    if (buffer.length < bodyEnd) return undefined;
    state.buffer = buffer.subarray(bodyEnd);
    return { status, body: buffer.subarray(end + 4, bodyEnd).toString("utf8") };
  }
  if (!/\r\ntransfer-encoding: *chunked/i.test(head)) {
    state.buffer = buffer.subarray(end + 4);
    return { status, body: "" };
  }
  const parts = [];
  let at = end + 4;
  for (;;) {
    const line = buffer.indexOf("\r\n", at);
    if (line < 0) return undefined;
    const size = Number.parseInt(buffer.subarray(at, line).toString("latin1"), 16);
    if (buffer.length < line + 2 + size + 2) return undefined;
    if (size === 0) {
      state.buffer = buffer.subarray(line + 4);
      return { status, body: Buffer.concat(parts).toString("utf8") };
    }
    parts.push(buffer.subarray(line + 2, line + 2 + size));
    at = line + 2 + size + 2;
  }
}
