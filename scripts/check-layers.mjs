// Core's layers (docs/architecture.md): a file of packages/core/src may import its own folder or
// a folder of the same or a lower layer, never a higher one. Type-only imports count too.
//   node scripts/check-layers.mjs   prints one line per violation and fails; `npm run cycles` runs it
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Lowest first; a root file (`types.ts`) is placed like a folder. */
export const layers = [
  { name: "base", units: ["types.ts", "config", "fs", "logging", "time"] },
  { name: "state", units: ["store", "state"] },
  { name: "services", units: ["model", "sandbox", "web", "memory", "skills", "search", "usage"] },
  { name: "agent", units: ["tools", "mcp", "context", "prompt", "runner", "messaging"] },
  {
    name: "runtime",
    units: ["orchestrator", "inbox", "events", "heartbeat", "subagents", "settings.ts", "index.ts"],
  },
];

const specifier = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']*)["']/g;

/** The violations under `srcDir`, one line each: `file → imported file: layer X may not import layer Y`. */
export function checkLayers(srcDir, layerList = layers) {
  const layerOf = new Map();
  layerList.forEach((layer, rank) => {
    for (const unit of layer.units) layerOf.set(unit, { ...layer, rank });
  });
  const problems = [];
  for (const file of sourceFiles(srcDir)) {
    const from = posix(relative(srcDir, file));
    const fromLayer = layerOf.get(from.split("/")[0]);
    if (!fromLayer) {
      problems.push(`${from}: ${from.split("/")[0]} has no layer (scripts/check-layers.mjs)`);
      continue;
    }
    const text = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm, "");
    for (const [, spec] of text.matchAll(specifier)) {
      const to = posix(relative(srcDir, resolve(dirname(file), spec)));
      if (to.startsWith("..")) continue;
      const unit = to.includes("/") ? to.split("/")[0] : to.replace(/\.js$/, ".ts");
      const toLayer = layerOf.get(unit);
      if (toLayer && toLayer.rank > fromLayer.rank) {
        problems.push(
          `${from} → ${to}: layer ${fromLayer.name} may not import layer ${toLayer.name}`,
        );
      }
    }
  }
  return problems;
}

const posix = (path) => path.split(sep).join("/");

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return sourceFiles(path);
      return entry.name.endsWith(".ts") ? [path] : [];
    })
    .sort();
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const src = fileURLToPath(new URL("../packages/core/src", import.meta.url));
  const problems = checkLayers(src);
  for (const line of problems) console.error(line);
  if (problems.length > 0) {
    console.error(`${problems.length} import(s) break core's layers (docs/architecture.md).`);
    process.exit(1);
  }
  console.log("Core's layers hold.");
}
