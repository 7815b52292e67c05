// Bundles the built CLI (packages/guppy/dist/cli/main.js) and the worker threads (the HTTP API's
// dist/channels/http/http-worker.js, read_url's core/dist/web/html-worker.js) into
// packages/guppy/dist/bundle/, then the control UI (scripts/bundle-ui.mjs).
// Why: typebox alone is ~700 ESM files; resolving them costs ~300 ms at every start. Bundling
// guppy, @guppy/core, pi-ai, pi-agent-core and typebox into a few chunks halves the time to the
// first LLM request. Everything else stays an ordinary node_modules import; dynamic imports stay
// lazy (code splitting), so provider SDKs and rarely used commands load only when needed.
import { readFile, rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const outdir = "packages/guppy/dist/bundle";
const inline = [
  "@guppy/core",
  "@mariozechner/pi-ai",
  "@mariozechner/pi-agent-core",
  "typebox",
  "hono",
  "@hono/node-server",
  "jsonc-parser",
];
/** jsonc-parser's "main" is a UMD build; its ESM build bundles (and tree-shakes) cleanly. */
const jsoncParserEsm = fileURLToPath(
  new URL("../node_modules/jsonc-parser/lib/esm/main.js", import.meta.url),
);

await rm(outdir, { recursive: true, force: true });
await build({
  entryPoints: {
    main: "packages/guppy/dist/cli/main.js",
    // The HTTP API's worker thread: http-channel.js starts "./http-worker.js" beside itself.
    "http-worker": "packages/guppy/dist/channels/http/http-worker.js",
    // read_url's HTML conversion: html-worker-client.js starts "./html-worker.js" beside itself.
    "html-worker": "packages/core/dist/web/html-worker.js",
  },
  bundle: true,
  platform: "node",
  format: "esm",
  splitting: true,
  target: "node20",
  outdir,
  logLevel: "warning",
  banner: {
    js: "import { createRequire as __guppyCreateRequire } from 'node:module'; const require = __guppyCreateRequire(import.meta.url);",
  },
  plugins: [
    {
      name: "guppy-externals",
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) => {
          if (args.path.startsWith("node:")) return { external: true };
          if (args.path === "jsonc-parser") return { path: jsoncParserEsm };
          if (inline.some((p) => args.path === p || args.path.startsWith(`${p}/`)))
            return undefined;
          return { external: true };
        });
        // pi-ai loads its Bedrock provider through a variable import of a relative path,
        // which a bundle cannot follow; make it a plain import so it becomes a lazy chunk.
        b.onLoad(
          { filter: /pi-ai[\\/]dist[\\/]providers[\\/]register-builtins\.js$/ },
          async (args) => {
            const source = await readFile(args.path, "utf8");
            return {
              contents: source.replace(/importNodeOnlyProvider\((["'][^"']+["'])\)/g, "import($1)"),
              loader: "js",
            };
          },
        );
      },
    },
  ],
});

await import("./bundle-ui.mjs");
