import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

/** A stand-in search API on 127.0.0.1 answering every request with `answer(path)`. */
async function fakeSearchApi(answer: (path: string) => { status: number; body: unknown }) {
  const seen: Array<{ url: string; token: string | undefined }> = [];
  const server: Server = createServer((req, res) => {
    const url = req.url ?? "/";
    const token = req.headers["x-subscription-token"];
    seen.push({ url, token: typeof token === "string" ? token : undefined });
    const { status, body } = answer(new URL(url, "http://127.0.0.1").pathname);
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** web_search through `guppy chat -m`: the model calls it, and its next request carries the results. */
describe("web_search in guppy chat -m", () => {
  let llm: MockLlm;
  let brave: Awaited<ReturnType<typeof fakeSearchApi>>;
  let searxng: Awaited<ReturnType<typeof fakeSearchApi>>;
  const home = tempHome();
  const env = (extra: Record<string, string>) =>
    cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home.home, ...extra });

  beforeAll(async () => {
    // "search X" asks for web_search; a tool result is answered with its text.
    llm = await startMockLlm((request) => {
      const last = lastMessage(request);
      if (last?.role === "tool")
        return { content: `searched: ${requestText({ ...request, messages: [last] })}` };
      const query = /search (.+)/.exec(requestText({ ...request, messages: last ? [last] : [] }));
      if (query) {
        return {
          toolCalls: [
            { name: "web_search", arguments: JSON.stringify({ query: query[1], count: 3 }) },
          ],
        };
      }
      return { content: "no search" };
    });
    brave = await fakeSearchApi((path) =>
      path === "/res/v1/web/search"
        ? {
            status: 200,
            body: {
              web: {
                results: [
                  {
                    title: "Caring for <strong>guppies</strong>",
                    url: "https://fish.example/guppies",
                    description: "Water at 24&deg;C, <strong>guppies</strong> like plants.",
                    age: "3 days ago",
                  },
                ],
              },
            },
          }
        : { status: 404, body: {} },
    );
    searxng = await fakeSearchApi((path) =>
      path === "/search"
        ? {
            status: 200,
            body: {
              results: [
                { title: "SearXNG hit", url: "https://searx.example/hit", content: "from searxng" },
              ],
            },
          }
        : { status: 404, body: {} },
    );
  });
  afterAll(async () => {
    await llm.stop();
    await brave.close();
    await searxng.close();
    home.cleanup();
  });

  /** Runs one prompt; returns the requests it made and what it printed. */
  const chat = async (text: string, extra: Record<string, string>) => {
    const before = llm.requests().length;
    const r = await runCli(["chat", "-m", text], { env: env(extra), timeoutMs: 60_000 });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    return { stdout: r.stdout, requests: llm.requests().slice(before) };
  };

  it("offers web_search with a Brave key and hands the model Brave's results as untrusted content", async () => {
    const { stdout, requests } = await chat("search guppy care", {
      BRAVE_API_KEY: "brave-test-key",
      GUPPY_BRAVE_BASE_URL: brave.url,
      // Set too: Brave is the one used.
      GUPPY_SEARXNG_URL: searxng.url,
    });
    expect(requests).toHaveLength(2);
    expect((requests[0]?.tools ?? []).map((tool) => tool.function.name)).toContain("web_search");
    expect(brave.seen).toEqual([
      { url: "/res/v1/web/search?q=guppy+care&count=3", token: "brave-test-key" },
    ]);
    expect(searxng.seen).toEqual([]);
    const result = lastMessage(requests[1]!);
    expect(result?.role).toBe("tool");
    const text = requestText({ ...requests[1]!, messages: [result!] });
    expect(text).toContain('<untrusted-content source="web search: guppy care">');
    expect(text).toContain(
      "1. Caring for guppies\n   https://fish.example/guppies\n   Water at 24°C, guppies like plants.\n   Age: 3 days ago",
    );
    expect(stdout).toMatch(/^searched: <untrusted-content source="web search: guppy care">/);
  });

  it("uses SearXNG when it is the only provider", async () => {
    const { requests } = await chat("search tetra", { GUPPY_SEARXNG_URL: searxng.url });
    expect(searxng.seen.map((s) => s.url)).toEqual(["/search?q=tetra&format=json"]);
    const result = lastMessage(requests[1]!);
    expect(requestText({ ...requests[1]!, messages: [result!] })).toContain(
      "1. SearXNG hit\n   https://searx.example/hit\n   from searxng",
    );
  });

  it("does not offer web_search without a provider", async () => {
    const { stdout, requests } = await chat("hello", {});
    expect(stdout).toBe("no search\n");
    expect((requests[0]?.tools ?? []).map((tool) => tool.function.name)).not.toContain(
      "web_search",
    );
  });
});
