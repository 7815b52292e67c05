// @guppy/core/state: the state seam's interfaces and the file backend's readers. Dependency-light
// (node built-ins and thread-layout only) so the HTTP worker can load it alone.

export { createFileThreadLog } from "./file-thread-log.js";
export * from "./types.js";
