#!/usr/bin/env node
// Entry point. `--version` is answered here without loading anything else, so it stays fast.
import { readFileSync, statSync } from "node:fs";

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V" || args[0] === "version")) {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`guppy ${pkg.version}\n`);
} else {
  // The bundle (scripts/bundle.mjs) starts faster; the plain tsc output is used when the bundle
  // is missing or older than it (a `tsc -b` without a re-bundle).
  const bundle = new URL("../dist/bundle/main.js", import.meta.url);
  const plain = new URL("../dist/cli/main.js", import.meta.url);
  const mtime = (url) => statSync(url, { throwIfNoEntry: false })?.mtimeMs ?? -1;
  const entry = mtime(bundle) > 0 && mtime(bundle) >= mtime(plain) ? bundle.href : plain.href;
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
