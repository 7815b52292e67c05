// @guppy/core/sandbox: the start-up choice of sandbox, command options and results, the view a
// thread's tools get, and the process-tree bookkeeping that kills a stopped gateway's leftover
// commands (createSandbox and Sandbox are in the package root).
export type { ExecOptions, ExecResult } from "./exec.js";
export {
  killLeftoverTrees,
  killRunningTrees,
  RUNNING_TOOLS_FILE,
  recordRunningTrees,
  takeOverRunningTrees,
} from "./process-tree.js";
export { describeSandbox, type ResolvedSandbox, resolveSandbox } from "./resolve-sandbox.js";
export type { SandboxConfig, SandboxMount } from "./sandbox.js";
export { sandboxPathPolicy, secretDenials, type ThreadView, threadView } from "./thread-view.js";
