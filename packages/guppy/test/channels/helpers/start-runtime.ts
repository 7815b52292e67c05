import {
  createLineLogger,
  createOrchestrator,
  createStore,
  createThreadRunner,
  loadConfig,
  type RuntimeOrchestrator,
  resolveModel,
  type Store,
  silentLogger,
} from "@guppy/core";
import type { GatewayContext } from "../../../src/channels/channel.js";
import { type AppConfig, guppySettings } from "../../../src/channels/registry.js";
import type { MockLlm } from "../../helpers/mock-llm.js";
import { tempHome } from "../../helpers/run-cli.js";

export interface TestRuntime {
  home: string;
  config: AppConfig;
  store: Store;
  orchestrator: RuntimeOrchestrator;
  context: GatewayContext<AppConfig>;
  stop(): Promise<void>;
}

/** The real orchestrator and thread runners of `guppy serve`, in process, against the LLM mock. */
export async function startRuntime(
  llm: MockLlm,
  env: Record<string, string> = {},
  /** An existing GUPPY_HOME (a restart): left in place by `stop`. */
  existingHome?: string,
): Promise<TestRuntime> {
  const { home, cleanup } = existingHome ? { home: existingHome, cleanup: () => {} } : tempHome();
  const fullEnv = { ...llm.env("openai-completions"), GUPPY_HOME: home, ...env };
  const config = loadConfig({ env: fullEnv, home, settings: guppySettings });
  const resolved = await resolveModel(config, { env: fullEnv });
  const store = createStore({ home });
  const orchestrator = createOrchestrator({
    store,
    createRunner: (threadId) => createThreadRunner({ threadId, config, resolved, store }),
    maxConcurrent: config.maxConcurrent,
    queueDepth: config.queueDepth,
    idleTimeoutMs: config.idleTimeoutSeconds * 1000,
    backfillLimit: config.groupBackfillMessages,
    modelName: `${resolved.model.provider}/${resolved.model.id}`,
    contextWindow: resolved.model.contextWindow,
  });
  await orchestrator.start();
  return {
    home,
    config,
    store,
    orchestrator,
    context: {
      orchestrator,
      config,
      store,
      logger: process.env.GUPPY_TEST_DEBUG ? createLineLogger({ level: "debug" }) : silentLogger,
    },
    async stop() {
      await orchestrator.shutdown(1000);
      cleanup();
    },
  };
}
