import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadConfig, type OrchestratorEvent, resolveModel } from "@guppy/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntime } from "../../src/gateway/create-runtime.js";
import { type MockLlm, requestText, startEchoLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

/**
 * What was typed in `guppy chat` is in the thread's context already: when the gateway runs the
 * thread later, its backfill must not send it again as "posted while I was not running".
 */
describe("guppy chat keeps the thread's log cursor and status.json", () => {
  let llm: MockLlm;
  const home = tempHome();
  beforeAll(async () => {
    llm = await startEchoLlm();
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });

  it("the gateway's next run of a chat's thread backfills nothing", async () => {
    const env = cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home.home });
    for (const text of ["first chat line", "second chat line"]) {
      const r = await runCli(["chat", "-m", text], { env });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
    }
    const dir = join(home.home, "cli", "local", "default");
    expect(existsSync(join(dir, "status.json"))).toBe(true);

    // The gateway's path: guppy serve's runtime on the same home runs the thread.
    const config = loadConfig({ env });
    const runtime = createRuntime(config, {
      scope: { type: "gateway" },
      resolved: await resolveModel(config),
      sandbox: { type: "host" },
      events: false,
      heartbeat: false,
    });
    const { orchestrator } = runtime;
    await runtime.start();
    const events: OrchestratorEvent[] = [];
    orchestrator.subscribe((e) => events.push(e));
    const ended = new Promise<void>((resolve) =>
      orchestrator.subscribe((e) => {
        if (e.type === "runner" && e.event.type === "run_end") resolve();
      }),
    );
    orchestrator.send("cli:local:default", { type: "prompt", text: "from the api" });
    await ended;
    await runtime.stop(1000);

    const sent = requestText(llm.requests().at(-1)!);
    expect(sent).toContain("from the api");
    expect(sent).toContain("second chat line"); // the context
    expect(sent).not.toContain("while I was not running");
    expect(events.some((e) => e.type === "backfilled")).toBe(false);
  });
});
