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
  // Each page is a chunk of its own, loaded when first shown (app.ts).
  splitting: true,
  entryNames: "[name]-[hash]",
  chunkNames: "[name]-[hash]",
  assetNames: "[name]-[hash]",
  metafile: true,
  legalComments: "none",
  logLevel: "warning",
});
const entry = Object.entries(result.metafile.outputs).find(([, o]) => o.entryPoint);
const script = entry && basename(entry[0]);
const style = entry?.[1].cssBundle && basename(entry[1].cssBundle);
// The entry's CSS holds every page's rules (the pages' chunks are script only); esbuild also
// writes a CSS file per chunk, which nothing loads.
for (const file of Object.keys(result.metafile.outputs)) {
  if (file.endsWith(".css") && basename(file) !== style) await rm(file);
}
if (!script || !style) throw new Error("control UI bundle lacks its entry's script or style");
// The chat page (the first one shown) and the shared chunks are fetched beside the entry, not
// after it has run.
const preload = Object.keys(result.metafile.outputs)
  .map((f) => basename(f))
  .filter((f) => /^(chat-page|chunk)-.*\.js$/.test(f))
  .map((f) => `<link rel="modulepreload" href="/ui/${f}" />`)
  .join("\n    ");
const template = await readFile("packages/guppy/ui/index.html", "utf8");
await writeFile(
  `${outdir}/index.html`,
  template
    .replace("%SCRIPT%", `/ui/${script}`)
    .replace("%STYLE%", `/ui/${style}`)
    .replace("<!-- %PRELOAD% -->", preload),
);
