// Prints the settings table of docs/configuration.md from the settings schema (run after a build):
//   node scripts/config-table.mjs
import { kebab, settingsSchema } from "../packages/core/dist/index.js";

const rows = Object.entries(settingsSchema).map(([key, def]) => {
  const d = def.default;
  const shown =
    d === undefined ? "—" : Array.isArray(d) ? (d.length ? d.join(",") : "(empty)") : String(d);
  return `| \`${def.env}\` | \`${key}\` | \`--${kebab(key)}\` | ${shown} | ${def.description}${def.secret ? " (secret: masked by `guppy config`)" : ""} |`;
});
console.log("| Environment | settings.json | Flag | Default | Meaning |");
console.log("| --- | --- | --- | --- | --- |");
console.log(rows.join("\n"));
