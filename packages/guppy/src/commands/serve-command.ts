import { recordLastChannel, resolveModel, routeConsoleTo } from "@guppy/core";
import { killRunningTrees, resolveSandbox } from "@guppy/core/sandbox";
import { createAccessAdmin } from "../access/access-admin.js";
import type { GatewayChannel, GatewayContext } from "../channels/channel.js";
import { apiTokenToRedact } from "../channels/http/api-token.js";
import { removeGatewayFile, writeGatewayFile } from "../channels/http/gateway-file.js";
import {
  type AppConfig,
  channels as allChannels,
  loadEnabledChannels,
} from "../channels/registry.js";
import { ExitCode } from "../cli/cli-error.js";
import { rejectExtraArguments } from "../cli/extra-arguments.js";
import { whenOutputFails } from "../cli/output-errors.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { createRuntime, type Runtime } from "../gateway/create-runtime.js";
import { createGatewayLogger, describeEventBusReport } from "../gateway/gateway-logger.js";
import { createGatewayStatus } from "../gateway/gateway-status.js";
import { createIdleCollector } from "../gateway/idle-collect.js";
import { withLiveKey } from "./live-key.js";
import { createCliRedactor, loadCliConfig } from "./load-cli-config.js";

/**
 * `guppy serve`: the long-running gateway. Starts the orchestrator, every channel the
 * configuration turns on (channels/registry.ts) and replays the durable inbox; on
 * SIGINT/SIGTERM/SIGHUP stops accepting, lets running turns finish for
 * GUPPY_SHUTDOWN_GRACE_SECONDS, aborts what is left (context saved) and exits 0.
 */
export async function serveCommand(args: CliArgs): Promise<number> {
  rejectExtraArguments(args, "guppy serve");
  const started = new Date();
  const config = loadCliConfig(args);
  // Once, before anything starts: a sandbox that cannot work here stops the start (ConfigError).
  const { sandbox: sandboxConfig, notice: sandboxNotice } = resolveSandbox(config);
  // The key asked again at each request when guppy.env can change it (live-key.ts).
  const resolved = withLiveKey(await resolveModel(config), config);
  // Every secret guppy holds, taken out of what it logs, stores and sends (a key a tool printed);
  // the HTTP API's token too, generated now at a first start so that it is among them.
  const redactor = createCliRedactor(config, resolved, apiTokenToRedact(config));
  const gw = createGatewayLogger({ home: config.home, debug: config.debug, redactor });
  const { logger } = gw;
  // A provider's malformed chunk, printed raw by its SDK, goes to the log cut to one line.
  routeConsoleTo(logger, "warn");
  // The log file and the terminal (warnings go to both).
  if (sandboxNotice) logger.warn(sandboxNotice);
  // The terminal's output is a courtesy: nobody reading it any more (`guppy serve | head`, a
  // closed terminal) or a full disk under `guppy serve > file` must not stop the gateway.
  whenOutputFails((_stream, error) => gw.terminalClosed(error.code ?? String(error)));
  process.on("unhandledRejection", (reason) => {
    logger.error("Unhandled promise rejection (the gateway keeps running)", {
      error: reason instanceof Error ? (reason.stack ?? reason.message) : String(reason),
    });
  });
  process.on("uncaughtException", (error) => {
    logger.error("Uncaught exception (the gateway keeps running)", {
      error: error.stack ?? error.message,
    });
  });

  // One full GC once the threads have been quiet for 10 s (their runs ended, their agents
  // unloaded): V8 left a load's garbage and grown heap in place (issue 33, bench/memory).
  const idle = createIdleCollector(10_000);
  const runtime = createRuntime(config, {
    scope: { type: "gateway" },
    resolved,
    logger,
    redactor,
    sandbox: sandboxConfig,
    events: true,
    heartbeat: true,
    onEventsReport: (report) => {
      gw.say(describeEventBusReport(report));
      // Reading 10,000 event files is a load like a run's: its garbage goes once it is quiet.
      if (report.type === "loaded") idle.touch();
      if (report.type === "fired") logger.info("event fired", { ...report });
      else logger.info(`event ${report.type}`, { ...report });
    },
  });
  const { orchestrator, store } = runtime;
  orchestrator.subscribe(gw.event);
  orchestrator.subscribe(idle.touch);

  const context: GatewayContext<AppConfig> = {
    // The owner's latest chat thread, where heartbeats run: recorded as the channels send.
    orchestrator: recordLastChannel(orchestrator, runtime.lastChannel),
    config,
    store,
    logger,
    subscribe: orchestrator.subscribe,
    say: gw.say,
    // A `guppy chat` on this home attaches to the HTTP API there (http/gateway-file.ts).
    listening: (url) => {
      try {
        writeGatewayFile(config.home, url);
      } catch (error) {
        logger.warn("Could not write gateway.json: guppy chat will not attach", {
          error: String(error),
        });
      }
    },
  };
  const channels: GatewayChannel<AppConfig>[] = [];
  context.access = createAccessAdmin(config, logger);
  context.gatewayStatus = createGatewayStatus({
    started,
    model: resolved.ref,
    orchestrator,
    channels: () =>
      allChannels.map(({ name }) => ({
        name,
        state: channels.some((c) => c.name === name) ? "running" : "off",
      })),
    events: () => runtime.events?.list() ?? [],
    usage: runtime.usage,
    recentErrors: gw.recentErrors,
  });
  try {
    for (const channel of await loadEnabledChannels(config)) {
      await channel.start(context);
      channels.push(channel);
    }
  } catch (error) {
    await Promise.allSettled(channels.map((c) => c.stop()));
    gw.flush();
    throw error;
  }
  // The inbox replayed (the channels are registered: its answers go out), then the heartbeat,
  // the subagents' hand-overs, the event bus and the MCP servers.
  await runtime.start();
  gw.say(
    `guppy serve ready: model ${resolved.ref}, channels ${channels.map((c) => c.name).join(", ")}, log ${gw.path}`,
  );
  logger.info("gateway ready", {
    model: resolved.ref,
    channels: channels.map((c) => c.name),
    maxConcurrent: config.maxConcurrent,
  });

  // SIGHUP: the terminal it ran in was closed (node's default would end it mid-run).
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    for (const name of STOP_SIGNALS) process.once(name, () => resolve(name));
  });
  return shutdown(signal, config, channels, runtime, gw);
}

