import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    alias: [
      {
        find: /^@guppy\/core\/thread-layout$/,
        replacement: fileURLToPath(
          new URL("./packages/core/src/store/thread-layout.ts", import.meta.url),
        ),
      },
      {
        find: /^@guppy\/core\/(config|context|fs|memory|prompt|runner|sandbox|skills)$/,
        replacement: fileURLToPath(new URL("./packages/core/src/$1/index.ts", import.meta.url)),
      },
      {
        find: /^@guppy\/core$/,
        replacement: fileURLToPath(new URL("./packages/core/src/index.ts", import.meta.url)),
      },
    ],
  },
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
