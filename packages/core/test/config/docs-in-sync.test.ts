import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { settingsSchema } from "../../src/config/settings-schema.js";

describe("docs/configuration.md", () => {
  const doc = readFileSync(new URL("../../../../docs/configuration.md", import.meta.url), "utf8");
  it.each(Object.entries(settingsSchema))(
    "documents %s with its environment variable",
    (key, def) => {
      expect(doc).toContain(`\`${def.env}\``);
      expect(doc).toContain(`\`${key}\``);
    },
  );
});
