import type { AgentTool } from "@mariozechner/pi-agent-core";
import { dailyNotePath } from "../memory/daily-notes.js";
import { parseThreadId } from "../store/thread-id.js";
import type { BootstrapFileName } from "./bootstrap-files.js";
import { capText, DEFAULT_FILE_MAX_CHARS } from "./cap-text.js";
import type { PromptSources } from "./load-prompt-sources.js";
import { identityPath, type PathTranslator } from "./path-translation.js";

export { localDate } from "../memory/local-date.js";

export interface SystemPromptInput {
  threadId: string;
  workspaceDir: string;
  home: string;
  tools: readonly AgentTool[];
  /** Today's date (YYYY-MM-DD) in the configured time zone: a date, never a clock time, so the prompt stays cache-stable. */
  date: string;
  os: string;
  /** Identity/bootstrap files, memory, daily notes and skills (see loadPromptSources); omitted → none. */
  sources?: Omit<PromptSources, "warnings">;
  /** Whole SKILL.md bodies instead of a listing (GUPPY_SKILLS_INLINE). */
  skillsInline?: boolean;
  /** Longest text taken from any one file (default 20,000 characters). */
  maxFileChars?: number;
  /** Host path → the path the agent's tools see (the sandbox's; identity on the host). */
  toAgentPath?: PathTranslator;
}

const defaultIdentity =
  "You are guppy, a personal AI agent running on your user's own machine. You act for them with tools: " +
  "you run shell commands and read, write and edit files. Be direct and brief; do the work rather than describe it.";

const bootstrapHeadings: Record<Exclude<BootstrapFileName, "IDENTITY.md">, string> = {
  "SOUL.md": "Soul",
  "USER.md": "User",
  "AGENTS.md": "Operating rules",
  "SYSTEM.md": "Environment changes",
};

/**
 * Assembles the system prompt: identity, bootstrap files, runtime facts, tools, skills, memory and
 * daily notes. It is a pure function of its input: the same inputs always give the same bytes (no
 * clock time, fixed ordering), which keeps provider prompt caches warm. The most stable parts come
 * first and memory last, so a memory edit leaves the cached prefix intact.
 */
export function buildSystemPrompt(input: SystemPromptInput): string {
  const agentPath = input.toAgentPath ?? identityPath;
  const max = input.maxFileChars ?? DEFAULT_FILE_MAX_CHARS;
  const file = (content: string, path: string) => capText(content, max, agentPath(path));
  const sources = input.sources;
  const ref = parseThreadId(input.threadId);
  const sections: string[] = [];

  const identity = sources?.bootstrap.find((f) => f.name === "IDENTITY.md");
  sections.push(identity?.content ? file(identity.content, identity.path) : defaultIdentity);
  for (const f of sources?.bootstrap ?? []) {
    if (f.name === "IDENTITY.md" || f.name === "SYSTEM.md" || !f.content) continue;
    sections.push(`## ${bootstrapHeadings[f.name]} (${f.name})\n\n${file(f.content, f.path)}`);
  }

  sections.push(
    [
      "## Runtime",
      "",
      `- Date: ${input.date}`,
      `- OS: ${input.os}`,
      `- Thread: ${input.threadId}`,
      `- Channel: ${ref.adapter}:${ref.channel}`,
      `- Workspace (relative paths resolve here): ${agentPath(input.workspaceDir)}`,
      `- Data directory: ${agentPath(input.home)}`,
    ].join("\n"),
  );
  const system = sources?.bootstrap.find((f) => f.name === "SYSTEM.md");
  if (system?.content) {
    sections.push(
      `## ${bootstrapHeadings["SYSTEM.md"]} (SYSTEM.md)\n\nChanges made to this environment so far; add a line to ${agentPath(system.path)} when you install or reconfigure something.\n\n${file(system.content, system.path)}`,
    );
  }

  sections.push(
    `## Tools\n\n${input.tools.map((t) => `- ${t.name}: ${oneLine(t.description)}`).join("\n")}`,
  );

  if (sources && sources.skills.length > 0) sections.push(skillsSection(input, sources, file));
  if (sources) sections.push(memorySection(input, sources, file));
  return `${sections.join("\n\n")}\n`;
}

type FileText = (content: string, path: string) => string;

function skillsSection(
  input: SystemPromptInput,
  sources: Omit<PromptSources, "warnings">,
  file: FileText,
): string {
  const agentPath = input.toAgentPath ?? identityPath;
  if (input.skillsInline) {
    const bodies = sources.skills.map(
      (s) =>
        `### ${s.name}\n\n${s.description}\n(${agentPath(s.path)}; companion files are in ${agentPath(s.dir)})\n\n${file(s.body, s.path)}`,
    );
    return [
      "## Skills",
      "Follow a skill's instructions when a task matches its description.",
      ...bodies,
    ].join("\n\n");
  }
  const lines = sources.skills.map((s) => `- ${s.name}: ${s.description} (${agentPath(s.path)})`);
  return [
    "## Skills",
    "Skills are instructions for particular tasks. When a task matches a skill's description, read its SKILL.md with the read tool first and follow it; companion files sit next to it.",
    lines.join("\n"),
  ].join("\n\n");
}

function memorySection(
  input: SystemPromptInput,
  sources: Omit<PromptSources, "warnings">,
  file: FileText,
): string {
  const agentPath = input.toAgentPath ?? identityPath;
  const out: string[] = [
    "## Memory",
    [
      "Your memory is Markdown files you keep with your write and edit tools; they are read into this prompt before every run. Save what is worth remembering (preferences, facts, decisions, ongoing work) in the narrowest scope that fits, keep entries short and current, and rewrite or remove what is stale:",
      ...sources.memory.map((m) => `- ${m.title}: ${agentPath(m.path)} — ${m.purpose}`),
    ].join("\n"),
  ];
  const filled = sources.memory.filter((m) => m.content);
  if (filled.length === 0) out.push("(no memory yet)");
  for (const m of filled) out.push(`### ${m.title}\n\n${file(m.content ?? "", m.path)}`);

  const today = sources.dailyNotes[0]?.path ?? dailyNotePath(input.home, input.date);
  out.push(
    `## Daily notes\n\nToday's note is ${agentPath(today)}: append short entries there for what happened today (tasks done, things to follow up). Today's and the previous two days' notes are below.`,
  );
  const notes = sources.dailyNotes.filter((n) => n.content);
  if (notes.length === 0) out.push("(no daily notes yet)");
  for (const n of notes) {
    const label = n.date === input.date ? `${n.date} (today)` : n.date;
    out.push(`### ${label}\n\n${file(n.content ?? "", n.path)}`);
  }
  return out.join("\n\n");
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
