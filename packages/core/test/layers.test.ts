import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

// scripts/check-layers.mjs, which `npm run cycles` runs on packages/core/src.
const checkerUrl = new URL("../../../scripts/check-layers.mjs", import.meta.url).href;
const { checkLayers } = (await import(checkerUrl)) as {
  checkLayers: (srcDir: string) => string[];
};

describe("check-layers", () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
    root = undefined;
  });

  /** A source tree of `files` (path → text) in a temporary folder. */
  const tree = (files: Record<string, string>): string => {
    root = mkdtempSync(join(tmpdir(), "guppy-layers-"));
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return root;
  };

  it("names each import of a higher layer, type-only and re-exports included", () => {
    const src = tree({
      "store/create-store.ts": [
        'import { run } from "../runner/loop.js";',
        'import type { Bus } from "../events/bus.js";',
        'export { x } from "../fs/write.js";',
        "// an import in a comment is not one: import { y } from '../heartbeat/beat.js';",
      ].join("\n"),
      "runner/loop.ts": 'import { write } from "../fs/write.js";\nexport const run = 1;',
      "events/bus.ts": 'import { run } from "../runner/loop.js";\nexport type Bus = 1;',
      "fs/write.ts": 'import type { Bus } from "../types.js";\nexport const write = 1;',
      "types.ts": "export type Bus = 1;",
    });
    expect(checkLayers(src)).toEqual([
      "store/create-store.ts → runner/loop.js: layer state may not import layer agent",
      "store/create-store.ts → events/bus.js: layer state may not import layer runtime",
    ]);
  });

  it("refuses a folder with no layer", () => {
    const src = tree({ "widgets/widget.ts": "export const w = 1;" });
    expect(checkLayers(src)).toEqual([
      "widgets/widget.ts: widgets has no layer (scripts/check-layers.mjs)",
    ]);
  });

  it("passes on packages/core/src", () => {
    expect(checkLayers(fileURLToPath(new URL("../src", import.meta.url)))).toEqual([]);
  });
});
