import { describe, expect, it } from "vitest";
import { createAlbumOrder } from "../../src/channels/telegram/album-order.js";

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("album order (the part the Bot API tests cannot reach)", () => {
  it("lets a message go when an album part is never handled, and keeps nothing after", async () => {
    const warnings: string[] = [];
    const order = createAlbumOrder(
      { warn: (message) => warnings.push(message) },
      { timeoutMs: 100 },
    );
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

  it("still says an album is handed over when its parts are handled after the timeout", async () => {
    const handed: number[][] = [];
    const order = createAlbumOrder(
      { warn: () => {} },
      { timeoutMs: 50, handedOver: (updateIds) => void handed.push(updateIds) },
    );
    const delivered: string[] = [];
    order.notePart(1, "chat-a", "album", 10);
    order.notePart(2, "chat-a", "album", 11);
    order.handling(1, pause(80));
    order.handling(2, pause(80));
    expect(order.hold("chat-a", 12, async () => void delivered.push("text"))).toBe(true);
    await pause(65);
    // The held message went on at the timeout; the album is not handed over yet.
    expect(delivered).toEqual(["text"]);
    expect(handed).toEqual([]);
    await pause(50);
    // Handled late, it is done with all the same (else it stayed in the held-updates file and
    // came again at the next start).
    expect(handed).toEqual([[1, 2]]);
    await order.release();
    expect(handed).toEqual([[1, 2]]);
  });

  it("says an album is handed over once all its parts were handled; a stop leaves the rest, and what waits behind it", async () => {
    const handed: number[][] = [];
    const order = createAlbumOrder(
      { warn: () => {} },
      { handedOver: (updateIds) => void handed.push(updateIds) },
    );
    const delivered: string[] = [];
    order.notePart(1, "chat-a", "album-a", 10);
    order.notePart(2, "chat-a", "album-a", 11);
    order.notePart(3, "chat-b", "album-b", 20);
    order.notePart(4, "chat-b", "album-b", 21);
    // Album a handled (a part that failed counts: it would fail again); part 4 still with the
    // polling loop when polling stops.
    order.handling(1, pause(20));
    order.handling(2, Promise.reject(new Error("unreadable part")));
    order.handling(3, Promise.resolve());
    expect(order.hold("chat-a", 12, async () => void delivered.push("a text"))).toBe(true);
    expect(order.hold("chat-b", 22, async () => void delivered.push("b text"))).toBe(true);
    expect(order.hold("chat-b", 23, async () => void delivered.push("b next"))).toBe(true);
    await order.release();
    expect(handed).toEqual([[1, 2]]);
    // Album b goes at the next start, and the messages behind it after it.
    expect(delivered).toEqual(["a text"]);
  });
});
