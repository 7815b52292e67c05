import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createHtmlConverter, type HtmlConverter } from "../../src/web/html-worker-client.js";
import { ARTICLE_HTML } from "./page-server.js";

// read_url's HTML conversion on a worker thread: the built worker (dist/web/html-worker.js; tests
// run after `tsc -b`) converting for real and being ended by an abort, and stand-ins speaking its
// protocol that die, hang or never start.

const dir = mkdtempSync(join(tmpdir(), "guppy-html-worker-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const converters: HtmlConverter[] = [];
afterEach(async () => {
  for (const c of converters.splice(0)) await c.close();
});

const builtWorker = new URL("../../dist/web/html-worker.js", import.meta.url);
const pageUrl = "https://example.org/fish/care";

function standIn(name: string, source: string): URL {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, source);
  return pathToFileURL(file);
}

function converter(options: Parameters<typeof createHtmlConverter>[0]): HtmlConverter {
  const c = createHtmlConverter(options);
  converters.push(c);
  return c;
}

/** A large article page: thousands of paragraphs, so converting it takes a while. */
function largePage(): string {
  const paragraphs = Array.from(
    { length: 4000 },
    (_, i) => `<p>Paragraph ${i} with <a href="/ref/${i}">a link</a>. ${"Words. ".repeat(30)}</p>`,
  );
  return `<html><head><title>Large</title></head><body><article>${paragraphs.join("")}</article></body></html>`;
}

describe("HTML converter on a worker thread", () => {
  it("converts an article page in the built worker: title first, links absolute, no nav or ads", async () => {
    const c = converter({ workerUrl: builtWorker });
    // Started ahead (as read_url does while the page downloads), then given the page.
    c.warm();
    const page = await c.convert(ARTICLE_HTML, pageUrl);
    expect(page.kind).toBe("html");
    expect(page.title).toMatch(/^Reef Fish Care/);
    expect(page.text).toMatch(/^# Reef Fish Care/);
    expect(page.text).toContain("[the water guide](https://example.org/guides/water)");
    expect(page.text).toMatch(/^- Brine shrimp$/m);
    for (const gone of ["NAV-HOME", "AD-BLOCK", "SCRIPT-IN", "FOOTER-TEXT"]) {
      expect(page.text).not.toContain(gone);
    }
  });

  it("ends the worker when the run aborts mid-page, and converts the next page with a new one", async () => {
    const c = converter({ workerUrl: builtWorker });
    const controller = new AbortController();
    const converting = c.convert(largePage(), pageUrl, controller.signal);
    setTimeout(() => controller.abort(), 5);
    await expect(converting).rejects.toThrow(/abort/i);
    const next = await c.convert(ARTICLE_HTML, pageUrl);
    expect(next.title).toMatch(/^Reef Fish Care/);
  });

  it("fails a page with a clear error when its worker dies, and starts another for the next", async () => {
    const c = converter({
      workerUrl: standIn(
        "dying",
        `import { parentPort } from "node:worker_threads";
parentPort.postMessage({ type: "ready" });
parentPort.on("message", () => process.exit(7));`,
      ),
    });
    await expect(c.convert("<p>x</p>", pageUrl)).rejects.toThrow(
      `read_url could not convert ${pageUrl}: the page converter stopped (exit code 7)`,
    );
    await expect(c.convert("<p>y</p>", pageUrl)).rejects.toThrow("exit code 7");
  });

  it("ends a worker that hangs on a page after the timeout, with an error that says so", async () => {
    const c = converter({
      timeoutMs: 300,
      workerUrl: standIn(
        "hanging",
        `import { parentPort } from "node:worker_threads";
parentPort.postMessage({ type: "ready" });
parentPort.on("message", () => { for (;;) {} });`,
      ),
    });
    await expect(c.convert("<p>x</p>", pageUrl)).rejects.toThrow(
      `read_url could not convert ${pageUrl}: the page took over 300 ms to convert.`,
    );
    const controller = new AbortController();
    const converting = c.convert("<p>y</p>", pageUrl, controller.signal);
    controller.abort();
    await expect(converting).rejects.toThrow(/abort/i);
  });

  it("converts on this thread when the worker cannot start (no file, or one that throws)", async () => {
    for (const workerUrl of [
      pathToFileURL(join(dir, "missing-worker.js")),
      standIn("broken", `throw new Error("cannot load");`),
    ]) {
      const page = await converter({ workerUrl }).convert(ARTICLE_HTML, pageUrl);
      expect(page.text).toContain("## Feeding");
    }
  });
});
