// @guppy/core/runner: text helpers for what a run produces (createThreadRunner and
// createAgentRunner are in the package root).
export { oneLine, trimTrailingNewlines } from "./message-text.js";
