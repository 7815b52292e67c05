import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadSkills, parseSkillFile } from "../../src/skills/load-skills.js";
import { tempHome } from "../helpers/temp-home.js";

const skill = (name: string, description: string, body = "Do the thing.") =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;

describe("loadSkills", () => {
  let t: ReturnType<typeof tempHome>;
  beforeEach(() => {
    t = tempHome();
  });
  afterEach(() => t.cleanup());

  it("discovers skills in the global, transport and channel scopes", () => {
    t.write("skills/weather/SKILL.md", skill("weather", "Look up the weather"));
    t.write("slack/skills/standup/SKILL.md", skill("standup", "Write the daily standup"));
    t.write("slack/C1/skills/deploy/SKILL.md", skill("deploy", "Deploy this project"));
    t.write("slack/C2/skills/other/SKILL.md", skill("other", "Another channel's skill"));
    t.write("telegram/skills/tg/SKILL.md", skill("tg", "Telegram only"));
    const { skills, warnings } = loadSkills(t.home, "slack:C1:1700000000.1");
    expect(warnings).toEqual([]);
    expect(skills.map((s) => [s.name, s.scope, s.path])).toEqual([
      ["deploy", "channel", join(t.home, "slack/C1/skills/deploy/SKILL.md")],
      ["standup", "transport", join(t.home, "slack/skills/standup/SKILL.md")],
      ["weather", "global", join(t.home, "skills/weather/SKILL.md")],
    ]);
    expect(skills[0]?.body).toBe("Do the thing.");
    expect(skills[0]?.dir).toBe(join(t.home, "slack/C1/skills/deploy"));
  });

  it("lets a narrower scope override a broader one by name", () => {
    t.write("skills/notes/SKILL.md", skill("notes", "global notes", "global body"));
    t.write("cli/skills/notes/SKILL.md", skill("notes", "transport notes", "transport body"));
    t.write("cli/local/skills/n2/SKILL.md", skill("notes", "channel notes", "channel body"));
    t.write("skills/only-global/SKILL.md", skill("only-global", "stays"));
    t.write("skills/mid/SKILL.md", skill("mid", "global mid"));
    t.write("cli/skills/mid/SKILL.md", skill("mid", "transport mid"));

    const channel = loadSkills(t.home, "cli:local:default").skills;
    expect(channel.map((s) => [s.name, s.scope, s.description, s.overrides])).toEqual([
      ["mid", "transport", "transport mid", ["global"]],
      ["notes", "channel", "channel notes", ["global", "transport"]],
      ["only-global", "global", "stays", []],
    ]);
    expect(channel[1]?.body).toBe("channel body");

    // Another channel on the same transport sees the transport version.
    const elsewhere = loadSkills(t.home, "cli:other:default").skills;
    expect(elsewhere.find((s) => s.name === "notes")?.description).toBe("transport notes");
  });

  it("says in a clean line where the frontmatter's YAML is broken, in lines of the file", () => {
    t.write("skills/flow/SKILL.md", "---\nname: [unclosed\ndescription: y\n---\n");
    t.write("skills/twice/SKILL.md", "---\nname: twice\ndescription: a\nname: again\n---\n");
    const { warnings } = loadSkills(t.home, "cli:local:default");
    const of = (dir: string) => warnings.find((w) => w.includes(join("skills", dir, "SKILL.md")));
    // yaml puts the first at the frontmatter's line 2 (the file's 3rd), the second at its 3rd.
    expect(of("flow")).toMatch(/skipped: invalid YAML in the frontmatter at line 3, column 1: \S/);
    expect(of("twice")).toMatch(/skipped: invalid YAML in the frontmatter at line 4, column 1: \S/);
    for (const warning of [of("flow"), of("twice")]) {
      expect(warning).not.toMatch(/:\s*$/);
      expect(warning?.match(/at line/g)).toHaveLength(1);
    }
  });

  it("skips a file with bad frontmatter with one warning naming the file and the problem", () => {
    const cases: Array<[string, string, RegExp]> = [
      ["no-front", "# Just markdown\n", /no YAML frontmatter/],
      ["unclosed", "---\nname: x\ndescription: y\n", /no closing ---/],
      ["bad-yaml", "---\nname: [unclosed\ndescription: y\n---\n", /invalid YAML/],
      ["no-name", "---\ndescription: y\n---\nbody", /"name" is missing/],
      ["no-desc", "---\nname: no-desc\n---\nbody", /"description" is missing/],
      [
        "empty-desc",
        "---\nname: e\ndescription: '  '\n---\n",
        /"description" must be a non-empty string/,
      ],
      ["list", "---\n- a\n- b\n---\n", /must be a YAML mapping/],
      ["spaced", "---\nname: two words\ndescription: d\n---\n", /must not contain spaces/],
    ];
    for (const [dir, text] of cases) t.write(`skills/${dir}/SKILL.md`, text);
    t.write("skills/good/SKILL.md", skill("good", "fine"));
    const { skills, warnings } = loadSkills(t.home, "cli:local:default");
    expect(skills.map((s) => s.name)).toEqual(["good"]);
    expect(warnings).toHaveLength(cases.length);
    for (const [dir, , problem] of cases) {
      const path = join(t.home, "skills", dir, "SKILL.md");
      const mine = warnings.filter((w) => w.includes(path));
      expect(mine, dir).toHaveLength(1);
      expect(mine[0], dir).toMatch(problem);
      expect(mine[0]?.includes("\n"), dir).toBe(false);
    }
  });

  it("warns about a duplicate name within one scope and keeps the first", () => {
    t.write("skills/a-first/SKILL.md", skill("dup", "first one"));
    t.write("skills/b-second/SKILL.md", skill("dup", "second one"));
    const { skills, warnings } = loadSkills(t.home, "cli:local:default");
    expect(skills.map((s) => s.description)).toEqual(["first one"]);
    expect(warnings).toEqual([
      `skill ${join(t.home, "skills/b-second/SKILL.md")} skipped: the global skills already have "dup" (${join(t.home, "skills/a-first/SKILL.md")})`,
    ]);
  });

  it("ignores folders without a SKILL.md and homes without skills", () => {
    t.write("skills/empty/readme.txt", "not a skill");
    expect(loadSkills(t.home, "cli:local:default")).toEqual({ skills: [], warnings: [] });
  });
});

describe("parseSkillFile", () => {
  it("accepts CRLF line endings, a BOM, extra keys and multi-line descriptions", () => {
    const parsed = parseSkillFile(
      "\uFEFF---\r\nname: gh\r\ndescription: >\r\n  Check GitHub\r\n  notifications\r\nversion: 2\r\n---\r\nRun check.sh\r\n",
    );
    expect(parsed).toEqual({
      ok: true,
      skill: { name: "gh", description: "Check GitHub notifications", body: "Run check.sh" },
    });
  });

  it("finds the closing fence on its own line (trailing spaces allowed), not inside a value", () => {
    const parsed = parseSkillFile(
      "--- \nname: fence\ndescription: |\n  uses ---dashes--- inline\n---  \n\n# Body\n---\nmore\n",
    );
    expect(parsed).toEqual({
      ok: true,
      skill: { name: "fence", description: "uses ---dashes--- inline", body: "# Body\n---\nmore" },
    });
    expect(parseSkillFile("---\n---\nbody")).toEqual({
      ok: false,
      problem: "the frontmatter must be a YAML mapping with name and description",
    });
  });
});
