#!/usr/bin/env node
// Entry point. `--version` is answered here without loading anything else, so it stays fast.
import { readFileSync, statSync } from "node:fs";

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V" || args[0] === "version")) {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`guppy ${pkg.version}\n`);
} else {
  // The bundle (scripts/bundle.mjs) starts faster; the plain tsc output works too.
  const bundle = new URL("../dist/bundle/main.js", import.meta.url);
  const entry = existsSync(bundle)
    ? bundle.href
    : new URL("../dist/cli/main.js", import.meta.url).href;
  import(entry).then(
    (cli) => cli.main(args),
    (error) => {
      if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("dist")) {
        process.stderr.write(
          "guppy: not built yet; run `npm install` (or `npm run build`) in the guppy checkout.\n",
        );
      } else {
        process.stderr.write(`guppy: ${error?.message ? error.message : String(error)}\n`);
      }
      process.exitCode = 1;
    },
  );
}
