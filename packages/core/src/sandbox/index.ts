// @guppy/core/sandbox: command options and results, and the process-tree bookkeeping that kills
// a stopped gateway's leftover commands (createSandbox and Sandbox are in the package root).
export type { ExecOptions, ExecResult } from "./exec.js";
export {
  killLeftoverTrees,
  killRunningTrees,
  RUNNING_TOOLS_FILE,
  recordRunningTrees,
  takeOverRunningTrees,
} from "./process-tree.js";
