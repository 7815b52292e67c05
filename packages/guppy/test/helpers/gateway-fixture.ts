import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { loadConfig, recordLastChannel, resolveModel } from "@guppy/core";
import type { EventClock } from "@guppy/core/events";
import { resolveSandbox } from "@guppy/core/sandbox";
import { test } from "vitest";
import { createAccessAdmin } from "../../src/access/access-admin.js";
import type { GatewayContext } from "../../src/channels/channel.js";
import { apiTokenToRedact } from "../../src/channels/http/api-token.js";
import { removeGatewayFile, writeGatewayFile } from "../../src/channels/http/gateway-file.js";
import { createHttpChannel } from "../../src/channels/http/http-channel.js";
import { type AppConfig, guppySettings } from "../../src/channels/registry.js";
import { createCliRedactor } from "../../src/commands/load-cli-config.js";
import { createRuntime, type Runtime } from "../../src/gateway/create-runtime.js";
import { createGatewayLogger, describeEventBusReport } from "../../src/gateway/gateway-logger.js";
import { createGatewayStatus } from "../../src/gateway/gateway-status.js";
import { type AsyncMockLlm, authorizedFetch, startAsyncMockLlm } from "../serve/serve-harness.js";
import { tempHome } from "./run-cli.js";

/**
 * The HTTP API's worker thread as built (`npm run build`): a worker runs plain JavaScript, and
 * the spawned `guppy serve` tests run the build too. The channel around it is src's.
 */
const httpWorker = new URL("../../dist/channels/http/http-worker.js", import.meta.url);

export interface GatewayOptions {
  /** Settings as `guppy serve` reads them from its environment, over the mock LLM's and GUPPY_HTTP_PORT=0. */
  env?: Record<string, string>;
  /** The event bus's and the heartbeat's time and timers (default: the real ones). */
  clock?: EventClock;
}

/** `guppy serve` in this process: the runtime and the HTTP API on 127.0.0.1 (a random port). */
export interface InProcessGateway {
  home: string;
  config: AppConfig;
  runtime: Runtime<AppConfig>;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** The API token (generated into `<home>/api-token`, as at a first `guppy serve`). */
  token: string;
  /** Authorised fetch against the API. */
  api(path: string, init?: RequestInit): Promise<Response>;
  /** What `guppy serve` would have printed on its terminal so far. */
  terminal(): string;
  /** `<home>/logs/gateway.log` (pino JSON lines) as written so far. */
  log(): string;
  /** As at SIGTERM: the runtime drains (1 s of grace), the HTTP API closes, gateway.json goes. */
  stop(): Promise<void>;
}

/**
 * What `guppy serve` (commands/serve-command.ts) starts, minus the process: the same composition
 * root, logger, context and HTTP channel (its worker thread on 127.0.0.1:0), the terminal's lines
 * kept in memory. `home` is not removed by `stop` (a test may start it again).
 */
