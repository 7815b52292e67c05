import type { AgentTool } from "@mariozechner/pi-agent-core";
import { dailyNotePath } from "../memory/memory.js";
import { identityPath, type PathTranslator } from "../sandbox/sandbox.js";
import { parseThreadId } from "../store/thread-layout.js";
import type { BootstrapFileName, PromptSources } from "./prompt-sources.js";

export { localDate } from "../memory/memory.js";

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
  /**
   * Whom the run is for (default: the owner). A guest's prompt leaves out what is the owner's
   * own: USER.md, the global and platform memory, the daily notes, the environment log and the
   * skills (its tools could not read them); this chat's memory is shown read-only.
   */
  audience?: "owner" | "guest";
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
  const { head, tail } = sharedSections(input);
  return `${head}\n\n${runtimeSection(input)}\n\n${tail}\n`;
}

/** The sections around the Runtime one: the same for every thread of a channel. */
interface SharedSections {
  head: string;
  tail: string;
}

/**
 * Translator → sources → the rest of the input → sections. Every thread of a channel shares one
 * PromptSources object (prompt-sources.ts) and the host's translator, so under load a new
 * thread's prompt reuses the sections built for the channel's other threads.
 */
const sharedMemo = new WeakMap<PathTranslator, WeakMap<object, Map<string, SharedSections>>>();
const noSources = {};

function sharedSections(input: SystemPromptInput): SharedSections {
  const agentPath = input.toAgentPath ?? identityPath;
  let bySources = sharedMemo.get(agentPath);
  if (!bySources) {
    bySources = new WeakMap();
    sharedMemo.set(agentPath, bySources);
  }
  const sourcesKey = input.sources ?? noSources;
  let byRest = bySources.get(sourcesKey);
  if (!byRest) {
    byRest = new Map();
    bySources.set(sourcesKey, byRest);
  }
  const key = [
    input.date,
    input.os,
    input.home,
    input.skillsInline ? 1 : 0,
    input.audience === "guest" ? "guest" : "owner",
    input.maxFileChars ?? DEFAULT_FILE_MAX_CHARS,
    toolsKey(input.tools),
  ].join("\0");
  let sections = byRest.get(key);
  if (!sections) {
    sections = buildSharedSections(input);
    if (byRest.size >= 16) byRest.clear();
    byRest.set(key, sections);
  }
  return sections;
}

/**
 * A short key for a tool list's names and descriptions: equal lists (each thread builds its own)
 * get the same number; worked out once per list (a list's tools are not changed in place).
 */
const toolKeys = new WeakMap<readonly AgentTool[], number>();
const toolListIds = new Map<string, number>();
let lastToolListId = 0;

function toolsKey(tools: readonly AgentTool[]): number {
  let id = toolKeys.get(tools);
  if (id === undefined) {
    const signature = tools.map((t) => `${t.name}\0${t.description}`).join("\0");
    id = toolListIds.get(signature);
    if (id === undefined) {
      if (toolListIds.size >= 64) toolListIds.clear();
      id = ++lastToolListId;
      toolListIds.set(signature, id);
    }
    toolKeys.set(tools, id);
  }
  return id;
}

function buildSharedSections(input: SystemPromptInput): SharedSections {
  const agentPath = input.toAgentPath ?? identityPath;
  const max = input.maxFileChars ?? DEFAULT_FILE_MAX_CHARS;
  const file = (content: string, path: string) => capText(content, max, agentPath(path));
  const sources = input.sources;
  const guest = input.audience === "guest";
  const head: string[] = [];
  const tail: string[] = [];

  const identity = sources?.bootstrap.find((f) => f.name === "IDENTITY.md");
  head.push(identity?.content ? file(identity.content, identity.path) : defaultIdentity);
  for (const f of sources?.bootstrap ?? []) {
    if (f.name === "IDENTITY.md" || f.name === "SYSTEM.md" || !f.content) continue;
    if (guest && f.name === "USER.md") continue;
    head.push(`## ${bootstrapHeadings[f.name]} (${f.name})\n\n${file(f.content, f.path)}`);
  }

  const system = sources?.bootstrap.find((f) => f.name === "SYSTEM.md");
  if (system?.content && !guest) {
    tail.push(
      `## ${bootstrapHeadings["SYSTEM.md"]} (SYSTEM.md)\n\nChanges made to this environment so far; add a line to ${agentPath(system.path)} when you install or reconfigure something.\n\n${file(system.content, system.path)}`,
    );
  }

  tail.push(
    `## Tools\n\n${input.tools.map((t) => `- ${t.name}: ${oneLine(t.description)}`).join("\n")}`,
  );

  if (sources && sources.skills.length > 0 && !guest) {
    tail.push(skillsSection(input, sources, file));
  }
  if (sources)
    tail.push(guest ? guestMemorySection(sources, file) : memorySection(input, sources, file));
  return { head: head.join("\n\n"), tail: tail.join("\n\n") };
}

function runtimeSection(input: SystemPromptInput): string {
  const agentPath = input.toAgentPath ?? identityPath;
  const ref = parseThreadId(input.threadId);
  return [
    "## Runtime",
    "",
    `- Date: ${input.date}`,
    `- OS: ${input.os}`,
    `- Thread: ${input.threadId}`,
    `- Channel: ${ref.adapter}:${ref.channel}`,
    `- Workspace (relative paths resolve here): ${agentPath(input.workspaceDir)}`,
    ...(input.audience === "guest" ? [] : [`- Data directory: ${agentPath(input.home)}`]),
  ].join("\n");
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

/** A guest's run: this chat's memory only, which the owner keeps. */
function guestMemorySection(sources: Omit<PromptSources, "warnings">, file: FileText): string {
  const chat = sources.memory.find((m) => m.scope === "channel");
  return [
    "## Memory",
    "You are talking with a guest of your owner. What your owner noted about this chat is below; you cannot change it, and you keep nothing of this conversation elsewhere.",
    chat?.content ? file(chat.content, chat.path) : "(nothing noted for this chat)",
  ].join("\n\n");
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** Longest text taken from any one file into the system prompt. */
export const DEFAULT_FILE_MAX_CHARS = 20_000;

/** Cuts `text` to `max` characters with a note telling the agent where the rest is. */
export function capText(text: string, max: number, path: string): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n\n[truncated: showing the first ${max} of ${text.length} characters of ${path}; read the file for the rest]`;
}
