import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { scopeDirs } from "../memory/memory.js";
import {
  ARTIFACTS_DIR,
  ATTACHMENTS_DIR,
  threadDirOf,
  WORKSPACE_DIR,
} from "../store/thread-layout.js";
import {
  createPathPolicy,
  isWithin,
  type PathDenial,
  type PathGrant,
  type PathPolicy,
} from "./path-policy.js";
import type { SandboxConfig } from "./types.js";

// What one thread's tools may see: ONE rule set, from which both the bubblewrap arguments
// (bwrap-sandbox.ts) and the file tools' PathPolicy are made, so bash and read/write/edit agree.

/** A grant of the thread's view; `create` ones are made before a sandbox binds them. */
export interface ViewGrant extends PathGrant {
  create?: "dir" | "file";
}

export interface ThreadView {
  /** What is visible; undefined: everything (the host). */
  grants?: readonly ViewGrant[];
  /** What is never visible, whatever a grant says. */
  denials: readonly PathDenial[];
}

/** guppy's own secret files in `home`, and its process: refused to the file tools in every mode. */
export function secretDenials(home: string): PathDenial[] {
  return [
    { path: join(home, "settings.json"), reason: "guppy's settings (they hold API keys)" },
    { path: join(home, "guppy.env"), reason: "guppy's environment file (it holds API keys)" },
    { path: join(home, "api-token"), reason: "the gateway's API token" },
    { path: join(home, "auth.json"), reason: "guppy's sign-ins (they hold OAuth tokens)" },
    { path: join(home, "access"), reason: "guppy's access lists (who may use it)" },
    // The file tools run in guppy's process: /proc/self/environ would be guppy's own keys.
    { path: `/proc/${process.pid}`, reason: "guppy's own process (its environment holds keys)" },
  ];
}

/** The thread's own paths: workspace, memory, daily notes, skills, attachments and artifacts. */
export function threadGrants(home: string, threadId: string): ViewGrant[] {
  const threadDir = threadDirOf(home, threadId);
  const levels = scopeDirs(home, threadId);
  const own: ViewGrant[] = [
    { path: join(threadDir, WORKSPACE_DIR), access: "rw", label: "the workspace", create: "dir" },
    ...levels.map(
      ({ dir, label }): ViewGrant => ({
        path: join(dir, "MEMORY.md"),
        access: "rw",
        label: `${label} memory`,
        create: "file",
      }),
    ),
    { path: join(home, "memory"), access: "rw", label: "the daily notes", create: "dir" },
    ...levels.map(
      ({ dir, label }): ViewGrant => ({
        path: join(dir, "skills"),
        access: "ro",
        label: `${label} skills`,
      }),
    ),
    { path: join(threadDir, ATTACHMENTS_DIR), access: "ro", label: "the attachments" },
    { path: join(threadDir, ARTIFACTS_DIR), access: "ro", label: "the saved outputs" },
  ];
  // A symlink at one of these (a tool could have made one) is neither bound nor granted.
  return own.map((grant) => ({ ...grant, noSymlink: true }));
}

/** The system folders a sandboxed command needs to run programs, read-only. */
export const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"];

/** Secrets of the system under /etc, masked inside the sandbox (and refused to the file tools). */
export function systemDenials(): PathDenial[] {
  const files = [
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/security/opasswd",
    "/etc/ssl/private",
  ];
  try {
    for (const name of readdirSync("/etc/ssh")) {
      if (/^ssh_host_.*_key$/.test(name)) files.push(`/etc/ssh/${name}`);
    }
  } catch {
    // no /etc/ssh
  }
  return files.map((path) => ({ path, reason: "a secret of the system" }));
}

/** The view of thread `threadId` of `home` under `config`. */
export function threadView(config: SandboxConfig, home: string, threadId: string): ThreadView {
  const denials = secretDenials(home);
  switch (config.type) {
    case "host":
      return { denials };
    case "docker":
      // The container sees what the owner mounted at /workspace; the file tools (in guppy's
      // process) keep to the thread's own part of it.
      return { grants: threadGrants(home, threadId), denials };
    case "bwrap": {
      const system = SYSTEM_DIRS.filter((path) => existsSync(path)).map(
        (path): ViewGrant => ({ path, access: "ro", label: "the system" }),
      );
      const mounts = config.mounts.map(
        ({ path, access }): ViewGrant => ({ path, access, label: "an extra mount" }),
      );
      return {
        grants: [...threadGrants(home, threadId), ...mounts, ...system],
        denials: [...denials, ...systemDenials()],
      };
    }
  }
}

/** The file tools' policy for the owner's tools of a thread under `config`. */
export function sandboxPathPolicy(
  config: SandboxConfig,
  home: string,
  threadId: string,
): PathPolicy {
  const view = threadView(config, home, threadId);
  return createPathPolicy({
    ...(view.grants ? { grants: view.grants } : {}),
    denials: view.denials,
    scope: config.type === "host" ? "guppy's tools" : "this thread's sandbox",
  });
}

/** Denials that exist and lie inside a granted path: they must be masked where it is bound. */
export function deniedInside(view: ThreadView): Array<PathDenial & { dir: boolean }> {
  const out: Array<PathDenial & { dir: boolean }> = [];
  for (const denial of view.denials) {
    if (!(view.grants ?? []).some((grant) => isWithin(denial.path, grant.path))) continue;
    try {
      out.push({ ...denial, dir: lstatSync(denial.path).isDirectory() });
    } catch {
      // not there: nothing to mask
    }
  }
  return out;
}
