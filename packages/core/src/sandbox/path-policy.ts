import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";

// What the file tools may touch. They run in guppy's own process, outside any sandbox, so they
// apply the sandbox's rule set themselves — on the real path, after symlinks: a link made inside
// the workspace can point anywhere on the host.

/** A folder (with everything under it) or a single file a thread's tools may reach. */
export interface PathGrant {
  /** Host path. */
  path: string;
  access: "ro" | "rw";
  /** How an error names it, e.g. "the workspace" (default: the path). */
  label?: string;
  /**
   * Granted only while the path itself is no symlink (guppy's own places in its home, where a
   * tool could have put one: a MEMORY.md linked to guppy.env must not grant guppy.env).
   */
  noSymlink?: boolean;
}

/** A path the file tools refuse whatever the grants say (guppy's own secret files). */
export interface PathDenial {
  path: string;
  /** Why, as an error says it: e.g. "guppy's settings (they hold API keys)". */
  reason: string;
}

export type PathMode = "read" | "write";

export interface PathPolicy {
  /**
   * The real path (symlinks resolved) of `path` when a tool may `mode` it; otherwise throws a
   * one-line error naming the path and what is allowed.
   */
  check(path: string, mode: PathMode, tool: string): string;
  readonly grants: readonly PathGrant[];
}

/**
 * A policy of `grants` (none: everything is allowed but the denials) and `denials` (they win).
 * `scope` names the rule set in errors ("this thread's sandbox", "a guest's tools").
 */
export function createPathPolicy(options: {
  grants?: readonly PathGrant[];
  denials?: readonly PathDenial[];
  scope: string;
}): PathPolicy {
  const grants = options.grants;
  const denials = options.denials ?? [];
  return {
    grants: grants ?? [],
    check(path, mode, tool) {
      const real = realPath(path);
      for (const denial of denials) {
        if (isWithin(real, realPath(denial.path))) {
          throw new Error(
            `${tool}: ${describe(path, real)} is refused: it is ${denial.reason}, which the tools may not touch.`,
          );
        }
      }
      if (!grants) return real;
      let readOnly: PathGrant | undefined;
      for (const grant of grants) {
        if (grant.noSymlink && isSymlink(grant.path)) continue;
        if (!isWithin(real, realPath(grant.path))) continue;
        if (mode === "read" || grant.access === "rw") return real;
        readOnly = grant;
      }
      if (readOnly) {
        throw new Error(
          `${tool}: ${describe(path, real)} is read-only for ${options.scope} (${readOnly.label ?? readOnly.path}); writable: ${list(grants, "rw")}.`,
        );
      }
      throw new Error(
        `${tool}: ${describe(path, real)} is outside what ${options.scope} can see; allowed: ${list(grants)}.`,
      );
    },
  };
}

function describe(path: string, real: string): string {
  return path === real ? path : `${path} (really ${real})`;
}

function list(grants: readonly PathGrant[], only?: "rw"): string {
  const shown = grants.filter((g) => !only || g.access === only);
  if (shown.length === 0) return "nothing";
  return shown
    .map((g) => `${g.label ? `${g.label} ${g.path}` : g.path}${only ? "" : ` (${g.access})`}`)
    .join(", ");
}

/** Whether `path` itself is a symlink. */
export function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** True when `path` is `root` or under it. */
export function isWithin(path: string, root: string): boolean {
  if (path === root || root === sep) return true;
  return path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * `path` with every symlink resolved; for a path that does not exist yet (a file about to be
 * written), its deepest existing ancestor resolved and the rest appended. A dangling link is
 * followed to where it points: writing through it would create its target.
 */
export function realPath(path: string, depth = 0): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    if (parent === path) return path;
    const realParent = realPath(parent, depth);
    const here = join(realParent, basename(path));
    let target: string | undefined;
    try {
      if (lstatSync(here).isSymbolicLink()) target = readlinkSync(here);
    } catch {
      // nothing there: a file about to be created
    }
    if (target === undefined || depth >= 40) return here;
    return realPath(resolve(realParent, target), depth + 1);
  }
}
