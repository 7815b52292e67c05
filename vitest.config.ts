import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/** @guppy/core's entry points as its package.json exports them (built files under dist/). */
const coreExports = (
  JSON.parse(readFileSync(new URL("./packages/core/package.json", import.meta.url), "utf8")) as {
    exports: Record<string, { default: string }>;
  }
).exports;

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
    include: ["packages/*/test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
