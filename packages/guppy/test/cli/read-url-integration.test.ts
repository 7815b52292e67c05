import type { ChatCompletionRequest } from "@copilotkit/aimock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PageServer, startPageServer } from "../../../core/test/web/page-server.js";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

/** The tool messages of a request, as text. */
function toolResults(request: ChatCompletionRequest): string[] {
  return request.messages
    .filter((m) => m.role === "tool")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

/**
 * read_url through the agent loop of the bundled CLI: the model asks for an article page and a
 * PDF on a stand-in server (127.0.0.1, allowed by GUPPY_FETCH_ALLOW_HOSTS), then for one on a
 * host not allowed; it gets Markdown, the PDF's text (pdf.js loads from the bundle) and a refusal.
 */
describe("read_url in guppy chat -m", () => {
  let llm: MockLlm;
  let pages: PageServer;
  const home = tempHome();

  beforeAll(async () => {
    pages = await startPageServer();
    llm = await startMockLlm((request) => {
      const done = toolResults(request).length;
      const call = (url: string) => ({
        toolCalls: [{ name: "read_url", arguments: JSON.stringify({ url }) }],
      });
      if (done === 0) return call(`${pages.origin}/article`);
      if (done === 1) return call(`${pages.origin}/doc.pdf`);
      if (done === 2) return call(`http://localhost:${pages.port}/article`);
      return { content: "read them" };
    });
  });
  afterAll(async () => {
    await llm.stop();
    await pages.stop();
    home.cleanup();
  });

  it("hands the model the page as Markdown in an untrusted block, the PDF's text, and a refusal", async () => {
    const r = await runCli(["chat", "-m", "read the fish page"], {
      env: cleanEnv({
        ...llm.env("openai-completions"),
        GUPPY_HOME: home.home,
        GUPPY_SANDBOX: "host",
        GUPPY_FETCH_ALLOW_HOSTS: "127.0.0.1",
      }),
      timeoutMs: 60_000,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("read them\n");
    const requests = llm.requests();
    expect(requests).toHaveLength(4);
    const offered = (requests[0]?.tools ?? []).map((tool) => tool.function.name);
    expect(offered).toContain("read_url");
    const [article, pdf, refused] = toolResults(requests[3] as ChatCompletionRequest);
    expect(article).toContain(`<untrusted-content source="${pages.origin}/article">`);
    expect(article).toContain("# Reef Fish Care");
    expect(article).toContain(`[the water guide](${pages.origin}/guides/water)`);
    expect(article).not.toContain("NAV-HOME");
    expect(article).not.toContain("SCRIPT-IN-BODY");
    expect(pdf).toContain("Hello from a tiny PDF");
    expect(refused).toContain(
      `read_url refused http://localhost:${pages.port}/article: localhost (which resolves to`,
    );
    expect(refused).toContain("GUPPY_FETCH_ALLOW_PRIVATE=true");
    expect(pages.hits.filter((p) => p === "/article")).toHaveLength(1);
  });
});
