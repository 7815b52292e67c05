// @guppy/core/fs: the durable-file toolkit's parts an app uses (JSONL reading, atomic writes,
// pid locks).
export { readJsonl } from "./jsonl.js";
export { lockByPid, lockHolder, pidAlive } from "./pid-lock.js";
export { writeFileAtomic } from "./write.js";
