import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveHome } from "@guppy/core/config";
import { ExitCode } from "../cli/cli-error.js";
import { rejectExtraArguments } from "../cli/extra-arguments.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { checkHome } from "./check-home.js";

export const settingsTemplate = `// guppy settings. Precedence: command-line flags > environment variables > this file > defaults.
// Every key is listed in docs/configuration.md. Comments and trailing commas are allowed.
{
  // Model as provider/model-id from pi-ai's catalog, e.g. "anthropic/claude-sonnet-4-5",
  // "openai/gpt-4o-mini", "openrouter/anthropic/claude-sonnet-4.5". Env: GUPPY_MODEL.
  // "model": "anthropic/claude-sonnet-4-5",

  // A custom endpoint (Ollama, LM Studio, vLLM, a proxy): base URL + wire protocol.
  // "baseUrl": "http://127.0.0.1:11434/v1",
  // "api": "openai-completions",   // or "anthropic-messages", "openai-responses"

  // API keys are best left in the provider's own variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...).
  // "apiKey": "",

  // Tokens reserved for each reply, and the context window (defaults come from the model catalog).
  // "maxTokens": 8192,
  // "contextWindow": 200000,

  // Tool rounds per run before it stops, and the longest tool output kept in context.
  "maxToolRounds": 25,
  "toolResultMaxChars": 10000
}
`;

// Markdown templates hold only HTML comments: a file with nothing else counts as empty, so the
// prompt is unchanged (default identity, "no memory yet") until you write something real.
const comment = (text: string) => `<!--\n${text}\n-->\n`;

const files: Record<string, string> = {
  "settings.json": settingsTemplate,
  "MEMORY.md": comment(
    "Global memory: facts and preferences that hold everywhere. guppy reads this into every\n" +
      "conversation and keeps it up to date with its file tools. Narrower memory lives in\n" +
      "<adapter>/MEMORY.md (one platform) and <adapter>/<channel>/MEMORY.md (one channel).",
  ),
  "IDENTITY.md": comment(
    "Who the agent is: its name, personality and how it speaks. While this file holds only\n" +
      "comments guppy uses its default identity.",
  ),
  "SOUL.md": comment("The agent's values and temperament, in a few lines (optional)."),
  "USER.md": comment("Who guppy serves: your name, time zone, work, preferences (optional)."),
  "AGENTS.md": comment(
    'Operating rules guppy must follow, e.g. "ask before deleting files" (optional).',
  ),
  "SYSTEM.md": comment(
    "Environment change log: what was installed or reconfigured on this machine, one dated line\n" +
      "each. guppy appends to it when it changes the environment.",
  ),
};

/** Folders for skills (`skills/<name>/SKILL.md`) and daily notes (`memory/YYYYMM/YYYYMMDD.md`). */
const folders = ["skills", "memory"];

/** `guppy init`: creates GUPPY_HOME with a commented settings.json, commented memory/identity/bootstrap files and the skills/ and memory/ folders; never overwrites. */
export async function initCommand(args: CliArgs): Promise<number> {
  rejectExtraArguments(args, "guppy init");
  const home = resolveHome({ home: args.home });
  checkHome(home, args);
  mkdirSync(home, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    const path = join(home, name);
    if (existsSync(path)) {
      process.stdout.write(`kept     ${path}\n`);
    } else {
      writeFileSync(path, content, "utf8");
      process.stdout.write(`created  ${path}\n`);
    }
  }
  for (const name of folders) {
    const path = join(home, name);
    if (existsSync(path)) {
      process.stdout.write(`kept     ${path}/\n`);
    } else {
      mkdirSync(path, { recursive: true });
      process.stdout.write(`created  ${path}/\n`);
    }
  }
  return ExitCode.ok;
}
