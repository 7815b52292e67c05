import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockLlm, startMockLlm } from "../helpers/mock-llm.js";
import { cleanEnv, runCli, tempHome } from "../helpers/run-cli.js";

/** The `tools` setting through the CLI: what `guppy config` prints, what a bad one does, what the model is offered. */
describe("the tools setting", () => {
  let llm: MockLlm;
  const home = tempHome();
  const settings = (tools: unknown) =>
    writeFileSync(
      join(home.home, "settings.json"),
      `{\n  // who gets which tools\n  "tools": ${JSON.stringify(tools)}\n}\n`,
    );
  const env = () => cleanEnv({ ...llm.env("openai-completions"), GUPPY_HOME: home.home });

  beforeAll(async () => {
    llm = await startMockLlm(() => ({ content: "ok" }));
  });
  afterAll(async () => {
    await llm.stop();
    home.cleanup();
  });

  it("guppy config prints the effective tool set of every channel and role", async () => {
    settings({ telegram: { guest: { allow: ["read"] }, owner: { deny: ["bash"] } } });
    const r = await runCli(["config"], { env: env() });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n").filter((line) => /^tools \S+ (owner|guest): /.test(line));
    expect(lines).toEqual([
      "tools cli owner: bash, read, write, edit, web_search, read_url, search_channel, schedule, send_message, spawn, subagent",
      "tools cli guest: read, search_channel",
      "tools http owner: bash, read, write, edit, upload, web_search, read_url, search_channel, schedule, send_message, spawn, subagent",
      "tools http guest: read, search_channel",
      "tools telegram owner: read, write, edit, upload, web_search, read_url, search_channel, schedule, send_message, spawn, subagent",
      "tools telegram guest: read",
      "tools slack owner: bash, read, write, edit, upload, web_search, read_url, search_channel, schedule, send_message, spawn, subagent",
      "tools slack guest: read, search_channel",
      "tools discord owner: bash, read, write, edit, upload, web_search, read_url, search_channel, schedule, send_message, spawn, subagent",
      "tools discord guest: read, search_channel",
    ]);
    // The setting's own row: no variable, the value as JSON, from settings.json.
    expect(r.stdout).toMatch(
      /^tools +\(settings\.json\) +\{"telegram":\{"guest":\{"allow":\["read"\]\},"owner":\{"deny":\["bash"\]\}\}\} +\(settings\)$/m,
    );
  });

  it.each([
    [
      { telegram: { guest: { allow: ["bsh"] } } },
      'tools.telegram.guest.allow: unknown tool "bsh" — did you mean "bash"? (tools: bash, read, write, edit, upload, web_search, read_url, search_channel, schedule, send_message, spawn, subagent)',
    ],
    [
      { telegarm: { guest: { allow: ["read"] } } },
      'tools.telegarm: unknown channel "telegarm" — did you mean "telegram"? (channels: cli, http, telegram, slack, discord)',
    ],
    [
      { cli: { gust: { deny: ["bash"] } } },
      'tools.cli: unknown role "gust" — did you mean "guest"? (roles: owner, guest)',
    ],
  ])(
    "a bad tools setting %j stops guppy chat -m with one line, before any request",
    async (tools, problem) => {
      settings(tools);
      const before = llm.requests().length;
      const r = await runCli(["chat", "-m", "hi"], { env: env() });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(
        `guppy: Invalid setting in ${join(home.home, "settings.json")}: ${problem}\n`,
      );
      expect(llm.requests().length).toBe(before);
    },
  );

  it("offers the terminal's owner bash unless the cli rule denies it", async () => {
    const offered = async () => {
      const before = llm.requests().length;
      const r = await runCli(["chat", "-m", "hi"], { env: env() });
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe("ok\n");
      const request = llm.requests()[before];
      return (request?.tools ?? []).map((tool) => tool.function.name);
    };
    settings({});
    // guppy chat wires the messaging, subagent and event services (`schedule` writes event files
    // a gateway fires) and the history search (`search_channel`: the terminal's logs).
    expect(await offered()).toEqual([
      "bash",
      "read",
      "write",
      "edit",
      "read_url",
      "search_channel",
      "schedule",
      "send_message",
      "spawn",
      "subagent",
    ]);
    settings({ cli: { owner: { deny: ["bash", "edit", "spawn"] } } });
    expect(await offered()).toEqual([
      "read",
      "write",
      "read_url",
      "search_channel",
      "schedule",
      "send_message",
      "subagent",
    ]);
  });
});
