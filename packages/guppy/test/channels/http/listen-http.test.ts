import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { ACCEPT_BACKLOG, closeHttp, listenHttp } from "../../../src/channels/http/listen-http.js";

/** iproute2's `ss` reports a listening socket's backlog (its Send-Q); absent off Linux. */
const hasSs = (() => {
  try {
    execFileSync("ss", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

describe("listenHttp", () => {
  it("answers on the port it reports", async () => {
    const app = new Hono().get("/ping", (c) => c.text("pong"));
    const { server, address, port } = await listenHttp(app, "127.0.0.1", 0);
    try {
      expect(address).toBe("127.0.0.1");
      const response = await fetch(`http://127.0.0.1:${port}/ping`);
      expect(await response.text()).toBe("pong");
    } finally {
      await closeHttp(server);
    }
  });

  it.skipIf(!hasSs)(
    "listens with a deep accept backlog, so a burst of new connections is not dropped at the handshake",
    async () => {
      const { server, port } = await listenHttp(new Hono(), "127.0.0.1", 0);
      try {
        const somaxconn = Number(readFileSync("/proc/sys/net/core/somaxconn", "utf8"));
        const row = execFileSync("ss", ["-Hltn", `sport = :${port}`], { encoding: "utf8" });
        // State, Recv-Q, Send-Q (the backlog: ours, capped by the system's somaxconn), ...
        const backlog = Number(row.trim().split(/\s+/)[2]);
        // Node's default is 511, which a burst of 1,000 new connections overflowed.
        expect(backlog).toBe(Math.min(ACCEPT_BACKLOG, somaxconn));
      } finally {
        await closeHttp(server);
      }
    },
  );

  it("says in one line that the port is taken", async () => {
    const first = await listenHttp(new Hono(), "127.0.0.1", 0);
    try {
      await expect(listenHttp(new Hono(), "127.0.0.1", first.port)).rejects.toThrow(
        `port ${first.port} on 127.0.0.1 is already in use (set GUPPY_HTTP_PORT)`,
      );
    } finally {
      await closeHttp(first.server);
    }
  });
});
