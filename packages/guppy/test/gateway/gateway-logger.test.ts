import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRedactor } from "@guppy/core";
import { afterEach, describe, expect, it } from "vitest";
import { createGatewayLogger } from "../../src/gateway/gateway-logger.js";

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

describe("gateway logger", () => {
  it("takes configured secrets out of the file's lines and the terminal's", () => {
    const home = mkdtempSync(join(tmpdir(), "guppy-gwlog-"));
    homes.push(home);
    const key = "sk-live-0123456789abcdef";
    const writes: string[] = [];
    const gw = createGatewayLogger({
      home,
      debug: false,
      write: (lines) => writes.push(lines),
      redactor: createRedactor([{ name: "GUPPY_API_KEY", value: key }]),
    });
    gw.logger.error(`The provider refused ${key}`, { error: `401: bad key ${key}` });
    gw.say(`said ${key}`);
    gw.flush();
    const file = readFileSync(gw.path, "utf8");
    const terminal = writes.join("");
    for (const out of [file, terminal]) {
      expect(out).not.toContain(key);
      expect(out).toContain("The provider refused [redacted: GUPPY_API_KEY]");
    }
    expect(JSON.parse(file.trim()).error).toBe("401: bad key [redacted: GUPPY_API_KEY]");
    expect(terminal).toContain("said [redacted: GUPPY_API_KEY]");
  });

  it("writes a turn's terminal lines in one write, in order, and the JSON lines to the file", async () => {
    const home = mkdtempSync(join(tmpdir(), "guppy-gwlog-"));
    homes.push(home);
    const writes: string[] = [];
    const gw = createGatewayLogger({ home, debug: false, write: (lines) => writes.push(lines) });
    gw.event({ type: "activated", threadId: "http:api:a" });
    gw.event({ type: "queued", threadId: "http:api:a", inboxId: "in-1", position: 0 });
    gw.say("hello");
    expect(writes).toEqual([]); // nothing yet: written once the turn is over
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(1);
    const lines = (writes[0] ?? "").split("\n");
    expect(lines.at(-1)).toBe("");
    expect(lines.slice(0, 3).map((l) => l.slice(9))).toEqual([
      "http:api:a  agent loaded",
      "http:api:a  queued in-1 (position 0)",
      "hello",
    ]);
    gw.say("last words");
    gw.flush(); // shutdown: written at once
    expect(writes[1]).toMatch(/^\d\d:\d\d:\d\d last words\n$/);
    // The JSON lines went to the file at the end of the same turn, in one write.
    const messages = readFileSync(gw.path, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(messages.map((m) => m.msg)).toEqual(["agent loaded", "queued in-1 (position 0)"]);
    expect(messages[1]?.event).toEqual({
      type: "queued",
      threadId: "http:api:a",
      inboxId: "in-1",
      position: 0,
    });
  });

  it("keeps each entry on one terminal line and shows control characters instead of sending them", () => {
    const home = mkdtempSync(join(tmpdir(), "guppy-gwlog-"));
    homes.push(home);
    const writes: string[] = [];
    const gw = createGatewayLogger({ home, debug: false, write: (lines) => writes.push(lines) });
    // A thread id and texts from a remote user: a line break, a clear-screen, a title, a bidi override.
    const threadId = "http:eve\n12:00:00 guppy serve ready:default";
    gw.event({ type: "activated", threadId });
    gw.event({
      type: "runner",
      threadId,
      event: { type: "run_start", text: "hi \u001b[2J\u001b]0;pwned\u0007 there\u202e" },
    } as Parameters<typeof gw.event>[0]);
    gw.logger.warn("bad\r\nline\u0000");
    gw.flush();
    const lines = writes.join("").split("\n");
    expect(lines.at(-1)).toBe("");
    expect(lines.slice(0, -1).map((l) => l.slice(9))).toEqual([
      "http:eve\\n12:00:00 guppy serve ready:default  agent loaded",
      "http:eve\\n12:00:00 guppy serve ready:default  ▶ run: hi \\x1b[2J\\x1b]0;pwned\\x07 there\\u202e",
      "warning: bad\\r\\nline\\x00",
    ]);
    const sent = [...writes.join("")].filter((c) => c !== "\n");
    expect(sent.filter((c) => c.charCodeAt(0) < 0x20 || c === "\u007f" || c === "\u202e")).toEqual(
      [],
    );
  });

  it("writes no more terminal lines once the terminal is gone, and says so in the file once", async () => {
    const home = mkdtempSync(join(tmpdir(), "guppy-gwlog-"));
    homes.push(home);
    const writes: string[] = [];
    const gw = createGatewayLogger({ home, debug: false, write: (lines) => writes.push(lines) });
    gw.say("before");
    gw.flush();
    gw.terminalClosed("EPIPE");
    gw.terminalClosed("EPIPE");
    gw.event({ type: "activated", threadId: "http:api:a" });
    gw.say("after");
    gw.flush();
    expect(writes.join("")).toMatch(/before\n$/);
    const messages = readFileSync(gw.path, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).msg);
    expect(messages).toEqual([
      `The terminal is gone: guppy serve keeps running and logs to ${gw.path} only`,
      "agent loaded",
    ]);
  });
});
