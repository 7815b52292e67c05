import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ChatCompletionRequest, FixtureResponse } from "@copilotkit/aimock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lastMessage, type MockLlm, requestText, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

/** "search-for Q" → a search_channel call with Q as its arguments; a tool result → "Found: …". */
function script(request: ChatCompletionRequest): FixtureResponse {
  const last = lastMessage(request);
  if (last?.role === "tool") return { content: `Found: ${String(last.content)}` };
  const args = /search-for (.+)$/.exec(requestText({ ...request, messages: last ? [last] : [] }));
  if (args) return { toolCalls: [{ name: "search_channel", arguments: args[1] as string }] };
  return { content: "ok" };
}

/** A log.jsonl line of `author` at `date` (UTC). */
const line = (date: string, author: string, text: string) =>
  `${JSON.stringify({ date, messageId: `${author}-${date}`, userId: author, userName: author, text, isBot: false })}\n`;

function write(home: string, relative: string, text: string) {
  const path = join(home, relative);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

describe("guppy chat -m: the model searches the terminal's sessions with search_channel", () => {
  let llm: MockLlm;
  const home = tempHome();
  beforeAll(async () => {
    llm = await startMockLlm((request) => script(request));
    // Two earlier sessions of the terminal's channel (cli:local:*).
    write(
      home.home,
      "cli/local/work/log.jsonl",
      line("2026-11-20T09:00:00.000Z", "me", "Remember: the deploy key rotates on Friday.") +
        line("2026-11-21T09:00:00.000Z", "me", "unrelated note"),
    );
    write(
      home.home,
      "cli/local/notes/log.jsonl",
      line("2026-11-22T09:00:00.000Z", "me", "Friday: deploy the docs site, then the key."),
    );
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });

  const chat = (message: string) =>
    runCli(["chat", "-m", message, "--session", "today"], {
      env: cleanEnv({
        ...llm.env("openai-completions"),
        GUPPY_HOME: home.home,
        GUPPY_TIMEZONE: "UTC",
        GUPPY_SANDBOX: "host",
      }),
    });

  it("finds the channel's other sessions, newest first, in an untrusted-content block", async () => {
    const before = llm.requests().length;
    const r = await chat('search-for {"query":"deploy friday"}');
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(llm.requests().length).toBe(before + 2);
    const tool = llm.requests()[before]?.tools?.find((t) => t.function.name === "search_channel");
    expect(tool?.function.description).toContain("this channel");
    const out = r.stdout;
    expect(out).toMatch(/^Found: 2 messages in this channel matching "deploy friday"/);
    const heads = out.split("\n").filter((l) => /^\d+\. /.test(l));
    expect(heads).toEqual([
      "1. Sun 2026-11-22 09:00 · me · cli:local:notes",
      "2. Fri 2026-11-20 09:00 · me · cli:local:work",
    ]);
    expect(out).toContain('<untrusted-content source="search_channel: deploy friday">');
  });

  it("keeps to this session with scope thread and the limit", async () => {
    const r = await chat('search-for {"query":"\\"deploy friday\\"","scope":"thread","limit":1}');
    expect(r.code).toBe(0);
    // The only match in this session: its own earlier prompt, logged as it came.
    expect(r.stdout).toMatch(/^Found: 1 message in this conversation matching/);
    expect(r.stdout).toContain("cli:local:today (this conversation)");
    expect(r.stdout).not.toContain("cli:local:work");
  });
});
