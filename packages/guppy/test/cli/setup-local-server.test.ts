import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "jsonc-parser";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanEnv, guppyBin, tempHome } from "../helpers/run-cli.js";

/**
 * A fake Ollama (aimock on 127.0.0.1:11434) must not be seen by other tests running at the same
 * time, which expect no local server: each run gets a network namespace of its own
 * (`unshare -n`, root only; skipped elsewhere).
 */
const canUnshare =
  spawnSync("unshare", ["-n", "ip", "link", "set", "lo", "up"], { stdio: "ignore" }).status === 0;

const fakeOllama = `
import { LLMock } from ${JSON.stringify(import.meta.resolve("@copilotkit/aimock"))};
const mock = new LLMock({ port: 11434, host: "127.0.0.1" });
mock.on({ predicate: () => true }, () => ({ content: "hello from the local model" }));
await mock.start();
setTimeout(() => mock.stop(), 120000);
`;

/** Runs `script` (sh) in a network namespace of its own with the fake Ollama up; its output. */
function withLocalOllama(
  dir: string,
  script: string,
): Promise<{ code: number | null; out: string }> {
  const fake = join(dir, "fake-ollama.mjs");
  writeFileSync(fake, fakeOllama);
  const sh = `ip link set lo up
node ${JSON.stringify(fake)} &
until curl -sf http://127.0.0.1:11434/v1/models >/dev/null; do sleep 0.1; done
${script}
code=$?
kill $! 2>/dev/null
exit $code`;
  return new Promise((resolve, reject) => {
    const child = spawn("unshare", ["-n", "sh", "-c", sh], {
      env: cleanEnv({ GUPPY_SANDBOX: "host", GUPPY: `${process.execPath} ${guppyBin}` }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      out += d;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`timed out:\n${out}`));
    }, 80_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe.skipIf(!canUnshare)(
  "a local Ollama (faked, in a network namespace)",
  { timeout: 100_000 },
  () => {
    let home: string;
    let cleanup: () => void;
    beforeEach(() => {
      ({ home, cleanup } = tempHome());
    });
    afterEach(() => cleanup());

    it("guppy chat with no model uses it at once, and says so above its banner", async () => {
      const r = await withLocalOllama(
        home,
        `printf 'hi\\n' | $GUPPY chat --home ${JSON.stringify(home)}`,
      );
      expect(r.out).toContain("using the local Ollama at http://127.0.0.1:11434/v1 (model gpt-4)");
      expect(r.out).toContain("hello from the local model");
      expect(r.code).toBe(0);
    });

    it("guppy setup --provider ollama picks one of its models and writes it with the server's URL", async () => {
      const r = await withLocalOllama(
        home,
        `$GUPPY setup --home ${JSON.stringify(home)} --non-interactive --provider ollama --model gpt-4o`,
      );
      expect(r.out).toContain("✓ ollama/gpt-4o answered");
      expect(r.code).toBe(0);
      const settings = parse(readFileSync(join(home, "settings.json"), "utf8"), [], {
        allowTrailingComma: true,
      });
      expect(settings).toMatchObject({
        model: "ollama/gpt-4o",
        baseUrl: "http://127.0.0.1:11434/v1",
        api: "openai-completions",
      });
    });

    it("refuses a model the server does not list, with the closest it does", async () => {
      const r = await withLocalOllama(
        home,
        `$GUPPY setup --home ${JSON.stringify(home)} --non-interactive --provider ollama --model gpt-4oo`,
      );
      expect(r.out).toContain(`"gpt-4oo" is not in Ollama's models (did you mean "gpt-4o"?)`);
      expect(r.code).toBe(2);
    });
  },
);
