// bench/system-prompt: what rebuilding the system prompt costs before every run.
// A home with IDENTITY/SOUL/USER/AGENTS/SYSTEM.md, three memory levels (~8 KB each), three daily
// notes and 50 skills (3 scopes). Prints the median time of loadPromptSources + buildSystemPrompt
// (the first call, which loads yaml, separately) and the prompt size. Needs a build. Never fails on timing.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createCoreTools, createSandbox } from "@guppy/core";
import { dailyNotePath, localDate } from "@guppy/core/memory";
import { buildSystemPrompt, loadPromptSources } from "@guppy/core/prompt";

const home = mkdtempSync(join(tmpdir(), "guppy-bench-prompt-"));
const put = (path, text) => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
};
const threadId = "telegram:-100123:42";
const para = (n) => "- a remembered fact about the user and their projects\n".repeat(n);
for (const f of ["IDENTITY.md", "SOUL.md", "USER.md", "AGENTS.md", "SYSTEM.md"])
  put(join(home, f), para(10));
for (const dir of ["", "telegram", "telegram/-100123"])
  put(join(home, dir, "MEMORY.md"), para(150));
const now = new Date();
for (let i = 0; i < 3; i++) {
  put(dailyNotePath(home, localDate(new Date(now.getTime() - i * 86_400_000))), para(20));
}
const scopes = ["skills", "telegram/skills", "telegram/-100123/skills"];
for (let i = 0; i < 50; i++) {
  put(
    join(home, scopes[i % 3], `skill-${i}`, "SKILL.md"),
    `---\nname: skill-${i}\ndescription: Does task number ${i} in a particular way\n---\n${para(30)}`,
  );
}
const workspaceDir = join(home, "telegram/-100123/42/scratch");
mkdirSync(workspaceDir, { recursive: true });
const tools = createCoreTools({
  workspaceDir,
  artifactsDir: () => join(home, "artifacts"),
  sandbox: createSandbox({ type: "host" }),
  toolResultMaxChars: 10_000,
  bashTimeoutSeconds: 120,
});
const build = () =>
  buildSystemPrompt({
    threadId,
    workspaceDir,
    home,
    tools,
    date: localDate(now),
    os: "linux",
    sources: loadPromptSources({ home, threadId, now }),
  });

let t0 = performance.now();
const first = build();
const firstMs = performance.now() - t0;
const times = [];
for (let i = 0; i < 200; i++) {
  t0 = performance.now();
  build();
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
console.log(`system prompt       first build ${firstMs.toFixed(1)} ms (loads yaml)`);
console.log(
  `system prompt       rebuild median ${times[100].toFixed(2)} ms, p95 ${times[190].toFixed(2)} ms over 200 runs (50 skills, 3 memory levels, 3 daily notes, 5 bootstrap files)`,
);
console.log(`system prompt       ${first.length} characters`);
rmSync(home, { recursive: true, force: true });
