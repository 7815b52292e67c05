import { describe, expect, it } from "vitest";
import { createLineLogger } from "../../src/logging/logger.js";
import { createRedactor, redactLogger } from "../../src/logging/redact.js";

const KEY = "sk-test-0123456789abcdef";
const TOKEN = "123456:bot-token-ABCDEFGH";

describe("createRedactor", () => {
  const redactor = createRedactor([
    { name: "GUPPY_API_KEY", value: KEY },
    { name: "GUPPY_TELEGRAM_BOT_TOKEN", value: TOKEN },
    { name: "SHORT", value: "abc1234" },
  ]);

  it("replaces every whole secret by its name, two secrets in one text", () => {
    expect(redactor.text(`key=${KEY} token=${TOKEN} again ${KEY}`)).toBe(
      "key=[redacted: GUPPY_API_KEY] token=[redacted: GUPPY_TELEGRAM_BOT_TOKEN] again [redacted: GUPPY_API_KEY]",
    );
  });

  it("ignores values shorter than 8 characters", () => {
    expect(redactor.text("code abc1234 stays")).toBe("code abc1234 stays");
    expect(createRedactor([{ name: "X", value: "short" }]).active).toBe(false);
  });

  it("redacts a secret added later (a key changed while guppy runs), in text and streams", () => {
    const live = createRedactor([{ name: "OPENAI_API_KEY", value: KEY }]);
    const NEW = "sk-new-key-9876543210zyx";
    const open = live.stream();
    expect(open.push(`old ${KEY} new ${NEW.slice(0, 6)}`)).toBe(
      `old [redacted: OPENAI_API_KEY] new ${NEW.slice(0, 6)}`,
    );
    live.add({ name: "OPENAI_API_KEY", value: NEW });
    live.add({ name: "TOO_SHORT", value: "abc" });
    expect(live.text(`new ${NEW}, old ${KEY}, short abc`)).toBe(
      "new [redacted: OPENAI_API_KEY], old [redacted: OPENAI_API_KEY], short abc",
    );
    const later = live.stream();
    expect(
      later.push(`x ${NEW.slice(0, 10)}`) + later.push(`${NEW.slice(10)} y`) + later.end(),
    ).toBe("x [redacted: OPENAI_API_KEY] y");
    // One made with nothing to redact becomes active with its first secret.
    const empty = createRedactor([]);
    expect(empty.active).toBe(false);
    empty.add({ name: "K", value: NEW });
    expect([empty.active, empty.text(NEW)]).toEqual([true, "[redacted: K]"]);
  });

  it("catches a secret as it appears inside a JSON string", () => {
    const odd = createRedactor([{ name: "ODD", value: 'pa"ss\\word-123' }]);
    expect(odd.text(JSON.stringify({ v: 'x pa"ss\\word-123 y' }))).toBe(
      '{"v":"x [redacted: ODD] y"}',
    );
  });

  it("redacts every string of a value without touching the original", () => {
    const message = { role: "toolResult", content: [{ type: "text", text: `out ${KEY}` }], n: 1 };
    const redacted = redactor.value(message);
    expect(redacted.content[0]?.text).toBe("out [redacted: GUPPY_API_KEY]");
    expect(message.content[0]?.text).toBe(`out ${KEY}`);
    const clean = { a: ["x", { b: "y" }] };
    expect(redactor.value(clean)).toBe(clean);
  });

  it("catches a secret split across stream pieces and releases the held tail at the end", () => {
    const stream = redactor.stream();
    const pieces = ["Your key is sk-te", "st-01234", "56789abc", "def and tok", "en 123456:b"];
    let out = "";
    for (const piece of pieces) {
      const passed = stream.push(piece);
      expect(passed).not.toContain("sk-te");
      out += passed;
    }
    out += stream.push("ot-token-ABCDEFGH. Bye sk-");
    out += stream.end();
    expect(out).toBe(
      "Your key is [redacted: GUPPY_API_KEY] and token [redacted: GUPPY_TELEGRAM_BOT_TOKEN]. Bye sk-",
    );
  });

  it("measures a secret a cut split at either border of a piece, and nothing else", () => {
    expect(redactor.splitSecret("output ... sk-test-0123", "end")).toBe(12);
    expect(redactor.splitSecret("456789abcdef more output", "start")).toBe(12);
    expect(redactor.splitSecret("ABCDEFGH and then", "start")).toBe(8);
    expect(redactor.splitSecret(`whole ${KEY}`, "end")).toBe(0);
    expect(redactor.splitSecret(`${KEY} whole`, "start")).toBe(0);
    expect(redactor.splitSecret("plain text", "end")).toBe(0);
    expect(createRedactor([]).splitSecret("sk-test-0", "end")).toBe(0);
  });

  it("passes ordinary text on at once", () => {
    const stream = redactor.stream();
    expect(stream.push("Hello there")).toBe("Hello there");
    expect(stream.push(", friend.")).toBe(", friend.");
    expect(stream.end()).toBe("");
  });

  it("redacts a logger's messages and fields", () => {
    const lines: string[] = [];
    const logger = redactLogger(
      createLineLogger({ level: "debug", write: (l) => lines.push(l) }),
      redactor,
    );
    logger.warn(`bad key ${KEY}`, { error: `401 for ${TOKEN}` });
    expect(lines).toEqual([
      'guppy: warning: bad key [redacted: GUPPY_API_KEY] {"error":"401 for [redacted: GUPPY_TELEGRAM_BOT_TOKEN]"}',
    ]);
  });
});
