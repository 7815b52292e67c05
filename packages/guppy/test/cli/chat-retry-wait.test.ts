import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanEnv, guppyBin, tempHome } from "../helpers/run-cli.js";

describe("guppy chat -m while the provider asks to wait", () => {
  let server: Server;
  let requests = 0;
  const home = tempHome();
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        requests++;
        res.writeHead(429, { "content-type": "application/json", "retry-after": "50" });
        res.end(JSON.stringify({ error: { message: "Rate limited" } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    home.cleanup();
  });

  it("Ctrl+C ends the retry wait at once and exits 130", async () => {
    const child = spawn(process.execPath, [guppyBin, "chat", "-m", "hello", "--session", "w"], {
      env: cleanEnv({
        GUPPY_HOME: home.home,
        GUPPY_MODEL: "openai/mock-gpt",
        GUPPY_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        GUPPY_API: "openai-completions",
        GUPPY_API_KEY: "test-key",
        GUPPY_MAX_RETRIES: "3",
        GUPPY_SANDBOX: "host",
      }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    const deadline = Date.now() + 10_000;
    while (requests === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(requests).toBe(1);
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    child.kill("SIGINT");
    const code = await closed;
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(code).toBe(130);
    expect(stderr).toContain("guppy: interrupted");
    expect(requests).toBe(1);
  });
});