export async function startGateway(
  home: string,
  llm: Pick<AsyncMockLlm, "env">,
  options: GatewayOptions = {},
): Promise<InProcessGateway> {
  const started = new Date();
  const env = { ...llm.env(), GUPPY_HOME: home, GUPPY_HTTP_PORT: "0", ...options.env };
  const config = loadConfig({ env, home, settings: guppySettings });
  const { sandbox } = resolveSandbox(config);
  const resolved = await resolveModel(config, { env });
  const redactor = createCliRedactor(config, resolved, apiTokenToRedact(config));
  let terminal = "";
  const gw = createGatewayLogger({
    home,
    debug: config.debug,
    redactor,
    write: (lines) => {
      terminal += lines;
      if (process.env.GUPPY_TEST_DEBUG) process.stderr.write(lines);
    },
  });
  const { logger } = gw;
  const runtime = createRuntime(config, {
    scope: { type: "gateway" },
    resolved,
    logger,
    redactor,
    sandbox,
    events: true,
    heartbeat: true,
    onEventsReport: (report) => gw.say(describeEventBusReport(report)),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const { orchestrator, store } = runtime;
  orchestrator.subscribe(gw.event);
  const http = createHttpChannel({ workerUrl: httpWorker });
  const context: GatewayContext<AppConfig> = {
    orchestrator: recordLastChannel(orchestrator, runtime.lastChannel),
    config,
    store,
    logger,
    subscribe: orchestrator.subscribe,
    say: gw.say,
    listening: (url) => writeGatewayFile(home, url),
    access: createAccessAdmin(config, logger),
  };
  context.gatewayStatus = createGatewayStatus({
    started,
    model: resolved.ref,
    orchestrator,
    channels: () => [{ name: "http", state: "running" }],
    events: () => runtime.events?.list() ?? [],
    usage: runtime.usage,
    recentErrors: gw.recentErrors,
  });
  await http.start(context);
  await runtime.start();
  gw.flush();
  const url = /HTTP API listening on (http:\/\/\S+)/.exec(terminal)?.[1];
  if (!url) {
    await Promise.allSettled([http.stop(), runtime.stop(0)]);
    throw new Error(`the HTTP API did not say where it listens:\n${terminal}`);
  }
  const token = readFileSync(join(home, "api-token"), "utf8").trim();
  let stopped: Promise<void> | undefined;
  return {
    home,
    config,
    runtime,
    url,
    token,
    api: authorizedFetch(url, token),
    terminal: () => {
      gw.flush();
      return terminal;
    },
    log: () => {
      gw.flush();
      return readFileSync(gw.path, "utf8");
    },
    stop() {
      stopped ??= (async () => {
        const drained = runtime.stop(1000);
        await Promise.allSettled([drained, http.stop()]);
        removeGatewayFile(home);
        gw.flush();
      })();
      return stopped;
    },
  };
}

/**
 * A clock that runs with the real one until the test moves it ahead: `advance(ms)` fires at
 * once the timers that come due (the event bus's one-shots and periodic slots) instead of
 * waiting for them.
 */
export function skewableClock(): EventClock & { advance(ms: number): void } {
  let offset = 0;
  const timers = new Set<{ fn: () => void; at: number; real: NodeJS.Timeout }>();
  const now = () => Date.now() + offset;
  const fire = (timer: { fn: () => void; at: number; real: NodeJS.Timeout }) => {
    clearTimeout(timer.real);
    if (timers.delete(timer)) timer.fn();
  };
  return {
    now,
    setTimer(fn, ms) {
      const timer = { fn, at: now() + ms, real: undefined as unknown as NodeJS.Timeout };
      timer.real = setTimeout(() => fire(timer), ms);
      timers.add(timer);
      return timer;
    },
    clearTimer(handle) {
      const timer = handle as { real: NodeJS.Timeout };
      clearTimeout(timer.real);
      timers.delete(handle as never);
    },
    advance(ms) {
      offset += ms;
      for (const timer of [...timers].sort((a, b) => a.at - b.at)) {
        if (timer.at <= now()) fire(timer);
      }
    },
  };
}

/**
 * Tests against in-process gateways that share one scripted LLM (aimock over real HTTP, started
 * once per file): `home` is a temp GUPPY_HOME removed after the test; `gateway(options)` starts a
 * gateway on it (again after a `stop`: a restart), every one stopped after the test.
 */
export function gatewayTest(
  script: (request: ChatCompletionRequest) => FixtureResponse | Promise<FixtureResponse>,
) {
  return test.extend<{
    $test: { home: string; gateway: (options?: GatewayOptions) => Promise<InProcessGateway> };
    $file: { llm: AsyncMockLlm };
  }>({
    llm: [
      // biome-ignore lint/correctness/noEmptyPattern: Vitest reads the fixtures a fixture uses from its first parameter.
      async ({}, use) => {
        const llm = await startAsyncMockLlm(script);
        await use(llm);
        await llm.stop();
      },
      { scope: "file" },
    ],
    // biome-ignore lint/correctness/noEmptyPattern: as above.
    home: async ({}, use) => {
      const { home, cleanup } = tempHome();
      await use(home);
      cleanup();
    },
    gateway: async ({ home, llm }, use) => {
      const started: InProcessGateway[] = [];
      await use(async (options) => {
        const gateway = await startGateway(home, llm, options);
        started.push(gateway);
        return gateway;
      });
      await Promise.all(started.map((g) => g.stop()));
    },
  });
}
