import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
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
    const listening = await listenHttp(app, "127.0.0.1", 0);
    const { address, port } = listening;
    try {
      expect(address).toBe("127.0.0.1");
      const response = await fetch(`http://127.0.0.1:${port}/ping`);
      expect(await response.text()).toBe("pong");
    } finally {
      await closeHttp(listening);
    }
  });

  it.skipIf(!hasSs)(
    "listens with a deep accept backlog, so a burst of new connections is not dropped at the handshake",
    async () => {
      const listening = await listenHttp(new Hono(), "127.0.0.1", 0);
      const { port } = listening;
      try {
        const somaxconn = Number(readFileSync("/proc/sys/net/core/somaxconn", "utf8"));
        const row = execFileSync("ss", ["-Hltn", `sport = :${port}`], { encoding: "utf8" });
        // State, Recv-Q, Send-Q (the backlog: ours, capped by the system's somaxconn), ...
        const backlog = Number(row.trim().split(/\s+/)[2]);
        // Node's default is 511, which a burst of 1,000 new connections overflowed.
        expect(backlog).toBe(Math.min(ACCEPT_BACKLOG, somaxconn));
      } finally {
        await closeHttp(listening);
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
      await closeHttp(first);
    }
  });

  describe("within a connection budget", () => {
    /** A raw HTTP/1.1 exchange: what the server sent before it closed, or by `until`. */
    const exchange = (port: number, path: string, until?: RegExp) =>
      new Promise<{ text: string; socket: Socket }>((resolve, reject) => {
        const socket = connect(port, "127.0.0.1");
        let text = "";
        socket.on("data", (d) => {
          text += d;
          if (until?.test(text)) resolve({ text, socket });
        });
        socket.on("error", reject);
        socket.on("close", () => resolve({ text, socket }));
        socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
      });

    it("answers connections past the budget 503 with retry-after, and serves again once they close", async () => {
      let release: () => void = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      const app = new Hono()
        .get("/hold", async (c) => {
          await held;
          return c.text("held");
        })
        .get("/ping", (c) => c.text("pong"));
      const logged: string[] = [];
      const listening = await listenHttp(app, "127.0.0.1", 0, {
        budget: { admit: 2, shed: 4 },
        log: (m) => logged.push(m),
      });
      try {
        const holding = [
          exchange(listening.port, "/hold", /held/),
          exchange(listening.port, "/hold", /held/),
        ];
        await new Promise((r) => setTimeout(r, 200));
        const refused = await exchange(listening.port, "/ping");
        expect(refused.text).toMatch(/^HTTP\/1\.1 503 /);
        expect(refused.text).toMatch(/\r\nRetry-After: [1-9]/);
        expect(refused.text).toMatch(/"type":"unavailable"/);
        expect(logged.join("\n")).toMatch(/answering 503/);
        release();
        for (const h of await Promise.all(holding)) {
          expect(h.text).toMatch(/^HTTP\/1\.1 200 /);
          h.socket.destroy();
        }
        await new Promise((r) => setTimeout(r, 100));
        const served = await exchange(listening.port, "/ping", /pong/);
        expect(served.text).toMatch(/^HTTP\/1\.1 200 [\s\S]*pong/);
        served.socket.destroy();
      } finally {
        release();
        await closeHttp(listening);
      }
    });

    it("closes idle keep-alive connections to make room rather than refusing", async () => {
      const app = new Hono().get("/ping", (c) => c.text("pong"));
      const listening = await listenHttp(app, "127.0.0.1", 0, {
        budget: { admit: 2, shed: 4 },
        log: () => {},
      });
      try {
        // Two keep-alive connections, answered and left open (idle).
        const idle = [
          await exchange(listening.port, "/ping", /pong/),
          await exchange(listening.port, "/ping", /pong/),
        ];
        const third = await exchange(listening.port, "/ping", /pong|503/);
        expect(third.text).toMatch(/^HTTP\/1\.1 200 /);
        for (const c of [...idle, third]) c.socket.destroy();
      } finally {
        await closeHttp(listening);
      }
    });
  });
});
