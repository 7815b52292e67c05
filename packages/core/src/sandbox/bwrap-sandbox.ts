import { closeSync, lstatSync, mkdirSync, openSync, readlinkSync } from "node:fs";
import { dirname, sep } from "node:path";
import type { ExecOptions, ExecResult } from "./exec.js";
import { execTracked, shell, toolEnv } from "./host-sandbox.js";
import { deniedInside, type ThreadView } from "./thread-view.js";

// Commands under bubblewrap: a new mount namespace that holds only the thread's view (see
// thread-view.ts), a private /tmp and an empty $HOME, in a PID namespace of their own — its
// first process dies with bwrap (--die-with-parent), and every process in it dies with that
// one, so a timed-out command leaves nothing behind, not even a `setsid` grandchild.

export interface BwrapOptions {
  view: ThreadView;
  network: boolean;
  modelProvider?: string;
  secretEnv?: readonly string[];
}

/** Runs `command` under bwrap in `options.cwd` (a path the view shows, as on the host). */
export function execInBwrap(
  command: string,
  options: ExecOptions,
  bwrap: BwrapOptions,
): Promise<ExecResult> {
  createGranted(bwrap.view);
  const env = toolEnv(options.env ?? process.env, bwrap.modelProvider, bwrap.secretEnv);
  const args = [
    ...bwrapArgs(bwrap.view, { network: bwrap.network, home: env.HOME }),
    "--chdir",
    options.cwd,
    shell,
    "-c",
    command,
  ];
  return execTracked(options, () => ({ file: "bwrap", args, env }));
}

/**
 * The bwrap arguments for `view`: the system read-only, /proc, /dev, a private /tmp, an empty
 * tmpfs at `home` ($HOME), then every grant bound at its own path (parents before children, so a
 * child is bound on top), then the denials inside them masked, and the namespaces.
 */
export function bwrapArgs(
  view: ThreadView,
  options: { network: boolean; home?: string },
): string[] {
  type Mount = { path: string; args: string[] };
  const mounts: Mount[] = [
    { path: "/proc", args: ["--proc", "/proc"] },
    { path: "/dev", args: ["--dev", "/dev"] },
    { path: "/tmp", args: ["--tmpfs", "/tmp"] },
  ];
  const home = options.home;
  if (home && home !== sep && home.startsWith(sep)) {
    mounts.push({ path: home, args: ["--tmpfs", home] });
  }
  for (const grant of view.grants ?? []) {
    const link = symlinkTarget(grant.path);
    // guppy's own places are bound only as what they are: a MEMORY.md made a symlink to
    // guppy.env would otherwise bind guppy.env into the sandbox.
    if (link !== undefined && grant.noSymlink) continue;
    // A top-level link such as /bin → usr/bin stays a link, to the folder bound beside it.
    if (link !== undefined && dirname(grant.path) === sep) {
      mounts.push({ path: grant.path, args: ["--symlink", link, grant.path] });
      continue;
    }
    const flag = grant.access === "rw" ? "--bind-try" : "--ro-bind-try";
    mounts.push({ path: grant.path, args: [flag, grant.path, grant.path] });
  }
  // A parent before its children; among equals, the order given (a later one on top).
  const ordered = mounts
    .map((mount, index) => ({ ...mount, index }))
    .sort((a, b) => depth(a.path) - depth(b.path) || a.index - b.index);
  const args = ordered.flatMap((mount) => mount.args);
  for (const denial of deniedInside(view)) {
    args.push(
      ...(denial.dir
        ? ["--tmpfs", denial.path, "--remount-ro", denial.path]
        : ["--ro-bind", "/dev/null", denial.path]),
    );
  }
  args.push("--unshare-pid", "--die-with-parent", "--new-session", "--cap-drop", "ALL");
  if (!options.network) args.push("--unshare-net");
  return args;
}

function depth(path: string): number {
  return path.split(sep).filter(Boolean).length;
}

/** Something (a dangling link too: never written through) is at `path`. */
function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function symlinkTarget(path: string): string | undefined {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes the grants that must exist to be bound (the workspace, the daily-notes folder, the memory
 * files): a missing one would otherwise be a folder or file in the sandbox's own tmpfs, and what
 * a command wrote there would be lost.
 */
function createGranted(view: ThreadView): void {
  for (const grant of view.grants ?? []) {
    if (!grant.create || present(grant.path)) continue;
    try {
      if (grant.create === "dir") mkdirSync(grant.path, { recursive: true });
      else {
        mkdirSync(dirname(grant.path), { recursive: true });
        closeSync(openSync(grant.path, "a"));
      }
    } catch {
      // Left unbound (--bind-try): the command says what it cannot reach.
    }
  }
}
