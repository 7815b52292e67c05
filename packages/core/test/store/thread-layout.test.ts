import { readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import {
  canonicalThreadId,
  encodeSegment,
  memberOf,
  memberThreadId,
  parseThreadId,
  subagentOf,
  threadDirOf,
  threadIdOfDir,
} from "../../src/store/thread-layout.js";

describe("thread ids", () => {
  it("refuse parts that would land on guppy's own files, however the id is spelt", () => {
    for (const id of [
      "access:telegram:approved.json",
      "access:telegram",
      "logs:x:y",
      "memory:202611:x",
      "skills:a:b",
      "api-token:a:b",
      "events:a:b",
      "http:skills:t",
      "http:MEMORY.md:t",
      "http:memory.md:t",
      "http:c:MEMORY.md",
      "http:c:scratch",
      "http:c:context.jsonl",
    ]) {
      expect(() => canonicalThreadId(id), id).toThrow(/name guppy uses/);
      expect(() => parseThreadId(id), id).toThrow(/name guppy uses/);
    }
    // Free as before otherwise.
    expect(canonicalThreadId("accessible:a:b")).toBe("accessible:a:b");
    expect(canonicalThreadId("http:my-skills:MEMORY")).toBe("http:my-skills:MEMORY");
  });

  it("spells every id of one thread one way, the defaults filled in", () => {
    expect(canonicalThreadId("telegram:-1001")).toBe("telegram:-1001:default");
    expect(canonicalThreadId("http:api:")).toBe("http:api:default");
    expect(canonicalThreadId("http::x")).toBe("http:default:x");
    expect(canonicalThreadId("nocolons")).toBe("nocolons:default:default");
    const spelt = "slack:C123:1234.5678:a";
    expect(canonicalThreadId(spelt)).toBe(spelt);
    expect(() => canonicalThreadId("NOT VALID")).toThrow(/Invalid thread id/);
    // All three parts there is not enough: the adapter name must be one.
    expect(() => canonicalThreadId("Bad Adapter:c:t")).toThrow(/Invalid thread id/);
  });

  it("splits adapter:channel:thread and keeps colons in the thread part", () => {
    expect(parseThreadId("slack:C123:1234.5678")).toEqual({
      adapter: "slack",
      channel: "C123",
      thread: "1234.5678",
    });
    expect(parseThreadId("http:api:a:b")).toEqual({
      adapter: "http",
      channel: "api",
      thread: "a:b",
    });
    expect(parseThreadId("telegram:-1001")).toEqual({
      adapter: "telegram",
      channel: "-1001",
      thread: "default",
    });
  });

  it("rejects an adapter name that is not a short identifier, with one line naming the id", () => {
    expect(() => parseThreadId("../etc:x:y")).toThrow(/Invalid thread id "\.\.\/etc:x:y"/);
    expect(() => parseThreadId("Slack:x:y")).toThrow(/adapter name/);
  });

  it.each([
    "..",
    ".",
    "../../etc/passwd",
    "a/b",
    "a\\b",
    "x\0y",
    ".hidden",
    "spaces/ABC123",
    "ü/😀",
  ])("encodes %j as one safe path component", (id) => {
    const enc = encodeSegment(id);
    expect(enc).not.toContain("/");
    expect(enc).not.toContain("\\");
    expect(enc).not.toContain("\0");
    expect(enc.startsWith(".")).toBe(false);
    expect(enc).toMatch(/^[A-Za-z0-9_.%~-]+$/);
  });

  it("shortens very long ids but keeps distinct ids distinct", () => {
    const a = encodeSegment("x".repeat(5000));
    const b = encodeSegment(`${"x".repeat(4999)}y`);
    expect(a.length).toBeLessThanOrEqual(96);
    expect(a).not.toBe(b);
  });

  it("keeps every thread directory inside the data directory", () => {
    const home = resolve("/tmp/guppy-home-for-paths");
    const store = createStore({ home });
    for (const id of ["cli:..:..", "cli:../..:../../x", "telegram:/etc:passwd", "slack:%2E%2E:."]) {
      const dir = store.threadDir(id);
      const rel = relative(home, dir);
      expect(rel.startsWith("..")).toBe(false);
      expect(rel.split("/")).toHaveLength(3);
    }
    expect(store.threadDir("cli:local:default")).toBe(join(home, "cli", "local", "default"));
  });
});

describe("the thread-layout module", () => {
  it("imports only node built-ins and the leaf ConfigError, so the HTTP worker loads it alone", () => {
    const source = readFileSync(
      new URL("../../src/store/thread-layout.ts", import.meta.url),
      "utf8",
    );
    const specifiers = [...source.matchAll(/^import [^;]* from "([^"]+)";$/gm)].map((m) => m[1]);
    expect(specifiers.filter((s) => !s?.startsWith("node:"))).toEqual([
      "../config/config-error.js",
    ]);
    const leaf = readFileSync(new URL("../../src/config/config-error.ts", import.meta.url), "utf8");
    expect(leaf).not.toMatch(/^import /m);
  });
});

describe("a group member's own thread (GUPPY_GROUP_CONTEXT=per-user)", () => {
  it("is `<thread>~u<user>`: a thread of its own beside the group's, not a subagent", () => {
    const id = memberThreadId("slack:C1:1700.1", "U42");
    expect(id).toBe("slack:C1:1700.1~uU42");
    expect(memberOf(id)).toEqual({ groupId: "slack:C1:1700.1", userId: "U42" });
    expect(subagentOf(id)).toBeUndefined();
    const home = "/h";
    expect(threadDirOf(home, id)).toBe(join(home, "slack", "C1", "1700.1%7EuU42"));
    expect(threadIdOfDir("slack", "C1", "1700.1%7EuU42")).toBe(id);
    // A Telegram group's id has no thread part: the canonical "default" fills it.
    expect(memberThreadId("telegram:-100", "7")).toBe("telegram:-100:default~u7");
    // Its subagents are under it; the group's own thread is no member's.
    expect(memberOf(`${id}~sub-1`)).toBeUndefined();
    expect(subagentOf(`${id}~sub-1`)?.parentId).toBe(id);
    expect(memberOf("slack:C1:1700.1")).toBeUndefined();
  });
});
