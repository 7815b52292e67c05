import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TelegramUpdate } from "@chat-adapter/telegram";
import { silentLogger } from "@guppy/core";
import { afterEach, describe, expect, it } from "vitest";
import { HELD_UPDATES_FILE, openHeldUpdates } from "../../src/channels/telegram/held-updates.js";
import { tempHome } from "../helpers/run-cli.js";

const update = (id: number, text: string): TelegramUpdate =>
  ({
    update_id: id,
    message: { message_id: 100 + id, date: 0, chat: { id: 7, type: "private" }, text },
  }) as TelegramUpdate;

describe("held updates (telegram/held-updates.jsonl)", () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it("gives back what was left without `done`, in update_id order, and keeps only that", () => {
    const temp = tempHome();
    cleanup = temp.cleanup;
    const path = join(temp.home, HELD_UPDATES_FILE);
    mkdirSync(join(temp.home, "telegram"));
    const line = (record: unknown) => `${JSON.stringify(record)}\n`;
    // Kept out of order (a held text is written after the parts fetched with it), one handed
    // over, and a line torn by a crash.
    writeFileSync(
      path,
      line({ update: update(3, "held text") }) +
        line({ update: update(1, "part") }) +
        line({ update: update(2, "part") }) +
        line({ done: 2 }) +
        '{"update":{"upd',
    );
    const held = openHeldUpdates(temp.home, silentLogger);
    expect(held.leftover.map((u) => u.update_id)).toEqual([1, 3]);
    expect(held.hasMessage("7:103")).toBe(true);
    expect(held.hasMessage("7:102")).toBe(false);
    // Rewritten with only those.
    expect(readFileSync(path, "utf8").trim().split("\n")).toHaveLength(2);

    held.keep([update(4, "another"), update(3, "held text")]);
    expect(readFileSync(path, "utf8").trim().split("\n")).toHaveLength(3);
    held.done([1, 3]);
    expect(held.has(4)).toBe(true);
    held.done([4]);
    // Nothing kept: the file is emptied.
    expect(readFileSync(path, "utf8")).toBe("");
    held.keep([update(5, "later")]);
    held.close();
    expect(openHeldUpdates(temp.home, silentLogger).leftover.map((u) => u.update_id)).toEqual([5]);
  });
});
