import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { settingsSchema } from "../../src/settings.js";

// The whole settings table, core's settings and the app's, is checked by guppy's docs-in-sync test.
describe("docs/configuration.md", () => {
  const doc = readFileSync(new URL("../../../../docs/configuration.md", import.meta.url), "utf8");
  it.each(Object.entries(settingsSchema))(
    "documents %s with its environment variable (if it has one)",
    (key, def) => {
      if (def.env) expect(doc).toContain(`\`${def.env}\``);
      expect(doc).toContain(`\`${key}\``);
    },
  );
});
