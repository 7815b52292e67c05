import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/** @guppy/core's entry points as its package.json exports them (built files under dist/). */
const coreExports = (
  JSON.parse(readFileSync(new URL("./packages/core/package.json", import.meta.url), "utf8")) as {
    exports: Record<string, { default: string }>;
  }
).exports;

const root = fileURLToPath(new URL(".", import.meta.url));

/** Every test file under packages/<name>/test, relative to the repository. */
function testFiles(): string[] {
  const out: string[] = [];
  for (const pkg of readdirSync(join(root, "packages"))) {
    const walk = (dir: string) => {
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith(".test.ts")) out.push(relative(root, path));
      }
    };
    walk(join(root, "packages", pkg, "test"));
  }
  return out.sort();
}

/**
 * Which project a test file belongs to, read from the file itself so a new test lands in the
 * right one without a list to keep: `e2e` drives a browser, bubblewrap or a pty; `integration`
 * starts a `guppy` process (the CLI, `guppy serve`) or a peer server; `unit` is everything else,
 * in-process.
 */
function projectOf(file: string): "unit" | "integration" | "e2e" {
  const text = readFileSync(join(root, file), "utf8");
  if (/guppy\/test\/(ui|sandbox)\//.test(file) || /run-pty|ui-harness/.test(text)) return "e2e";
  if (/serve-harness|run-cli|guppyBin|telegram-test-api|startMockLlm|aimock/.test(text)) {
    return "integration";
  }
  return "unit";
}

const byProject = { unit: [] as string[], integration: [] as string[], e2e: [] as string[] };
for (const file of testFiles()) byProject[projectOf(file)].push(file);

export default defineConfig({
  resolve: {
    // Each entry point resolves to its TypeScript source: tests run on src/, never a stale build.
    alias: Object.entries(coreExports).map(([subpath, target]) => ({
      find: new RegExp(`^@guppy/core${subpath.slice(1).replaceAll("/", "\\/")}$`),
      replacement: fileURLToPath(
        new URL(
          `./packages/core/${target.default.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts")}`,
          import.meta.url,
        ),
      ),
    })),
  },
  test: {
    // Generous: with five files at a time on two cores a test that spawns guppy can take several
    // times what it takes alone. A test that hangs still fails, a minute later.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most integration tests wait on child processes, sockets and timers, not the CPU: with three
    // files at a time two cores were half idle (vitest 852 s), with five the suite took 485 s.
    // GUPPY_TEST_WORKERS overrides it (1: one file at a time).
    maxWorkers: Number(process.env.GUPPY_TEST_WORKERS ?? 5),
    projects: (["unit", "integration", "e2e"] as const).map((name) => ({
      extends: true,
      test: { name, include: byProject[name] },
    })),
  },
});
