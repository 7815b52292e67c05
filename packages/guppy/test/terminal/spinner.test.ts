import { afterEach, describe, expect, it, vi } from "vitest";
import { createSpinner } from "../../src/terminal/spinner.js";

/** A terminal that keeps what is written to it. */
function fakeTerminal() {
  const written: string[] = [];
  const stream = {
    isTTY: true,
    write: (chunk: string) => {
      written.push(chunk);
      return true;
    },
  } as unknown as NodeJS.WriteStream;
  return { stream, text: () => written.join("") };
}

/** SGR sequences (colour and style): ESC [ ... m. Cursor and erase codes are not among them. */
const SGR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`);

describe("the terminal spinner", () => {
  afterEach(() => vi.unstubAllEnvs());

  const spin = () => {
    const terminal = fakeTerminal();
    const spinner = createSpinner(terminal.stream);
    spinner.start("thinking…");
    spinner.stop();
    return terminal.text();
  };

  it("draws dim on a terminal", () => {
    vi.stubEnv("NO_COLOR", "");
    const text = spin();
    expect(text).toContain("thinking…");
    expect(text).toMatch(SGR);
  });

  it("uses no colour or style codes when NO_COLOR is set", () => {
    vi.stubEnv("NO_COLOR", "1");
    const text = spin();
    expect(text).toContain("⠋ thinking…");
    expect(text).not.toMatch(SGR);
  });
});
