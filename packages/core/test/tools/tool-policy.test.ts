import { describe, expect, it } from "vitest";
import { isConfigError } from "../../src/config/config-error.js";
import { loadConfig } from "../../src/settings.js";
import {
  builtinToolNames,
  type ToolPolicySettings,
  toolNamesFor,
  toolPolicyChannelProblem,
  toolPolicyValue,
} from "../../src/tools/tool-policy.js";
import { tempHome } from "../helpers/temp-home.js";

const all = [...builtinToolNames];

describe("tool policy: each role's tools per channel", () => {
  it("gives an owner every tool and a guest only read and search_channel by default", () => {
    expect(toolNamesFor(undefined, "telegram", "owner", all)).toEqual([
      "bash",
      "read",
      "write",
      "edit",
      "upload",
      "web_search",
      "read_url",
      "search_channel",
      "schedule",
      "send_message",
      "spawn",
      "subagent",
    ]);
    expect(toolNamesFor(undefined, "telegram", "guest", all)).toEqual(["read", "search_channel"]);
    // Only what the thread can have at all: no upload where the channel takes no files.
    expect(toolNamesFor(undefined, "cli", "owner", ["bash", "read", "write", "edit"])).toEqual([
      "bash",
      "read",
      "write",
      "edit",
    ]);
  });

  it("lets an allow list replace the role's default set, on its channel only", () => {
    const policy: ToolPolicySettings = {
      telegram: { guest: { allow: ["read", "write"] }, owner: { allow: ["read"] } },
    };
    expect(toolNamesFor(policy, "telegram", "guest", all)).toEqual(["read", "write"]);
    expect(toolNamesFor(policy, "telegram", "owner", all)).toEqual(["read"]);
    expect(toolNamesFor(policy, "slack", "guest", all)).toEqual(["read", "search_channel"]);
    expect(toolNamesFor(policy, "slack", "owner", all)).toEqual(all);
    // An allowed tool the thread cannot have is still absent.
    expect(
      toolNamesFor({ cli: { guest: { allow: ["upload", "read"] } } }, "cli", "guest", ["read"]),
    ).toEqual(["read"]);
  });

  it("lets deny remove from the default set, and win over allow", () => {
    expect(toolNamesFor({ http: { owner: { deny: ["bash"] } } }, "http", "owner", all)).toEqual([
      "read",
      "write",
      "edit",
      "upload",
      "web_search",
      "read_url",
      "search_channel",
      "schedule",
      "send_message",
      "spawn",
      "subagent",
    ]);
    const both: ToolPolicySettings = {
      http: { guest: { allow: ["read", "bash"], deny: ["bash"] } },
    };
    expect(toolNamesFor(both, "http", "guest", all)).toEqual(["read"]);
    expect(
      toolNamesFor({ http: { guest: { deny: ["read", "search_channel"] } } }, "http", "guest", all),
    ).toEqual([]);
  });
});

