import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@guppy/core";
import { afterEach, describe, expect, it } from "vitest";
import { createThreadFollows } from "../../src/channels/bridge/thread-follows.js";

const HOUR = 3_600_000;

describe("followed threads (subscriptions.json)", () => {
  const homes: string[] = [];
  afterEach(() => {
    for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
  });
  const home = () => {
    const dir = mkdtempSync(join(tmpdir(), "guppy-follows-"));
    homes.push(dir);
    return dir;
  };

  it("ends a follow after the quiet period, and a message starts the period again", () => {
    let now = Date.parse("2026-03-01T10:00:00Z");
    const dir = home();
    const follows = createThreadFollows({
      home: dir,
      quietMs: 24 * HOUR,
      logger: silentLogger,
      now: () => now,
    });
    follows.follow("slack:C1:t1");
    now += 20 * HOUR;
    expect(follows.isFollowed("slack:C1:t1")).toBe(true);
    follows.touch("slack:C1:t1");
    now += 20 * HOUR;
    expect(follows.isFollowed("slack:C1:t1")).toBe(true);
    now += 5 * HOUR;
    expect(follows.isFollowed("slack:C1:t1")).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, "subscriptions.json"), "utf8"))).toEqual([]);
  });

  it("shares the file between channels and reads what another wrote", () => {
    const dir = home();
    const slack = createThreadFollows({ home: dir, quietMs: HOUR, logger: silentLogger });
    const discord = createThreadFollows({ home: dir, quietMs: HOUR, logger: silentLogger });
    slack.follow("slack:C1:t1");
    discord.follow("discord:G1:c1");
    expect(slack.list().map((f) => f.threadId)).toEqual(["slack:C1:t1", "discord:G1:c1"]);
    slack.unfollow("slack:C1:t1");
    expect(discord.list().map((f) => f.threadId)).toEqual(["discord:G1:c1"]);
  });

  it("a broken file follows nothing instead of failing", () => {
    const dir = home();
    writeFileSync(join(dir, "subscriptions.json"), "{ not json");
    const follows = createThreadFollows({ home: dir, quietMs: HOUR, logger: silentLogger });
    expect(follows.isFollowed("slack:C1:t1")).toBe(false);
    follows.follow("slack:C1:t1");
    expect(follows.isFollowed("slack:C1:t1")).toBe(true);
  });
});
