// Runs every bench/*.bench.mjs in turn (or those named on the command line) and prints their figures.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

const dir = fileURLToPath(new URL(".", import.meta.url));
const wanted = process.argv.slice(2);
const benches = readdirSync(dir)
  .filter((f) => f.endsWith(".bench.mjs"))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)))
  .sort();
let failed = 0;
for (const file of benches) {
  process.stdout.write(`\n== ${file.replace(".bench.mjs", "")} ==\n`);
  const r = spawnSync(process.execPath, [`${dir}${file}`], { stdio: "inherit" });
  if (r.status !== 0) failed++;
}
process.exitCode = failed ? 1 : 0;
