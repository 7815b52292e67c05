import { killProcessTreeNow } from "./process-tree.js";

/**
 * A command the sandbox runs now: its shell's pid (the leader of its process group) and the tag
 * (NAME=value) in the environment of everything it starts.
 */
interface RunningTree {
  pid: number;
  tag: string;
}

/** The commands running now, by pid. */
const running = new Map<number, RunningTree>();

/** A command began: it is killed with the others by `killRunningTrees`. */
export function trackTree(pid: number, tag: string): void {
  running.set(pid, { pid, tag });
}

/** The command's tree is gone (or left alone on purpose): it is no longer killed. */
export function untrackTree(pid: number): void {
  running.delete(pid);
}

/**
 * Kills the tree of every command running now, at once (SIGKILL): for a process that exits
 * immediately (a second SIGINT or SIGTERM), whose tool commands must not go on without it.
 * Returns how many there were.
 */
export function killRunningTrees(): number {
  const trees = [...running.values()];
  for (const tree of trees) killProcessTreeNow(tree.pid, tree.tag);
  running.clear();
  return trees.length;
}
