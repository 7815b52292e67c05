import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

/** `guppy events list|add|rm`: the event files are the source of truth; no gateway needed. */
describe("guppy events", () => {
  const home = tempHome();
  const env = cleanEnv({ GUPPY_HOME: home.home, GUPPY_TIMEZONE: "Europe/Berlin" });
  afterAll(() => home.cleanup());
  const events = (...args: string[]) => runCli(["events", ...args], { env });

  it("adds, lists and removes events, each as a file mirroring the flags", async () => {
    const empty = await events("list");
    expect(empty.code).toBe(0);
    expect(empty.stdout).toMatch(/^No scheduled events in .*events\.\n$/);

    const added = await events(
      "add",
      "--type",
      "periodic",
      "--thread",
      "telegram:42",
      "--text",
      "check the mail",
      "--schedule",
      "0 9 * * 1-5",
      "--timezone",
      "America/New_York",
      "--id",
      "mail",
    );
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(
      /^Added event mail \(periodic\) for telegram:42; next run \d{4}-\d\d-\d\d 09:00:00 America\/New_York\.\n$/,
    );
    expect(JSON.parse(readFileSync(join(home.home, "events", "mail.json"), "utf8"))).toEqual({
      type: "periodic",
      text: "check the mail",
      threadId: "telegram:42",
      schedule: "0 9 * * 1-5",
      timezone: "America/New_York",
    });

    const report = await events(
      "add",
      "--type",
      "one-shot",
      "--adapter",
      "slack",
      "--channel",
      "C123",
      "--text",
      "weekly report",
      "--schedule",
      "2031-03-01T09:00:00",
    );
    expect(report.code).toBe(0);
    const id =
      /^Added event (one-shot-\w+) \(one-shot\) for slack:C123 \(new thread\); next run 2031-03-01 09:00:00 Europe\/Berlin\.\n$/.exec(
        report.stdout,
      )?.[1];
    expect(id).toBeDefined();

    const list = await events("list");
    expect(list.code).toBe(0);
    const lines = list.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID\s+TYPE\s+TARGET\s+SCHEDULE\s+NEXT RUN$/);
    expect(lines[1]).toMatch(
      /^mail\s+periodic\s+telegram:42\s+0 9 \* \* 1-5 \(America\/New_York\)\s+\d{4}-\d\d-\d\d (14|15):00:00 Europe\/Berlin$/,
    );
    expect(lines[2]).toMatch(
      new RegExp(
        `^${id}\\s+one-shot\\s+slack:C123 \\(new thread\\)\\s+2031-03-01T09:00:00\\s+2031-03-01 09:00:00 Europe/Berlin$`,
      ),
    );

    const removed = await events("rm", "mail");
    expect(removed).toMatchObject({ code: 0, stdout: "Removed event mail.\n" });
    expect(existsSync(join(home.home, "events", "mail.json"))).toBe(false);
    expect((await events("list")).stdout).not.toContain("mail");
  });

  it.each([
    [["add", "--text", "x"], "guppy: guppy events add needs --type immediate|one-shot|periodic"],
    [
      ["add", "--type", "daily", "--text", "x"],
      'guppy: --type must be immediate, one-shot, periodic (got "daily")',
    ],
    [
      ["add", "--type", "periodic", "--text", "x", "--schedule", "* *"],
      'guppy: --schedule "* *" must be a cron expression of 5 fields, or 6 with seconds first',
    ],
    [
      ["add", "--type", "one-shot", "--text", "x", "--schedule", "next friday"],
      'guppy: --schedule "next friday" is not an ISO 8601 time like 2026-12-01T09:00:00',
    ],
    [
      ["add", "--type", "immediate", "--text", "x", "--adapter", "slack"],
      "guppy: a target is missing: --thread, or --adapter and --channel",
    ],
    [
      [
        "add",
        "--type",
        "immediate",
        "--text",
        "x",
        "--thread",
        "a:b",
        "--adapter",
        "s",
        "--channel",
        "c",
      ],
      "guppy: give --thread, or --adapter and --channel, not both",
    ],
    [["rm", "nothing-here"], 'guppy: no event "nothing-here" in'],
    [["rm"], "guppy: guppy events rm needs the event's id"],
    [["list", "--type", "periodic"], 'guppy: --type is for "guppy events add"'],
    [["later"], 'guppy: unknown events command "later"'],
  ])("refuses %j in one line, exit 2", async (args, message) => {
    const r = await events(...args);
    expect(r.code).toBe(2);
    expect(r.stderr.startsWith(message)).toBe(true);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
  });

  it("keeps the event flags to guppy events", async () => {
    const r = await runCli(["config", "--schedule", "x"], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Unknown option '--schedule'/);
  });

  it("warns about a file that does not read, and lists the rest", async () => {
    writeFileSync(join(home.home, "events", "broken.json"), "{ not json");
    const r = await events("list");
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^guppy: warning: .*broken\.json: not valid JSON/);
  });
});
