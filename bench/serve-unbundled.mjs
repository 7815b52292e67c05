// Helper of bench/gateway: the guppy CLI from its tsc output (packages/guppy/dist/cli) rather
// than the bundle bin/guppy.js prefers — the same code, but importing @mariozechner/pi-ai from
// node_modules, so a module loaded with --import (faux-llm-preload.mjs) reaches the copy guppy
// uses. Args as for guppy.
const cli = await import("../packages/guppy/dist/cli/main.js");
await cli.main(process.argv.slice(2));
