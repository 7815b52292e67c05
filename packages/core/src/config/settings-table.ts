import { kebab } from "./load-config.js";
import type { SettingDefinitions } from "./settings-schema.js";

/**
 * The settings table of docs/configuration.md, one row per setting (core's schema, or with an
 * app's: withAppSettings), its columns padded to line up (as a Markdown formatter leaves them).
 * `node scripts/config-table.mjs` prints it; a test checks that the document holds exactly this.
 */
export function settingsTable(settings: SettingDefinitions): string {
  const rows = Object.entries(settings).map(([key, def]) => {
    const d = def.default;
    const shown =
      d === undefined ? "—" : Array.isArray(d) ? (d.length ? d.join(",") : "(empty)") : String(d);
    const secret = def.secret ? " (secret: masked by `guppy config`)" : "";
    // A settings.json-only setting has neither a variable nor a flag.
    const env = def.env ? `\`${def.env}\`` : "—";
    const flag = def.env ? `\`--${kebab(key)}\`` : "—";
    return [env, `\`${key}\``, flag, shown, def.description + secret];
  });
  const header = ["Environment", "settings.json", "Flag", "Default", "Meaning"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
