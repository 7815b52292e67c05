import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startMockLlm } from "../helpers/mock-llm.js";
import { type ServeProcess, startServe, threadMessages, waitFor } from "./serve-harness.js";

/** A small tmpfs of our own (root only, as CI runs): a disk that can really fill up. */
function mountTmpfs(): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "guppy-fulldisk-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", dir], { stdio: "ignore" });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
}

const mount = mountTmpfs();

describe.skipIf(!mount)("guppy serve on a full disk", () => {
  const stops: Array<() => unknown> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  it("answers 507 for a prompt it cannot save and runs nothing; once there is room it works again", async () => {
    const dir = mount as string;
    stops.push(() => {
      execFileSync("umount", [dir]);
      rmSync(dir, { recursive: true, force: true });
    });
    const llm = await startMockLlm(() => ({ content: "the answer" }));
    stops.push(() => llm.stop());
    const home = join(dir, "home");
    mkdirSync(home);
    const s: ServeProcess = await startServe(home, {
      ...llm.env("openai-completions"),
      GUPPY_SANDBOX: "host",
    });
    stops.push(async () => {
      s.child.kill("SIGTERM");
      await s.exited;
    });
    const post = (text: string) =>
      s.api("/v1/threads/http:api:disk/messages", {
        method: "POST",
        body: JSON.stringify({ text }),
      });
    // Fill the disk.
    const filler = join(dir, "filler");
    try {
      writeFileSync(filler, Buffer.alloc(8 * 1024 * 1024));
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe("ENOSPC");
    }
    const refused = await post("hello on a full disk");
    expect(refused.status).toBe(507);
    const body = (await refused.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("insufficient_storage");
    expect(body.error.message).toMatch(/could not be saved/);
    // Nothing ran: the model was never asked, and the thread has no answer.
    await new Promise((r) => setTimeout(r, 1000));
    expect(llm.requests()).toHaveLength(0);
    expect(s.stdout()).toMatch(/could not be saved, so it was not run/);
    // Room again: the next prompt is saved, run and answered.
    rmSync(filler);
    const accepted = await post("hello again");
    expect(accepted.status).toBe(202);
    const messages = await waitFor(async () => {
      const m = await threadMessages(s, "http:api:disk");
      return m.some((x) => x.is_bot) ? m : undefined;
    });
    expect(messages.map((m) => m.text)).toEqual(["hello again", "the answer"]);
  });
});
