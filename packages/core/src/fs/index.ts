// @guppy/core/fs: the durable-file toolkit's parts an app uses (JSONL reading, atomic writes,
// pid locks).

export {
  type ConnectionBudget,
  connectionBudget,
  isDescriptorShortage,
  openFilesLimit,
  readProcessLimits,
} from "./descriptor-budget.js";
export { readJsonl } from "./jsonl.js";
export { lockByPid, lockHolder, pidAlive } from "./pid-lock.js";
export { makeFilesPrivate, userUmask } from "./private-files.js";
export { writeFileAtomic } from "./write.js";
