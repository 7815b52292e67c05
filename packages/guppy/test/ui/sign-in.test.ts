import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { tempHome } from "../helpers/run-cli.js";
import { type ServeProcess, startServe } from "../serve/serve-harness.js";
import {
  foreignRequests,
  hasChromium,
  launchBrowser,
  openPage,
  screenshot,
  signIn,
  stopAll,
} from "./ui-harness.js";

/** Issue 38 item 1: the page is served by guppy serve and let in only with the API token. */
describe.skipIf(!hasChromium)("control UI sign-in (Chromium + guppy serve + aimock)", () => {
  let llm: MockLlm;
  let serve: ServeProcess;
  let browser: Browser;
  let cleanup: () => void;

  beforeAll(async () => {
    llm = await startMockLlm((request) => {
      const last = lastMessage(request);
      return { content: `You said: ${requestText({ ...request, messages: last ? [last] : [] })}` };
    });
    const home = tempHome();
    cleanup = home.cleanup;
    serve = await startServe(home.home, {
      ...llm.env("openai-completions"),
      GUPPY_SANDBOX: "host",
    });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await stopAll({ browser, serve, peers: [llm], cleanup });
  });

  it("refuses a wrong token, lets the right one in, and keeps to its own origin", async () => {
    const { page, watch } = await openPage(browser);
    await page.goto(`${serve.url}/`);
    // A loopback browser is told where the token is.
    await page.getByText(/The token: it is stored in .*api-token/).waitFor();
    await page.getByLabel("API token").fill("not-the-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/not guppy's API token/);
    expect(await page.getByRole("navigation", { name: "Pages" }).count()).toBe(0);
    await screenshot(page, "sign-in-refused");

    await page.getByLabel("API token").fill(serve.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Pages" }).waitFor();
    // The token is nowhere in the page's URL, and the cookie is out of the script's reach.
    expect(page.url()).not.toContain(serve.token);
    // The script sees only the marker that says a session was opened.
    expect(await page.evaluate("document.cookie")).toBe("guppy_signed_in=1");
    const cookies = await page.context().cookies();
    expect(cookies.map((c) => c.name).sort()).toEqual(["guppy_session", "guppy_signed_in"]);
    const session = cookies.find((c) => c.name === "guppy_session");
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Strict" });
    expect(session?.value).not.toContain(serve.token);

    // A reload stays signed in; signing out ends it.
    await page.reload();
    await page.getByRole("navigation", { name: "Pages" }).waitFor();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API token").waitFor();

    expect(foreignRequests(watch, serve.url)).toEqual([]);
    expect(watch.problems.filter((p) => !p.includes("401"))).toEqual([]);
    // The token never reached the gateway's output.
    expect(serve.stdout() + serve.stderr()).not.toContain(serve.token);
    await page.context().close();
  });

  it("works on a 390-px phone screen in dark mode", async () => {
    const { page } = await openPage(browser, { width: 390, height: 844, dark: true });
    await signIn(page, serve);
    const overflow = await page.evaluate(
      "document.documentElement.scrollWidth - document.documentElement.clientWidth",
    );
    expect(overflow).toBeLessThanOrEqual(0);
    const background = await page.evaluate("getComputedStyle(document.body).backgroundColor");
    expect(background).toBe("rgb(15, 17, 21)");
    await screenshot(page, "phone-dark");
    await page.context().close();
  });

  it("refuses a signed-in browser's requests made by another site on this machine", async () => {
    // Another port on 127.0.0.1 is the same *site* (SameSite=Strict sends the cookie there):
    // only the CSRF header and the origin check stand between it and the API.
    const target = `${serve.url}/v1/threads/http:api:evil/messages`;
    const evilPage = `<!doctype html><title>evil</title>
<form id="f" method="POST" action="${target}" enctype="text/plain">
<input name='{"text":"pwned-form","x":"' value='"}'></form>
<script>
const results = [];
const done = () => { document.title = "done " + results.join(" "); };
fetch(${JSON.stringify(target)}, { method: "POST", mode: "no-cors", credentials: "include",
  headers: { "content-type": "text/plain" }, body: '{"text":"pwned-simple"}' })
  .then((r) => results.push("simple:" + r.type), () => results.push("simple:failed"))
  .then(() => fetch(${JSON.stringify(target)}, { method: "POST", credentials: "include",
    headers: { "x-guppy-csrf": "1", "content-type": "application/json" },
    body: '{"text":"pwned-header"}' }))
  .then((r) => results.push("header:" + r.status), () => results.push("header:blocked"))
  .then(done);
</script>`;
    const evil: Server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(evilPage);
    });
    await new Promise<void>((r) => evil.listen(0, "127.0.0.1", r));
    const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
    try {
      const { page } = await openPage(browser);
      await signIn(page, serve);
      await page.goto(evilUrl);
      await page.waitForFunction("document.title.startsWith('done')", undefined, {
        timeout: 15_000,
      });
      // The preflighted fetch is blocked by the browser (guppy grants no CORS).
      expect(await page.title()).toContain("header:blocked");
      // The form is sent with the cookie, and refused by guppy.
      await page.evaluate("document.getElementById('f').submit()");
      await page.waitForURL(target);
      expect(await page.textContent("body")).toContain('"type":"csrf"');
      await page.context().close();
    } finally {
      await new Promise((r) => evil.close(r));
    }
    // Nothing reached a thread or the model.
    expect((await serve.api("/v1/threads/http:api:evil/messages")).status).toBe(404);
    expect(llm.requests().some((r) => JSON.stringify(r).includes("pwned"))).toBe(false);
  });
});
