import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config-error.js";
import { probeHostContainment } from "../../src/sandbox/host-sandbox.js";
import {
  bwrapProblem,
  describeSandbox,
  resolveSandbox,
} from "../../src/sandbox/resolve-sandbox.js";
import { loadConfig } from "../../src/settings.js";
import { standIn } from "./docker-stand-in.js";

describe("resolveSandbox", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "guppy-resolve-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const settings = (sandbox: string, extra: Record<string, unknown> = {}) => ({
    sandbox,
    sandboxNetwork: "on" as const,
    sources: {},
    settingsPath: join(root, "settings.json"),
    ...extra,
  });
  /** A PATH with `node` but no bwrap or docker. */
  const emptyPath = () => {
    const dir = join(root, "empty-bin");
    mkdirSync(dir, { recursive: true });
    return { ...process.env, PATH: dir };
  };

  it("stops with one line naming the fix when GUPPY_SANDBOX=bwrap has no bwrap on PATH", () => {
    const run = () => resolveSandbox(settings("bwrap"), { env: emptyPath() });
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(
      /^GUPPY_SANDBOX is bwrap but bwrap is not on PATH: install bubblewrap \(Debian\/Ubuntu: apt-get install bubblewrap\), or set GUPPY_SANDBOX=host\.$/,
    );
  });

  it("falls back to the host under auto without bwrap, and says so and how to get it", () => {
    const resolved = resolveSandbox(settings("auto"), { env: emptyPath() });
    expect(resolved.sandbox).toEqual({ type: "host" });
    expect(resolved.notice).toMatch(
      /Tools run on the host, unconfined as you: bwrap is not on PATH/,
    );
    expect(resolved.notice).toContain("apt-get install bubblewrap");
    expect(
      describeSandbox(resolved.sandbox, { kind: "pid-namespace", unshare: "u", proc: true }),
    ).toBe("host — tools run unconfined as you; each command's process tree is contained");
  });

  it("says whether host commands' process trees are contained, and why not", () => {
    const none = probeHostContainment(emptyPath());
    expect(none).toEqual({ kind: "none", why: "util-linux unshare is not on PATH" });
    expect(describeSandbox({ type: "host" }, none)).toBe(
      "host — tools run unconfined as you; commands' process trees are not contained (util-linux unshare is not on PATH)",
    );
    // As root (CI, this machine) unshare makes the namespace; elsewhere the probe says why not.
    const here = probeHostContainment();
    if (process.getuid?.() === 0) expect(here).toMatchObject({ kind: "pid-namespace", proc: true });
    else expect(here).toMatchObject({ kind: "none" });
  });

  it.runIf(bwrapProblem() === undefined)("uses bubblewrap under auto where it works", () => {
    const mount = join(root, "data");
    mkdirSync(mount);
    const resolved = resolveSandbox(
      settings("auto", { sandboxMounts: [`${mount}:rw`], sandboxNetwork: "off" }),
    );
    expect(resolved).toEqual({
      sandbox: { type: "bwrap", mounts: [{ path: mount, access: "rw" }], network: false },
    });
    expect(describeSandbox(resolved.sandbox)).toBe("bubblewrap (network off, 1 extra mount)");
  });

  it("names an extra mount that does not exist", () => {
    const missing = join(root, "nowhere");
    expect(() => resolveSandbox(settings("host", { sandboxMounts: [missing] }))).toThrow(
      `GUPPY_SANDBOX_MOUNTS names ${missing}, which does not exist`,
    );
  });

  it("checks a docker container with docker exec <c> true, and stops when it cannot be reached", () => {
    const fx = standIn();
    try {
      expect(resolveSandbox(settings("docker:guppy-box"), { env: fx.env })).toEqual({
        sandbox: { type: "docker", container: "guppy-box" },
      });
      expect(fx.calls()).toEqual([["exec", "guppy-box", "true"]]);
      expect(() => resolveSandbox(settings("docker:missing"), { env: fx.env })).toThrow(
        /^GUPPY_SANDBOX is docker:missing but docker exec missing true failed \(Error response from daemon: No such container: missing\): start the container/,
      );
      expect(() => resolveSandbox(settings("docker:guppy-box"), { env: emptyPath() })).toThrow(
        /the docker command is not on PATH/,
      );
    } finally {
      rmSync(fx.root, { recursive: true, force: true });
    }
  });

  it("refuses a bad GUPPY_SANDBOX value, naming the setting and the choices", () => {
    const load = (value: string) => loadConfig({ env: { GUPPY_SANDBOX: value, GUPPY_HOME: root } });
    expect(() => load("bubblewrap")).toThrow(ConfigError);
    expect(() => load("bubblewrap")).toThrow(
      'Invalid environment variable GUPPY_SANDBOX is "bubblewrap": expected one of auto, bwrap, docker:<container>, host.',
    );
    expect(load("docker:my-box").sandbox).toBe("docker:my-box");
    expect(() => loadConfig({ env: { GUPPY_SANDBOX_NETWORK: "maybe", GUPPY_HOME: root } })).toThrow(
      /GUPPY_SANDBOX_NETWORK/,
    );
    expect(() =>
      loadConfig({ env: { GUPPY_SANDBOX_MOUNTS: "relative/path", GUPPY_HOME: root } }),
    ).toThrow(/GUPPY_SANDBOX_MOUNTS .*absolute paths/);
    expect(loadConfig({ env: { GUPPY_HOME: root } })).toMatchObject({
      sandbox: "auto",
      sandboxNetwork: "on",
    });
  });
});
