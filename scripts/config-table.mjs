// The settings table of docs/configuration.md, from core's settings schema and guppy's settings
// (access control's and each channel's descriptor's; run after a build):
//   node scripts/config-table.mjs           prints it
//   node scripts/config-table.mjs --write   puts it between the <!-- settings-table --> markers
// packages/guppy/test/cli/docs-in-sync.test.ts fails while the document holds another table.
import { readFileSync, writeFileSync } from "node:fs";
import { settingsTable } from "@guppy/core/config";
import { allSettings } from "../packages/guppy/dist/channels/registry.js";

const table = settingsTable(allSettings);
if (process.argv.includes("--write")) {
  const path = new URL("../docs/configuration.md", import.meta.url);
  const doc = readFileSync(path, "utf8");
  const block = /(<!-- settings-table:[^\n]*-->\n)[\s\S]*?(<!-- \/settings-table -->)/;
  if (!block.test(doc)) throw new Error("docs/configuration.md has no settings-table markers");
  writeFileSync(
    path,
    doc.replace(block, (_, open, close) => `${open}${table}\n${close}`),
  );
} else {
  console.log(table);
}
