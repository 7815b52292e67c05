// Bundles the control UI (packages/guppy/ui/src, Preact + htm + uPlot) for the browser into
// packages/guppy/dist/ui/: main-<hash>.js, main-<hash>.css and the index.html naming them.
// `guppy serve` serves that folder at / (channels/http/control-ui.ts); hashed names let the
// assets be cached for good while index.html is asked for anew each time.
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename } from "node:path";
import { build } from "esbuild";

const outdir = "packages/guppy/dist/ui";
await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });
const result = await build({
  entryPoints: { main: "packages/guppy/ui/src/main.ts" },
  bundle: true,
  platform: "browser",
  format: "esm",
  target: ["chrome110", "firefox110", "safari16"],
  minify: true,
  outdir,
  entryNames: "[name]-[hash]",
  assetNames: "[name]-[hash]",
  metafile: true,
  legalComments: "none",
  logLevel: "warning",
});
const outputs = Object.keys(result.metafile.outputs).map((f) => basename(f));
const script = outputs.find((f) => f.endsWith(".js"));
const style = outputs.find((f) => f.endsWith(".css"));
if (!script || !style) throw new Error(`control UI bundle lacks a script or a style: ${outputs}`);
const template = await readFile("packages/guppy/ui/index.html", "utf8");
await writeFile(
  `${outdir}/index.html`,
  template.replace("%SCRIPT%", `/ui/${script}`).replace("%STYLE%", `/ui/${style}`),
);
