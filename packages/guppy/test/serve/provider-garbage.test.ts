import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempHome } from "../helpers/run-cli.js";
import { type ServeProcess, startServe, waitFor } from "./serve-harness.js";

/** A provider whose stream sends one huge chunk that is not JSON. */
function garbageProvider(): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: {"choices": [${"x".repeat(100_000)}END-OF-CHUNK\n\n`);
      res.end();
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

describe("a malformed provider chunk", () => {
  const stops: Array<() => unknown> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  it("is logged cut, through the gateway's logger, never printed raw", async () => {
    const provider = await garbageProvider();
    stops.push(() => new Promise((r) => provider.close(r)));
    const { home, cleanup } = tempHome();
    stops.push(cleanup);
    const port = (provider.address() as AddressInfo).port;
    const s: ServeProcess = await startServe(home, {
      GUPPY_MODEL: "openai/mock-gpt",
      GUPPY_BASE_URL: `http://127.0.0.1:${port}/v1`,
      GUPPY_API: "openai-completions",
      GUPPY_API_KEY: "test-key",
      GUPPY_MAX_RETRIES: "0",
    });
    stops.push(async () => {
      s.child.kill("SIGTERM");
      await s.exited;
    });
    const posted = await s.api("/v1/threads/http:api:garbage/messages", {
      method: "POST",
      body: JSON.stringify({ text: "hello" }),
    });
    expect(posted.status).toBe(202);
    const log = await waitFor(() => {
      const text = readFileSync(join(home, "logs", "gateway.log"), "utf8");
      return text.includes("a library printed") && /■ error/.test(text) ? text : undefined;
    }, 15_000);
    expect(log).toContain("Could not parse message into JSON");
    expect(log).not.toContain("END-OF-CHUNK");
    expect(s.stdout()).not.toContain("END-OF-CHUNK");
    expect(s.stderr()).not.toContain("END-OF-CHUNK");
    expect(s.stderr().length).toBeLessThan(2000);
  });
});
