import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { dailyNotePath, localDate } from "@guppy/core/memory";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  lastMessage,
  type MockLlm,
  requestText,
  startMockLlm,
  type WireApi,
} from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

type Script = (request: ChatCompletionRequest, index: number) => FixtureResponse;

/** The system prompt of a request as the mock received it. */
function systemPrompt(request: ChatCompletionRequest | undefined): string {
  const system = request?.messages.find((m) => m.role === "system");
  return system ? requestText({ ...request!, messages: [system] }) : "";
}

/** The body of a `## Title` or `### Title` section: up to the next heading of that level or above. */
function section(prompt: string, heading: string): string | undefined {
  const start = prompt.indexOf(`\n${heading}\n`);
  if (start === -1) return undefined;
  const level = heading.split(" ")[0] ?? "##";
  const rest = prompt.slice(start + heading.length + 2);
  const next = rest.search(new RegExp(`\\n#{2,${level.length}} `));
  return (next === -1 ? rest : rest.slice(0, next)).trim();
}

describe.each<WireApi>(["openai-completions", "anthropic-messages"])(
  "memory, identity and skills through guppy chat -m over %s",
  (api) => {
    let llm: MockLlm;
    const home = tempHome();
    const put = (relative: string, content: string) => {
      const path = join(home.home, relative);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content);
      return path;
    };
    /** Answers tool results with "Saved.", follows `write:`/`edit:` instructions, else echoes. */
    const script: Script = (request) => {
      const last = lastMessage(request);
      if (last?.role === "tool")
        return { content: `Saved. ${String(last.content).split("\n")[0]}` };
      const text = requestText({ ...request, messages: [last!] });
      if (text.startsWith("remember-tea")) {
        return {
          toolCalls: [
            {
              name: "write",
              arguments: JSON.stringify({
                path: join(home.home, "MEMORY.md"),
                content: "The user's name is Ana.\n- Ana drinks green tea, no sugar.\n",
              }),
            },
          ],
        };
      }
      if (text.startsWith("rename-channel")) {
        return {
          toolCalls: [
            {
              name: "edit",
              arguments: JSON.stringify({
                path: join(home.home, "cli/local/MEMORY.md"),
                old_string: "This channel is for testing.",
                new_string: "This channel plans the spring release.",
              }),
            },
          ],
        };
      }
      return { content: `You said: ${text}` };
    };
    const env = () =>
      cleanEnv({ ...llm.env(api), GUPPY_HOME: home.home, GUPPY_TIMEZONE: "Asia/Tokyo" });

    beforeAll(async () => {
      llm = await startMockLlm((request, index) => script(request, index));
      put("IDENTITY.md", "You are Finn, a careful test fish.\n");
      put("USER.md", "Ana, a developer.\n");
      put("AGENTS.md", "Never delete files without asking.\n");
      put("MEMORY.md", "The user's name is Ana.\n");
      put("cli/MEMORY.md", "Terminal answers are plain text.\n");
      put("cli/local/MEMORY.md", "This channel is for testing.\n");
      put("telegram/MEMORY.md", "Not for the terminal.\n");
      put(
        "skills/weather/SKILL.md",
        "---\nname: weather\ndescription: Look up the weather\n---\nUse wttr.in\n",
      );
      put(
        "cli/skills/weather/SKILL.md",
        "---\nname: weather\ndescription: Weather, the terminal way\n---\ncurl wttr.in\n",
      );
      put("skills/broken/SKILL.md", "no frontmatter here\n");
    });
    afterAll(async () => {
      await llm.stop();
      home.cleanup();
    });
    afterEach(() => {
      llm.requests().length = 0;
    });

    it("sends identity, bootstrap files, memory levels, today's note and the skill listing in their sections", async () => {
      const today = localDate(new Date(), "Asia/Tokyo");
      const notePath = dailyNotePath(home.home, today);
      put(notePath.slice(home.home.length + 1), "Reviewed the memory design.\n");
      const r = await runCli(["chat", "-m", "hello", "--session", "default"], { env: env() });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("You said: hello\n");
      // The broken skill is reported once, as one line naming the file and the problem.
      expect(r.stderr.trim().split("\n")).toEqual([
        expect.stringMatching(/skills\/broken\/SKILL\.md skipped: no YAML frontmatter/),
      ]);
      const prompt = systemPrompt(llm.requests()[0]);
      expect(prompt.startsWith("You are Finn, a careful test fish.")).toBe(true);
      expect(section(prompt, "## User (USER.md)")).toBe("Ana, a developer.");
      expect(section(prompt, "## Operating rules (AGENTS.md)")).toBe(
        "Never delete files without asking.",
      );
      expect(section(prompt, "## Runtime")).toContain("- Thread: cli:local:default");
      expect(section(prompt, "## Runtime")).toContain(
        `- Workspace (relative paths resolve here): ${join(home.home, "cli/local/default/scratch")}`,
      );
      expect(section(prompt, "## Tools")).toMatch(/^- bash: /);
      expect(section(prompt, "## Skills")).toContain(
        `- weather: Weather, the terminal way (${join(home.home, "cli/skills/weather/SKILL.md")})`,
      );
      expect(prompt).not.toContain("Use wttr.in");
      expect(prompt).not.toContain("broken");
      expect(section(prompt, "## Memory")).toContain(
        `Global Memory: ${join(home.home, "MEMORY.md")}`,
      );
      expect(section(prompt, "### Global Memory")).toBe("The user's name is Ana.");
      expect(section(prompt, "### Transport Memory (cli)")).toBe(
        "Terminal answers are plain text.",
      );
      expect(section(prompt, "### Channel Memory (cli:local)")).toBe(
        "This channel is for testing.",
      );
      expect(prompt).not.toContain("Not for the terminal.");
      expect(section(prompt, "## Daily notes")).toContain(`Today's note is ${notePath}`);
      expect(section(prompt, `### ${today} (today)`)).toBe("Reviewed the memory design.");
    });

    it("sees next run what the agent wrote to MEMORY.md with write and edit", async () => {
      const saved = await runCli(["chat", "-m", "remember-tea please", "--session", "mem"], {
        env: env(),
      });
      expect(saved.code).toBe(0);
      expect(saved.stdout).toMatch(/^Saved\./);
      expect(readFileSync(join(home.home, "MEMORY.md"), "utf8")).toContain("green tea");
      // The run that wrote it was built before the write.
      expect(systemPrompt(llm.requests()[0])).not.toContain("green tea");

      const edited = await runCli(["chat", "-m", "rename-channel please", "--session", "mem"], {
        env: env(),
      });
      expect(edited.code).toBe(0);
      expect(systemPrompt(llm.requests().at(-1))).toContain("green tea");

      llm.requests().length = 0;
      const next = await runCli(["chat", "-m", "what do I drink?", "--session", "other"], {
        env: env(),
      });
      expect(next.code).toBe(0);
      const prompt = systemPrompt(llm.requests()[0]);
      expect(section(prompt, "### Global Memory")).toBe(
        "The user's name is Ana.\n- Ana drinks green tea, no sugar.",
      );
      expect(section(prompt, "### Channel Memory (cli:local)")).toBe(
        "This channel plans the spring release.",
      );
    });
  },
);