/**
 * The signals that stop the gateway gracefully; a second SIGINT or SIGTERM stops it at once, its
 * running tool commands killed first.
 */
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

async function shutdown(
  signal: NodeJS.Signals,
  config: AppConfig,
  channels: GatewayChannel<AppConfig>[],
  runtime: Runtime<AppConfig>,
  gw: ReturnType<typeof createGatewayLogger>,
): Promise<number> {
  const { orchestrator } = runtime;
  const graceMs = config.shutdownGraceSeconds * 1000;
  const running = orchestrator.counters().runningNow;
  gw.say(
    `${signal}: shutting down; ${running} running turn(s) may finish within ${config.shutdownGraceSeconds}s (signal again to stop now)`,
  );
  gw.logger.info("shutdown started", { signal, running, graceMs });
  const again = () => {
    // Exiting at once: the running tool commands are killed first (synchronously, SIGKILL), or
    // they would go on with their side effects after the next start said they were stopped.
    const killed = killRunningTrees();
    gw.say(
      `second signal: stopping now${killed > 0 ? ` (killed ${killed} running tool command(s))` : ""}`,
    );
    gw.flush();
    process.exit(ExitCode.interrupted);
  };
  process.once("SIGINT", again);
  process.once("SIGTERM", again);
  // Whatever still holds the drain (a run that ignored its abort, a channel that will not stop),
  // the process is gone by grace + 5 s; prompts left without an answer are reported as
  // interrupted at the next start.
  setTimeout(() => {
    const killed = killRunningTrees();
    gw.logger.warn("shutdown took too long: exiting now", { killed });
    gw.say(`shutdown took longer than ${config.shutdownGraceSeconds + 5}s: stopping now`);
    gw.flush();
    process.exit(ExitCode.interrupted);
  }, graceMs + 5000).unref();
  // A closed terminal may send SIGHUP twice (the kernel, then the shell to its jobs): it never
  // cuts the drain short, and without a listener node would end the process.
  process.on("SIGHUP", () => {});
  // Stop accepting first (the heartbeat, the event bus and the orchestrator stop at once), then
  // drain; the subagents still running and the MCP servers' processes stop with it.
  const drained = runtime.stop(graceMs);
  // The chat channels stop polling at once but post until the drain ends: its answers go out.
  const stopped = Promise.allSettled(channels.map((c) => c.stop(drained)));
  await drained;
  // Every run has ended; a tool command aborted at the end of the grace period may still wait
  // for its SIGKILL, whose timer does not keep the process alive.
  killRunningTrees();
  await Promise.race([stopped, new Promise((r) => setTimeout(r, 3000).unref())]);
  removeGatewayFile(config.home);
  const counters = orchestrator.counters();
  gw.logger.info("shutdown complete", { ...counters });
  gw.say(`stopped (${counters.runs} run(s) since start, ${counters.busy} busy refusal(s))`);
  gw.flush();
  // Anything still holding the event loop (a stuck socket) must not keep the process alive.
  setTimeout(() => process.exit(ExitCode.ok), 200).unref();
  return ExitCode.ok;
}
