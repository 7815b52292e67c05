import { describe, expect, it } from "vitest";
import { createAlbumOrder } from "../../src/channels/telegram/album-order.js";

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("album order (the part the Bot API tests cannot reach)", () => {
  it("lets a message go when an album part is never handled, and keeps nothing after", async () => {
    const warnings: string[] = [];
    const order = createAlbumOrder({ warn: (message) => warnings.push(message) }, 100);
    const delivered: string[] = [];
    order.notePart(1, "chat-a", "album", 10);
    order.notePart(2, "chat-a", "album", 11);
    order.handling(1, Promise.resolve()); // part 2 never comes back
    // A message sent before the album, and another thread's, do not wait.
    expect(order.hold("chat-a", 9, async () => {})).toBe(false);
    expect(order.hold("chat-b", 14, async () => {})).toBe(false);
    expect(order.hold("chat-a", 12, async () => void delivered.push("text"))).toBe(true);
    expect(order.hold("chat-a", 13, async () => void delivered.push("next"))).toBe(true);
    await pause(50);
    expect(delivered).toEqual([]);
    await pause(150);
    expect(delivered).toEqual(["text", "next"]);
    expect(warnings).toHaveLength(1);
    // The album and the held messages are gone: the thread's next message goes at once.
    expect(order.hold("chat-a", 15, async () => {})).toBe(false);
  });
});
