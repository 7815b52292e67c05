// @guppy/core/memory: where memory files and daily notes live.
export {
  dailyNotePath,
  localDate,
  type Scope,
  type ScopeDir,
  scopeDirs,
} from "./memory.js";