describe("guppy skills and guppy init", () => {
  it("lists the skills a thread sees, where each comes from and what it overrides", async () => {
    const home = tempHome();
    try {
      const put = (relative: string, name: string, description: string) => {
        const path = join(home.home, relative, "SKILL.md");
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, `---\nname: ${name}\ndescription: ${description}\n---\nbody\n`);
      };
      put("skills/notes", "notes", "global notes");
      put("skills/deploy", "deploy", "global deploy");
      put("telegram/skills/notes", "notes", "telegram notes");
      put("telegram/-100/skills/deploy-here", "deploy", "deploy this group's project");
      const env = cleanEnv({ GUPPY_HOME: home.home });

      const tg = await runCli(["skills", "--thread", "telegram:-100:7"], { env });
      expect(tg.code).toBe(0);
      expect(tg.stderr).toBe("");
      const lines = tg.stdout.split("\n");
      expect(lines[0]).toBe("Skills for telegram:-100:7:");
      expect(lines[1]).toMatch(
        new RegExp(
          `^deploy\\s+channel \\(telegram:-100\\)\\s+${join(home.home, "telegram/-100/skills/deploy-here/SKILL.md")} \\(overrides global\\)$`,
        ),
      );
      expect(lines[2]?.trim()).toBe("deploy this group's project");
      expect(lines[3]).toMatch(/^notes\s+transport \(telegram\)\s+.*\(overrides global\)$/);

      const cli = await runCli(["skills"], { env });
      expect(cli.code).toBe(0);
      expect(cli.stdout).toContain("Skills for cli:local:default:");
      expect(cli.stdout).toMatch(/notes\s+global\s+/);
      expect(cli.stdout).not.toContain("telegram notes");

      const bad = await runCli(["skills", "--thread", "Not An Id"], { env });
      expect(bad.code).toBe(2);
      expect(bad.stderr.trim().split("\n")).toHaveLength(1);
      expect(bad.stderr).toMatch(/^guppy: --thread: Invalid thread id "Not An Id"/);
    } finally {
      home.cleanup();
    }
  });

  it("init writes commented bootstrap files that leave the prompt at its defaults, and never overwrites", async () => {
    const home = tempHome();
    const llm = await startMockLlm(() => ({ content: "hi" }));
    try {
      writeFileSync(join(home.home, "USER.md"), "Ana, already here.\n");
      const init = await runCli(["init"], { env: cleanEnv({ GUPPY_HOME: home.home }) });
      expect(init.code).toBe(0);
      for (const name of ["MEMORY.md", "IDENTITY.md", "SOUL.md", "AGENTS.md", "SYSTEM.md"]) {
        expect(init.stdout).toContain(`created  ${join(home.home, name)}\n`);
        expect(readFileSync(join(home.home, name), "utf8")).toMatch(/^<!--[\s\S]*-->\n$/);
      }
      expect(init.stdout).toContain(`kept     ${join(home.home, "USER.md")}\n`);
      expect(init.stdout).toContain(`created  ${join(home.home, "skills")}/\n`);
      expect(readFileSync(join(home.home, "USER.md"), "utf8")).toBe("Ana, already here.\n");

      const r = await runCli(["chat", "-m", "hello"], {
        env: cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home.home }),
      });
      expect(r.code).toBe(0);
      const prompt = systemPrompt(llm.requests()[0]);
      expect(prompt.startsWith("You are guppy")).toBe(true);
      expect(prompt).toContain("\n(no memory yet)\n");
      expect(prompt).not.toContain("<!--");
      expect(section(prompt, "## User (USER.md)")).toBe("Ana, already here.");
    } finally {
      await llm.stop();
      home.cleanup();
    }
  });
});
