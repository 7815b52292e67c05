import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildSystemPrompt, type SystemPromptInput } from "../../src/prompt/build-system-prompt.js";
import { loadPromptSources } from "../../src/prompt/prompt-sources.js";
import { createPathMapper } from "../../src/sandbox/sandbox.js";
import { createCoreTools } from "../../src/tools/create-tools.js";
import { tempHome } from "../helpers/temp-home.js";
import { toolFixture } from "../tools/tool-fixture.js";

const threadId = "telegram:-100123:42";
const now = new Date("2026-03-01T07:30:00Z"); // 2026-02-28 23:30 in Los Angeles

describe("buildSystemPrompt", () => {
  let t: ReturnType<typeof tempHome>;
  let fixture: ReturnType<typeof toolFixture>;
  beforeEach(() => {
    t = tempHome();
    fixture = toolFixture();
  });
  afterEach(() => {
    t.cleanup();
    fixture.cleanup();
  });

  const build = (extra: Partial<SystemPromptInput> = {}) =>
    buildSystemPrompt({
      threadId,
      workspaceDir: join(t.home, "telegram/-100123/42/scratch"),
      home: t.home,
      tools: createCoreTools(fixture.ctx),
      date: "2026-02-28",
      os: "linux 6.1",
      sources: loadPromptSources({ home: t.home, threadId, now, timeZone: "America/Los_Angeles" }),
      ...extra,
    });

  /** The text of the `## Title` (or `### Title`) section, up to the next heading of that level or above. */
  const section = (prompt: string, heading: string) => {
    const start = prompt.indexOf(`\n${heading}\n`);
    if (start === -1) return undefined;
    const level = heading.split(" ")[0] ?? "##";
    const rest = prompt.slice(start + heading.length + 2);
    const next = rest.search(new RegExp(`\\n#{2,${level.length}} `));
    return (next === -1 ? rest : rest.slice(0, next)).trim();
  };

  it("places identity, bootstrap files, runtime facts, tools, skills and memory in their sections", () => {
    t.write("IDENTITY.md", "You are Nemo, a cheerful fish.");
    t.write("SOUL.md", "Curious and kind.");
    t.write("USER.md", "Ana, a developer in Lisbon.");
    t.write("AGENTS.md", "Always confirm before deleting files.");
    t.write("SYSTEM.md", "- 2026-02-01 installed ripgrep");
    t.write("MEMORY.md", "Ana likes tea.");
    t.write("telegram/MEMORY.md", "Use short messages on Telegram.");
    t.write("telegram/-100123/MEMORY.md", "This group plans the trip.");
    t.write("memory/202602/20260228.md", "Booked the hotel.");
    t.write("memory/202602/20260226.md", "Picked the dates.");
    t.write(
      "skills/weather/SKILL.md",
      "---\nname: weather\ndescription: Look up the weather\n---\nUse wttr.in",
    );

    const prompt = build();
    expect(prompt.startsWith("You are Nemo, a cheerful fish.\n\n")).toBe(true);
    expect(prompt).not.toContain("You are guppy");
    expect(section(prompt, "## Soul (SOUL.md)")).toBe("Curious and kind.");
    expect(section(prompt, "## User (USER.md)")).toBe("Ana, a developer in Lisbon.");
    expect(section(prompt, "## Operating rules (AGENTS.md)")).toBe(
      "Always confirm before deleting files.",
    );
    expect(section(prompt, "## Environment changes (SYSTEM.md)")).toContain(
      "- 2026-02-01 installed ripgrep",
    );
    const runtime = section(prompt, "## Runtime");
    expect(runtime).toContain("- Date: 2026-02-28");
    expect(runtime).toContain("- OS: linux 6.1");
    expect(runtime).toContain(`- Thread: ${threadId}`);
    expect(runtime).toContain("- Channel: telegram:-100123");
    expect(runtime).toContain(
      `- Workspace (relative paths resolve here): ${join(t.home, "telegram/-100123/42/scratch")}`,
    );
    expect(
      section(prompt, "## Tools")
        ?.split("\n")
        .map((l) => l.split(":")[0]),
    ).toEqual(["- bash", "- read", "- write", "- edit"]);
    expect(section(prompt, "## Skills")).toContain(
      `- weather: Look up the weather (${join(t.home, "skills/weather/SKILL.md")})`,
    );
    expect(prompt).not.toContain("Use wttr.in");
    const memory = section(prompt, "## Memory") ?? "";
    expect(memory).toContain(`- Global Memory: ${join(t.home, "MEMORY.md")}`);
    expect(memory).toContain(
      `- Transport Memory (telegram): ${join(t.home, "telegram/MEMORY.md")}`,
    );
    expect(memory).toContain(
      `- Channel Memory (telegram:-100123): ${join(t.home, "telegram/-100123/MEMORY.md")}`,
    );
    expect(memory).toContain("narrowest scope");
    expect(section(prompt, "### Global Memory")).toBe("Ana likes tea.");
    expect(section(prompt, "### Transport Memory (telegram)")).toBe(
      "Use short messages on Telegram.",
    );
    expect(section(prompt, "### Channel Memory (telegram:-100123)")).toBe(
      "This group plans the trip.",
    );
    expect(section(prompt, "## Daily notes")).toContain(
      `Today's note is ${join(t.home, "memory/202602/20260228.md")}`,
    );
    expect(section(prompt, "### 2026-02-28 (today)")).toBe("Booked the hotel.");
    expect(section(prompt, "### 2026-02-26")).toBe("Picked the dates.");
    expect(prompt).not.toContain("(no memory yet)");
    // Memory comes after everything that changes less often (cache-friendly prefix).
    expect(prompt.indexOf("## Tools")).toBeLessThan(prompt.indexOf("## Memory"));
  });

  it("falls back to the default identity and says when there is no memory yet", () => {
    t.write("IDENTITY.md", "<!-- Describe who guppy is here. -->\n");
    t.write("MEMORY.md", "");
    const prompt = build();
    expect(prompt.startsWith("You are guppy")).toBe(true);
    expect(prompt).toContain("\n(no memory yet)\n");
    expect(prompt).toContain("(no daily notes yet)");
    expect(prompt).not.toContain("## Skills");
    expect(prompt).not.toContain("## Soul");
  });

  it("omits missing and empty memory levels but keeps the others", () => {
    t.write("telegram/-100123/MEMORY.md", "only the channel");
    t.write("telegram/MEMORY.md", "\n\n");
    const prompt = build();
    expect(prompt).not.toContain("### Global Memory");
    expect(prompt).not.toContain("### Transport Memory");
    expect(section(prompt, "### Channel Memory (telegram:-100123)")).toBe("only the channel");
    expect(prompt).not.toContain("(no memory yet)");
  });

  it("gives byte-identical output for the same inputs and changes only when a file does", () => {
    t.write("MEMORY.md", "Ana likes tea.");
    t.write("skills/b/SKILL.md", "---\nname: b\ndescription: second\n---\n");
    t.write("skills/a/SKILL.md", "---\nname: a\ndescription: first\n---\n");
    const first = build();
    expect(build()).toBe(first);
    expect(build()).toBe(first);
    expect(first.indexOf("- a: first")).toBeLessThan(first.indexOf("- b: second"));
    // No clock time: five hours earlier on the same local day gives the same bytes.
    const earlier = new Date(now.getTime() - 5 * 3600_000);
    const sources = loadPromptSources({
      home: t.home,
      threadId,
      now: earlier,
      timeZone: "America/Los_Angeles",
    });
    expect(build({ sources })).toBe(first);

    t.write("MEMORY.md", "Ana likes coffee.");
    const changed = build();
    expect(changed).not.toBe(first);
    expect(changed).toContain("Ana likes coffee.");
    // Everything before the memory section is unchanged (the cached prefix survives).
    const prefix = first.slice(0, first.indexOf("## Memory"));
    expect(changed.startsWith(prefix)).toBe(true);
  });

  it("shares the sections around Runtime between threads of one channel, never across inputs", () => {
    t.write("MEMORY.md", "Ana likes tea.");
    t.write("memory/202603/20260301.md", "- met Bo");
    const sources = loadPromptSources({ home: t.home, threadId, now, timeZone: "UTC" });
    const forThread = (id: string, extra: Partial<SystemPromptInput> = {}) =>
      build({ threadId: id, workspaceDir: join(t.home, `w-${id}`), sources, ...extra });
    const a = forThread("telegram:-100123:1", { date: "2026-02-28" });
    const b = forThread("telegram:-100123:2");
    const runtime = (p: string) => section(p, "## Runtime");
    expect(runtime(a)).toContain("- Thread: telegram:-100123:1");
    expect(runtime(b)).toContain("- Thread: telegram:-100123:2");
    expect(runtime(b)).toContain(`w-telegram:-100123:2`);
    const outside = (p: string) => p.replace(runtime(p) ?? "", "");
    expect(outside(b)).toBe(outside(a));
    // What the shared sections are made of still changes them: tools, date, skills mode, paths.
    const tools = createCoreTools(fixture.ctx);
    const renamed = tools.map((tool, i) => (i === 0 ? { ...tool, description: "Changed." } : tool));
    expect(forThread("telegram:-100123:3", { tools: renamed })).toContain(
      `- ${tools[0]?.name}: Changed.`,
    );
    expect(a).toContain("### 2026-03-01\n");
    expect(forThread("telegram:-100123:3", { date: "2026-03-01" })).toContain(
      "### 2026-03-01 (today)\n",
    );
    const mapped = forThread("telegram:-100123:3", {
      toAgentPath: createPathMapper([{ host: t.home, agent: "/guppy" }]),
    });
    expect(mapped).toContain("/guppy/MEMORY.md");
    expect(forThread("telegram:-100123:4")).not.toContain("/guppy/MEMORY.md");
  });

  it("caps each file at the limit with a note naming the file", () => {
    const big = `${"m".repeat(25_000)}END`;
    t.write("MEMORY.md", big);
    t.write("USER.md", `${"u".repeat(100)}`);
    const prompt = build();
    const global = section(prompt, "### Global Memory") ?? "";
    expect(global).toContain("m".repeat(20_000));
    expect(global).not.toContain("END");
    expect(global).toContain(
      `[truncated: showing the first 20000 of 25003 characters of ${join(t.home, "MEMORY.md")}; read the file for the rest]`,
    );
    expect(section(prompt, "## User (USER.md)")).toBe("u".repeat(100));

    const small = build({ maxFileChars: 50 });
    expect(section(small, "## User (USER.md)")).toContain("showing the first 50 of 100 characters");
  });

  it("inlines skill bodies when asked", () => {
    t.write(
      "skills/weather/SKILL.md",
      "---\nname: weather\ndescription: Look up the weather\n---\nUse wttr.in",
    );
    const prompt = build({ skillsInline: true });
    expect(section(prompt, "### weather")).toContain("Use wttr.in");
    expect(section(prompt, "### weather")).toContain("Look up the weather");
  });

  it("shows paths as the agent's tools see them (a Docker-style mapping)", () => {
    t.write(
      "skills/weather/SKILL.md",
      "---\nname: weather\ndescription: Look up the weather\n---\n",
    );
    const workspace = join(t.home, "telegram/-100123/42/scratch");
    const prompt = build({
      toAgentPath: createPathMapper([
        { host: workspace, agent: "/workspace" },
        { host: t.home, agent: "/data" },
      ]),
    });
    expect(prompt).toContain("- Workspace (relative paths resolve here): /workspace\n");
    expect(prompt).toContain("- Data directory: /data\n");
    expect(prompt).toContain("- weather: Look up the weather (/data/skills/weather/SKILL.md)");
    expect(prompt).toContain("- Global Memory: /data/MEMORY.md");
    expect(prompt).toContain("Today's note is /data/memory/202602/20260228.md");
    expect(prompt).not.toContain(t.home);
  });
});
