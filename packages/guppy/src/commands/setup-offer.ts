import { type DiscoveredModel, discoverLocalModel, localServers } from "@guppy/core";
import type { AppConfig } from "../channels/registry.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { colorEnabled, createStyles } from "../terminal/ansi.js";
import { AnswerCancelled, createTerminalAsker } from "../terminal/ask.js";
import { loadCliConfig } from "./load-cli-config.js";

export interface ChatModel {
  /** The configuration to run with (reloaded after a setup). */
  config: AppConfig;
  /** The local server found when no model is configured: resolveModel takes it as found. */
  discover?: () => Promise<DiscoveredModel>;
}

/**
 * Before `guppy chat` runs its thread: with no model configured, a local Ollama or LM Studio that
 * answers is used at once (and `interactive`, the terminal is told so); when none answers and the
 * chat is on a terminal, `guppy setup` is offered, and run, and the chat goes on with what it
 * wrote. Otherwise nothing changes (resolveModel then says what is missing).
 */
export async function chatModelOrSetup(
  args: CliArgs,
  config: AppConfig,
  interactive: boolean,
): Promise<ChatModel> {
  if (config.model) return { config };
  const found = await discoverLocalModel();
  if (found) {
    if (interactive) {
      const name = localServers.find((s) => s.provider === found.provider)?.name ?? found.provider;
      const styles = createStyles(colorEnabled(process.stdout));
      process.stdout.write(
        styles.dim(
          `using the local ${name} at ${found.baseUrl} (model ${found.modelId}); guppy setup picks another\n`,
        ),
      );
    }
    return { config, discover: async () => found };
  }
  if (!interactive || !process.stdin.isTTY || !process.stdout.isTTY) return { config };
  process.stdout.write("No model is configured yet, and no local Ollama or LM Studio answered.\n");
  let answer: string;
  try {
    answer = (await createTerminalAsker().ask("Set it up now? [Y/n] ")).toLowerCase();
  } catch (error) {
    if (error instanceof AnswerCancelled) return { config };
    throw error;
  }
  if (answer !== "" && !answer.startsWith("y")) return { config };
  const { runSetup } = await import("./setup-command.js");
  const setup = await runSetup(args, createTerminalAsker());
  if (setup.code !== 0) return { config };
  // What the setup relies on in guppy.env, for this process too; a variable the real environment
  // sets stays (it comes first), one this process had from guppy.env takes the new value.
  for (const [name, value] of Object.entries(setup.env)) {
    const now = process.env[name];
    if (now === undefined || now === setup.envFileBefore[name]) process.env[name] = value;
  }
  process.stdout.write("\n");
  return { config: loadCliConfig(args) };
}
