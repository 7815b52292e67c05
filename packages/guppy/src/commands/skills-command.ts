import { join } from "node:path";
import { isConfigError } from "@guppy/core";
import { scopeDirs } from "@guppy/core/memory";
import { loadSkills, type Skill } from "@guppy/core/skills";
import { parseThreadId } from "@guppy/core/thread-layout";
import { ExitCode, UsageError } from "../cli/cli-error.js";
import { rejectExtraArguments } from "../cli/extra-arguments.js";
import type { CliArgs } from "../cli/parse-cli-args.js";
import { sessionThreadId } from "../cli/session-thread-id.js";
import { loadCliConfig } from "./load-cli-config.js";

/**
 * `guppy skills [--thread adapter:channel:thread]`: the skills that thread sees (default the
 * terminal's `cli:local:default`, or `cli:local:<session>` with --session), the scope each comes
 * from, its SKILL.md and what it overrides. Problems with skill files are warnings on stderr.
 */
export async function skillsCommand(args: CliArgs): Promise<number> {
  rejectExtraArguments(args, "guppy skills", 0, "use --thread adapter:channel:thread");
  const sessionThread = sessionThreadId(args.session);
  const config = loadCliConfig(args);
  const threadId = args.thread ?? sessionThread;
  try {
    parseThreadId(threadId);
  } catch (error) {
    if (isConfigError(error)) throw new UsageError(`--thread: ${error.message}`);
    throw error;
  }
  const { skills, warnings } = loadSkills(config.home, threadId);
  for (const warning of warnings) process.stderr.write(`guppy: warning: ${warning}\n`);
  if (skills.length === 0) {
    const where = scopeDirs(config.home, threadId)
      .map((s) => `  ${join(s.dir, "skills", "<name>", "SKILL.md")}  (${s.label})`)
      .join("\n");
    process.stdout.write(`No skills for ${threadId}. A skill is a SKILL.md in one of:\n${where}\n`);
    return ExitCode.ok;
  }
  const labels = new Map(scopeDirs(config.home, threadId).map((s) => [s.scope, s.label]));
  const nameWidth = Math.max(...skills.map((s) => s.name.length));
  const scopeWidth = Math.max(...skills.map((s) => (labels.get(s.scope) ?? s.scope).length));
  const lines = skills.map((s: Skill) => {
    const overrides = s.overrides.length > 0 ? ` (overrides ${s.overrides.join(", ")})` : "";
    return [
      `${s.name.padEnd(nameWidth)}  ${(labels.get(s.scope) ?? s.scope).padEnd(scopeWidth)}  ${s.path}${overrides}`,
      `${" ".repeat(nameWidth + 2)}${s.description}`,
    ].join("\n");
  });
  process.stdout.write(`Skills for ${threadId}:\n${lines.join("\n")}\n`);
  return ExitCode.ok;
}
