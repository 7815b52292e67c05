import { readFileSync } from "node:fs";

/**
 * guppy's version from its package.json, two levels above this module whether it runs from
 * src/cli/, dist/cli/ or the bundle in dist/bundle/. (bin/guppy.js answers a lone `--version`
 * itself, without loading the CLI.)
 */
export function guppyVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}
