import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { settingsTable, wireApis } from "@guppy/core/config";
import { describe, expect, it } from "vitest";
import { createAccessStore } from "../../src/access/access-store.js";
import { allSettings } from "../../src/channels/registry.js";
import { helpText } from "../../src/cli/help-text.js";

const read = (path: string) =>
  readFileSync(new URL(`../../../../${path}`, import.meta.url), "utf8");

describe("README, docs and --help", () => {
  const readme = read("README.md");

  it("README lists every command --help lists", () => {
    const commands = [...helpText.matchAll(/^ {2}(guppy [a-z]+(?: [a-z]+)?)/gm)].map((m) => m[1]!);
    expect(commands).toContain("guppy pairing approve");
    for (const command of new Set(commands)) expect(readme).toContain(command);
  });

  it("README's data layout has the access state's directory", () => {
    const dir = basename(createAccessStore("/guppy-home").dir);
    const layout = readme.slice(readme.indexOf("## Where your data lives"));
    expect(layout).toMatch(new RegExp(`── ${dir}/ `));
  });

  it("docs/configuration.md holds the settings table of core's and guppy's settings (after a build: node scripts/config-table.mjs --write)", () => {
    const doc = read("docs/configuration.md");
    const block = /<!-- settings-table:[^\n]*-->\n([\s\S]*?)\n<!-- \/settings-table -->/.exec(doc);
    expect(block, "the <!-- settings-table --> markers").not.toBeNull();
    expect(block?.[1]).toBe(settingsTable(allSettings));
  });

  it("--help and docs/configuration.md name every protocol GUPPY_API accepts", () => {
    const configuration = read("docs/configuration.md");
    for (const api of wireApis) {
      expect(helpText).toContain(api);
      expect(configuration).toContain(`\`${api}\``);
    }
  });
});
