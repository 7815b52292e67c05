import { connect, type Socket } from "node:net";
import type { OrchestratorEvent } from "@guppy/core";
import { createFileThreadLog } from "@guppy/core/state";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpApp } from "../../../src/channels/http/create-http-app.js";
import { createEventCalls } from "../../../src/channels/http/event-calls.js";
import type { HttpBackend } from "../../../src/channels/http/http-backend.js";
import { closeHttp, listenHttp } from "../../../src/channels/http/listen-http.js";
import { SUBSCRIBER_BUFFER_BYTES } from "../../../src/channels/http/thread-events.js";

const TOKEN = "a-token-of-some-length";
const THREAD = "http:api:events";

/** A backend with one known thread whose event subscribers the test drives. */
function eventsBackend() {
  const listeners = new Set<(event: OrchestratorEvent) => void>();
  const backend: HttpBackend = {
    send: async () => ({ status: "delivered" }),
    command: async () => ({ status: "duplicate" }),
    gatewayStatus: async () => undefined,
    usageReport: async () => undefined,
    ...createEventCalls(undefined),
    access: async () => undefined,
    thread: async () => ({ status: "known", threadId: THREAD }),
    threadsInMemory: async () => ({ threads: [] }),
    threadIdsOnDisk: async () => [],
    statuses: async () => [],
    log: createFileThreadLog("/nonexistent"),
    subscribe(_threadId, listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const emit = (delta: string) => {
    for (const l of listeners) {
      l({
        type: "runner",
        threadId: THREAD,
        inboxId: "in-1",
        event: { type: "text_delta", delta },
      });
    }
  };
  return { backend, listeners, emit };
}

const until = async (probe: () => boolean, ms = 5_000) => {
  const t0 = Date.now();
  while (!probe()) {
    if (Date.now() - t0 > ms) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe("GET /v1/threads/{id}/events", () => {
  const stops: Array<() => unknown> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  const open = async () => {
    const b = eventsBackend();
    const app = createHttpApp({ backend: b.backend, token: TOKEN, tokenHint: "t", modelName: "m" });
    const listening = await listenHttp(app, "127.0.0.1", 0);
    const { port } = listening;
    stops.push(() => closeHttp(listening));
    const socket: Socket = connect(port, "127.0.0.1");
    stops.push(() => socket.destroy());
    socket.write(
      `GET /v1/threads/${THREAD}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`,
    );
    await until(() => b.listeners.size === 1);
    return { ...b, socket };
  };

  it("drops a subscriber that stops reading once it is a bounded amount behind, with a last overflow event", async () => {
    const { socket, listeners, emit } = await open();
    socket.pause(); // reads nothing
    const delta = "x".repeat(10_000);
    // Far more than the socket buffers and the bound together, all at once.
    for (let i = 0; i < 4000 && listeners.size > 0; i++) emit(delta);
    expect(listeners.size).toBe(0);
    // The client reads again: it gets what was written, then the overflow event, then the end.
    let received = "";
    socket.on("data", (d) => {
      received += d.toString("latin1");
    });
    socket.resume();
    // The response ends (chunked encoding's last chunk) after the overflow event.
    await until(() => received.endsWith("0\r\n\r\n"), 10_000);
    expect(received).toContain("event: overflow");
    expect(received.lastIndexOf("event: text_delta")).toBeLessThan(
      received.indexOf("event: overflow"),
    );
    // The subscriber never had more than the bound queued for it beyond what was written.
    expect(received.length).toBeLessThan(40 * 1024 * 1024);
    expect(SUBSCRIBER_BUFFER_BYTES).toBe(1024 * 1024);
  });

  it("keeps a subscriber that reads, however much it is sent over time", async () => {
    const { socket, listeners, emit } = await open();
    let received = 0;
    socket.on("data", (d) => {
      received += d.length;
    });
    const delta = "y".repeat(10_000);
    for (let batch = 0; batch < 40; batch++) {
      for (let i = 0; i < 20; i++) emit(delta); // 200 KB a batch, 8 MB in all
      await new Promise((r) => setTimeout(r, 15));
    }
    await until(() => received > 8_000_000);
    expect(listeners.size).toBe(1);
  });
});