describe("the tools setting in settings.json", () => {
  const load = (tools: unknown) => {
    const t = tempHome();
    try {
      t.write("settings.json", JSON.stringify({ tools }));
      return loadConfig({ env: {}, home: t.home });
    } finally {
      t.cleanup();
    }
  };
  const failure = (tools: unknown): string => {
    try {
      load(tools);
    } catch (error) {
      expect(isConfigError(error)).toBe(true);
      const message = (error as Error).message;
      expect(message).not.toContain("\n");
      return message;
    }
    throw new Error("no error");
  };

  it("is read from settings.json (and from nowhere else)", () => {
    const config = load({ telegram: { guest: { allow: ["read"] }, owner: { deny: ["bash"] } } });
    expect(config.tools).toEqual({
      telegram: { guest: { allow: ["read"] }, owner: { deny: ["bash"] } },
    });
    expect(config.sources.tools).toBe("settings");
    expect(config.warnings).toEqual([]);
    // No variable or flag: a GUPPY_TOOLS or a tools flag is not read.
    const t = tempHome();
    try {
      const bare = loadConfig({
        env: { GUPPY_TOOLS: '{"cli":{}}' },
        flags: { tools: '{"cli":{}}' },
        home: t.home,
      });
      expect(bare.tools).toBeUndefined();
    } finally {
      t.cleanup();
    }
  });

  it("refuses an unknown tool with a did-you-mean, naming where it is", () => {
    expect(failure({ telegram: { guest: { allow: ["bsh"] } } })).toMatch(
      /^Invalid setting in \S+settings\.json: tools\.telegram\.guest\.allow: unknown tool "bsh" — did you mean "bash"\? \(tools: bash, read, write, edit, upload, web_search, read_url, search_channel, schedule, send_message, spawn, subagent\)$/,
    );
    expect(failure({ cli: { owner: { deny: ["rm"] } } })).toContain(
      'tools.cli.owner.deny: unknown tool "rm" (tools:',
    );
    // An MCP-style name needs a configured server with that prefix; none is configured yet.
    expect(failure({ cli: { owner: { deny: ["github__create_issue"] } } })).toContain(
      'unknown tool "github__create_issue"',
    );
  });

  it("takes an MCP tool's full name when settings.json configures its server", () => {
    const t = tempHome();
    try {
      t.write(
        "settings.json",
        JSON.stringify({
          mcpServers: { github: { command: "gh-mcp" } },
          tools: { cli: { owner: { deny: ["github__create_issue"] } } },
        }),
      );
      expect(loadConfig({ env: {}, home: t.home }).tools).toEqual({
        cli: { owner: { deny: ["github__create_issue"] } },
      });
      t.write(
        "settings.json",
        JSON.stringify({
          mcpServers: { github: { command: "gh-mcp" } },
          tools: { cli: { owner: { deny: ["gitlab__create_issue"] } } },
        }),
      );
      expect(() => loadConfig({ env: {}, home: t.home })).toThrow(
        /unknown tool "gitlab__create_issue".*github__\*/,
      );
    } finally {
      t.cleanup();
    }
  });

  it("refuses an unknown role or rule key with a did-you-mean, and a wrong shape", () => {
    expect(failure({ telegram: { gust: { allow: ["read"] } } })).toContain(
      'tools.telegram: unknown role "gust" — did you mean "guest"? (roles: owner, guest)',
    );
    expect(failure({ telegram: { guest: { alow: ["read"] } } })).toContain(
      'tools.telegram.guest: unknown key "alow" — did you mean "allow"?',
    );
    expect(failure({ telegram: { guest: { allow: "read" } } })).toContain(
      'tools.telegram.guest.allow: expected a list of tool names, like ["read"].',
    );
    expect(failure({ telegram: ["read"] })).toContain(
      "tools.telegram: expected an object of roles",
    );
    expect(failure(["read"])).toContain("tools: expected an object of channels");
  });

  it("accepts a tool under a configured MCP server's prefix", () => {
    const parse = toolPolicyValue(["github"]);
    expect(parse({ cli: { guest: { allow: ["github__search"] } } })).toEqual({
      ok: true,
      value: { cli: { guest: { allow: ["github__search"] } } },
    });
    expect(parse({ cli: { guest: { allow: ["gitlab__search"] } } })).toMatchObject({ ok: false });
    expect(parse({ cli: { guest: { allow: ["github__"] } } })).toMatchObject({ ok: false });
  });

  it("checks channel names against the channels an app has", () => {
    const channels = ["cli", "http", "telegram"];
    expect(toolPolicyChannelProblem({ telegram: {}, cli: {} }, channels)).toBeUndefined();
    expect(toolPolicyChannelProblem(undefined, channels)).toBeUndefined();
    expect(toolPolicyChannelProblem({ telegarm: {} }, channels)).toBe(
      'tools.telegarm: unknown channel "telegarm" — did you mean "telegram"? (channels: cli, http, telegram)',
    );
  });
});
