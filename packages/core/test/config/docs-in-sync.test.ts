import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { settingsSchema } from "../../src/config/settings-schema.js";
import { settingsTable } from "../../src/config/settings-table.js";

describe("docs/configuration.md", () => {
  const doc = readFileSync(new URL("../../../../docs/configuration.md", import.meta.url), "utf8");
  it.each(Object.entries(settingsSchema))(
    "documents %s with its environment variable",
    (key, def) => {
      expect(doc).toContain(`\`${def.env}\``);
      expect(doc).toContain(`\`${key}\``);
    },
  );

  it("holds the settings table the schema gives (after a build: node scripts/config-table.mjs --write)", () => {
    const block = /<!-- settings-table:[^\n]*-->\n([\s\S]*?)\n<!-- \/settings-table -->/.exec(doc);
    expect(block, "the <!-- settings-table --> markers").not.toBeNull();
    expect(block?.[1]).toBe(settingsTable());
  });
});
