import { describe, expect, it } from "vitest";
import { busyMessage } from "../../../src/channels/http/busy-message.js";

describe("the 429's message", () => {
  it("counts the prompts waiting, one or more", () => {
    expect(busyMessage("http:api:t", 1)).toBe(
      "Thread http:api:t is busy (1 prompt queued); try again shortly.",
    );
    expect(busyMessage("http:api:t", 5)).toBe(
      "Thread http:api:t is busy (5 prompts queued); try again shortly.",
    );
  });
});
