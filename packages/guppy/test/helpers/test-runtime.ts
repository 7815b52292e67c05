import { createLineLogger, loadConfig, resolveModel, silentLogger } from "@guppy/core";
import type { GatewayContext } from "../../src/channels/channel.js";
import { type AppConfig, guppySettings } from "../../src/channels/registry.js";
import { createRuntime, type Runtime } from "../../src/gateway/create-runtime.js";
import type { MockLlm } from "./mock-llm.js";
import { tempHome } from "./run-cli.js";

export interface TestRuntime {
  home: string;
  config: AppConfig;
  runtime: Runtime<AppConfig>;
  store: Runtime["store"];
  orchestrator: Runtime["orchestrator"];
  /** What a channel is started with: the runtime's orchestrator, config, store and logger. */
  context: GatewayContext<AppConfig>;
  /** Stops the runtime (1 s of grace) and removes the home it made. */
  stop(): Promise<void>;
}

/**
 * `guppy serve`'s runtime (gateway/create-runtime.ts) in process, against the LLM mock, started
 * before any channel. What only tests add: a temp home, the mock's environment, the host sandbox,
 * no event bus or heartbeat (a test that wants them starts them itself), the log on stderr with
 * GUPPY_TEST_DEBUG.
 */
export async function startRuntime(
  llm: MockLlm,
  env: Record<string, string> = {},
  /** An existing GUPPY_HOME (a restart): left in place by `stop`. */
  existingHome?: string,
): Promise<TestRuntime> {
  const { home, cleanup } = existingHome ? { home: existingHome, cleanup: () => {} } : tempHome();
  const fullEnv = { ...llm.env("openai-completions"), GUPPY_HOME: home, ...env };
  const config = loadConfig({ env: fullEnv, home, settings: guppySettings });
  const logger = process.env.GUPPY_TEST_DEBUG ? createLineLogger({ level: "debug" }) : silentLogger;
  const runtime = createRuntime(config, {
    scope: { type: "gateway" },
    resolved: await resolveModel(config, { env: fullEnv }),
    logger,
    sandbox: { type: "host" },
    events: false,
    heartbeat: false,
  });
  await runtime.start();
  const { store, orchestrator } = runtime;
  return {
    home,
    config,
    runtime,
    store,
    orchestrator,
    context: { orchestrator, config, store, logger },
    async stop() {
      await runtime.stop(1000);
      cleanup();
    },
  };
}
