import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
import { createThreadRunner } from "../../src/runner/create-thread-runner.js";
import type { AgentRunner } from "../../src/runner/types.js";
import { loadConfig } from "../../src/settings.js";
import { createStore } from "../../src/store/create-store.js";
import type { Role } from "../../src/types.js";
import { useFauxHome } from "../helpers/faux-home.js";

/** What the model was offered and told in one run of a thread runner (faux provider). */
describe("each role's tools in a thread's runs (faux provider)", () => {
  const f = useFauxHome();

  const runnerFor = (threadId: string, tools?: unknown): AgentRunner => {
    if (tools !== undefined) f.t.write("settings.json", JSON.stringify({ tools }));
    const config = loadConfig({ env: { GUPPY_TIMEZONE: "UTC" }, home: f.t.home });
    return createThreadRunner({
      threadId,
      config,
      resolved: f.resolved(),
      store: createStore({ home: f.t.home }),
      // A chat thread: the upload tool is made for it.
      threadHandle: () => ({ threadId, notice: () => {} }),
    });
  };

  /** The names of the tools each request of a run offered, the run answering "ok". */
  const offered = async (runner: AgentRunner, role: Role): Promise<string[]> => {
    let names: string[] = [];
    f.faux.setResponses([
      (context: Context) => {
        names = (context.tools ?? []).map((tool) => tool.name);
        return fauxAssistantMessage("ok");
      },
    ]);
    expect((await runner.prompt({ text: "hi", role })).text).toBe("ok");
    return names;
  };

  /** Runs one tool call as `role`; returns the tool result's text the model saw next. */
  const callTool = async (
    runner: AgentRunner,
    role: Role,
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ text: string; isError: boolean }> => {
    let seen = { text: "", isError: false };
    f.faux.setResponses([
      fauxAssistantMessage(fauxToolCall(name, args), { stopReason: "toolUse" }),
      (context: Context) => {
        const last = context.messages.at(-1);
        if (last?.role === "toolResult") {
          const text = last.content.map((c) => (c.type === "text" ? c.text : "")).join("");
          seen = { text, isError: last.isError };
        }
        return fauxAssistantMessage("done");
      },
    ]);
    await runner.prompt({ text: "go", role });
    return seen;
  };

  it("offers a guest only read, and an owner bash and the rest", async () => {
    const runner = runnerFor("telegram:100:100");
    expect(await offered(runner, "guest")).toEqual(["read"]);
    expect(await offered(runner, "owner")).toEqual([
      "bash",
      "read",
      "write",
      "edit",
      "upload",
      "read_url",
    ]);
    // The next guest run is offered the guest's set again, not the owner's.
    expect(await offered(runner, "guest")).toEqual(["read"]);
  });

  it("tells the model of the run's tools only: a guest's system prompt has no bash", async () => {
    const runner = runnerFor("telegram:100:100");
    const prompts: Partial<Record<Role, string>> = {};
    for (const role of ["guest", "owner"] as const) {
      f.faux.setResponses([
        (context: Context) => {
          prompts[role] = context.systemPrompt ?? "";
          return fauxAssistantMessage("ok");
        },
      ]);
      await runner.prompt({ text: "hi", role });
    }
    expect(prompts.owner).toContain("\n- bash: ");
    expect(prompts.guest).toContain("\n- read: ");
    expect(prompts.guest).not.toContain("\n- bash: ");
    expect(prompts.guest).not.toContain("\n- write: ");
  });

  it("keeps the owner's own notes out of a guest's system prompt, and this chat's memory in", async () => {
    f.t.write("MEMORY.md", "- OWNER-GLOBAL-FACT: the safe code is 1234");
    f.t.write("USER.md", "OWNER-PROFILE: lives at 1 Private Road");
    f.t.write("telegram/MEMORY.md", "- PLATFORM-FACT about every telegram chat");
    f.t.write("telegram/100/MEMORY.md", "- CHAT-FACT: this chat plans a picnic");
    const today = new Date().toISOString().slice(0, 10).replaceAll("-", "");
    f.t.write(`memory/${today.slice(0, 6)}/${today}.md`, "- DIARY-ENTRY: saw the doctor");
    f.t.write(
      "skills/secret-skill/SKILL.md",
      "---\nname: secret-skill\ndescription: SKILL-DESC\n---\nbody",
    );
    const runner = runnerFor("telegram:100:100");
    const prompts: Partial<Record<Role, string>> = {};
    for (const role of ["guest", "owner"] as const) {
      f.faux.setResponses([
        (context: Context) => {
          prompts[role] = context.systemPrompt ?? "";
          return fauxAssistantMessage("ok");
        },
      ]);
      await runner.prompt({ text: "hi", role });
    }
    for (const mark of [
      "OWNER-GLOBAL-FACT",
      "OWNER-PROFILE",
      "PLATFORM-FACT",
      "DIARY-ENTRY",
      "SKILL-DESC",
    ]) {
      expect(prompts.owner, mark).toContain(mark);
      expect(prompts.guest, mark).not.toContain(mark);
    }
    expect(prompts.guest).toContain("CHAT-FACT");
    expect(prompts.guest).not.toContain("Data directory");
  });

  it("follows the tools setting for the thread's channel", async () => {
    const tools = {
      telegram: { guest: { allow: ["read", "write"] }, owner: { deny: ["bash"] } },
      cli: { guest: { deny: ["read"] } },
    };
    const telegram = runnerFor("telegram:100:100", tools);
    expect(await offered(telegram, "guest")).toEqual(["read", "write"]);
    expect(await offered(telegram, "owner")).toEqual([
      "read",
      "write",
      "edit",
      "upload",
      "read_url",
    ]);
    // A guest allowed write writes in its workspace, never outside it.
    const written = await callTool(telegram, "guest", "write", { path: "note.md", content: "hi" });
    expect(written.isError).toBe(false);
    const outside = join(f.t.home, "planted.md");
    const refused = await callTool(telegram, "guest", "write", { path: outside, content: "x" });
    expect(refused.isError).toBe(true);
    expect(existsSync(outside)).toBe(false);
    const slack = runnerFor("slack:T1:C1", tools);
    expect(await offered(slack, "guest")).toEqual(["read"]);
    expect(await offered(slack, "owner")).toContain("bash");
  });

  it("refuses a guest's read outside its workspace (the file never reaches the model), allows it inside", async () => {
    const threadId = "telegram:100:100";
    const runner = runnerFor(threadId);
    const store = createStore({ home: f.t.home });
    const outside = f.t.write("notes/private.txt", "the owner's secret plan");
    const settings = f.t.write("settings.json", '{"apiKey": "sk-not-for-guests"}');
    const workspace = store.workspaceDir(threadId);
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(workspace, "shared.txt"), "hello guest");

    const refused = await callTool(runner, "guest", "read", { path: outside });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain(`${outside} is outside what a guest's tools can see`);
    expect(refused.text).not.toContain("secret plan");

    const secret = await callTool(runner, "guest", "read", { path: settings });
    expect(secret.isError).toBe(true);
    expect(secret.text).not.toContain("sk-not-for-guests");

    // A link made inside the workspace is judged by where it points.
    const link = join(workspace, "link.txt");
    symlinkSync(outside, link);
    const linked = await callTool(runner, "guest", "read", { path: "link.txt" });
    expect(linked.isError).toBe(true);
    expect(linked.text).not.toContain("secret plan");

    const inside = await callTool(runner, "guest", "read", { path: "shared.txt" });
    expect(inside).toMatchObject({ isError: false });
    expect(inside.text).toContain("hello guest");

    // What the guest sent (its attachments) it may read too.
    const attachment = join(store.threadDir(threadId), "attachments", "1-photo.txt");
    mkdirSync(join(store.threadDir(threadId), "attachments"), { recursive: true });
    writeFileSync(attachment, "a sent file");
    const sent = await callTool(runner, "guest", "read", { path: attachment });
    expect(sent).toMatchObject({ isError: false });
    expect(sent.text).toContain("a sent file");

    // The owner's read of the same outside file works: the refusal is the guest's.
    const owner = await callTool(runner, "owner", "read", { path: outside });
    expect(owner).toMatchObject({ isError: false });
    expect(owner.text).toContain("secret plan");
  });

  it("refuses a guest a tool it was not given, even when the model calls it", async () => {
    const runner = runnerFor("telegram:100:100");
    const marker = join(f.t.home, "made-by-guest");
    const result = await callTool(runner, "guest", "bash", { command: `touch ${marker}` });
    expect(result.isError).toBe(true);
    expect(existsSync(marker)).toBe(false);
    // The owner's bash does run.
    const owner = await callTool(runner, "owner", "bash", { command: `touch ${marker}` });
    expect(owner.isError).toBe(false);
    expect(existsSync(marker)).toBe(true);
    expect(readFileSync(marker, "utf8")).toBe("");
  });
});
