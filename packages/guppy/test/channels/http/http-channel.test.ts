import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createOrchestrator, createStore, type Logger, loadConfig } from "@guppy/core";
import { afterEach, describe, expect, it } from "vitest";
import { http } from "../../../src/channels/http/descriptor.js";
import { createHttpChannel } from "../../../src/channels/http/http-channel.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * A stand-in for http-worker.js speaking its protocol: it reports listening on the port it was
 * given (7000 when asked for any) and then dies, as a worker hit by a fatal error would.
 */
const dyingWorker = `
import { parentPort, workerData } from "node:worker_threads";
parentPort.postMessage({ type: "listening", address: "127.0.0.1", port: workerData.port || 7000 });
parentPort.postMessage({ type: "error", message: "boom " + workerData.port });
setTimeout(() => process.exit(3), 20);
`;

describe("HTTP channel's worker", () => {
  it("logs a worker's errors, starts it again on the same port when it exits, and gives up after 5 exits in a minute", async () => {
    const home = mkdtempSync(join(tmpdir(), "guppy-http-channel-"));
    dirs.push(home);
    const workerFile = join(home, "dying-worker.mjs");
    writeFileSync(workerFile, dyingWorker);
    const lines: string[] = [];
    const record = (level: string) => (message: string, fields?: Record<string, unknown>) =>
      lines.push(`${level} ${message}${fields?.error ? ` ${fields.error}` : ""}`);
    const logger: Logger = {
      debug: () => {},
      info: record("info"),
      warn: record("warn"),
      error: record("error"),
    };
    const config = loadConfig({
      env: { GUPPY_HOME: home, GUPPY_API_TOKEN: "a-test-token-of-20-chars", GUPPY_HTTP_PORT: "0" },
      settings: http.settings,
    });
    const store = createStore({ home });
    const orchestrator = createOrchestrator({
      store,
      maxConcurrent: 1,
      queueDepth: 1,
      idleTimeoutMs: 1000,
      createRunner: () => {
        throw new Error("no runs here");
      },
    });
    const said: string[] = [];
    const channel = createHttpChannel({ workerUrl: pathToFileURL(workerFile) });
    await channel.start({ orchestrator, config, store, logger, say: (t) => said.push(t) });
    expect(said).toContain("HTTP API listening on http://127.0.0.1:7000");
    for (let i = 0; i < 100 && !lines.some((l) => l.includes("keeps exiting")); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const restarts = lines.filter((l) => l.includes("exited; starting it again"));
    expect(restarts).toHaveLength(5);
    expect(lines.filter((l) => l.includes("keeps exiting"))).toHaveLength(1);
    // Every worker's error reached the log; the restarted ones were given the first one's port.
    expect(lines.filter((l) => l.includes("boom 0"))).toHaveLength(1);
    expect(lines.filter((l) => l.includes("boom 7000"))).toHaveLength(5);
    await channel.stop();
  });
});
