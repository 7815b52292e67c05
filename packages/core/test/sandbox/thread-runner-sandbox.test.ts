import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type FauxProviderRegistration,
  fauxAssistantMessage,
  fauxToolCall,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createThreadRunner } from "../../src/runner/create-thread-runner.js";
import type { SandboxConfig } from "../../src/sandbox/types.js";
import { loadConfig } from "../../src/settings.js";
import { createStore } from "../../src/store/create-store.js";
import { tempHome } from "../helpers/temp-home.js";
import { standIn } from "./docker-stand-in.js";

const bwrapWorks =
  spawnSync("bwrap", ["--ro-bind", "/", "/", "--unshare-pid", "true"], { stdio: "ignore" })
    .status === 0;

const THREAD = "telegram:42:default";

// createThreadRunner builds the thread's sandbox and the owner tools' path policy from
// `sandboxConfig`: what the model is sent back is what the sandbox lets the tools see.
describe("a thread runner's sandbox (faux provider)", () => {
  let t: ReturnType<typeof tempHome>;
  let faux: FauxProviderRegistration;
  let outside: string;
  beforeEach(() => {
    t = tempHome();
    outside = mkdtempSync(join(tmpdir(), "guppy-outside-"));
    faux = registerFauxProvider({
      models: [{ id: "faux-1", contextWindow: 100_000, maxTokens: 1000 }],
    });
  });
  afterEach(() => {
    faux.unregister();
    t.cleanup();
    rmSync(outside, { recursive: true, force: true });
  });

  function runner(config: SandboxConfig, home: string) {
    return createThreadRunner({
      threadId: THREAD,
      config: loadConfig({ env: { GUPPY_TIMEZONE: "UTC" }, home }),
      resolved: {
        ref: "faux/faux-1",
        model: faux.getModel(),
        apiKey: "faux",
        maxTokens: 1000,
        custom: false,
      },
      store: createStore({ home }),
      sandboxConfig: config,
    });
  }

  it.runIf(bwrapWorks)(
    "under bubblewrap, neither bash nor read gets a file outside the thread's view to the model",
    async () => {
      const secret = join(outside, "secret.txt");
      writeFileSync(secret, "OUTSIDE-SECRET-42");
      writeFileSync(join(t.home, "settings.json"), '{"timezone": "UTC"}');
      const seen: string[] = [];
      faux.setResponses([
        () =>
          fauxAssistantMessage(
            [
              fauxToolCall("bash", { command: `cat ${secret}; cat ${t.home}/settings.json` }),
              fauxToolCall("read", { path: secret }),
              fauxToolCall("bash", { command: "echo kept > note.txt" }),
            ],
            { stopReason: "toolUse" },
          ),
        (context) => {
          seen.push(JSON.stringify(context.messages));
          return fauxAssistantMessage("done");
        },
      ]);
      const r = runner({ type: "bwrap", mounts: [], network: true }, t.home);
      expect((await r.prompt({ text: "go" })).text).toBe("done");
      expect(seen[0]).not.toContain("OUTSIDE-SECRET-42");
      expect(seen[0]).not.toContain('\\"timezone\\"');
      expect(seen[0]).toContain("No such file or directory");
      expect(seen[0]).toContain("is outside what this thread's sandbox can see");
      const workspace = join(t.home, "telegram", "42", "default", "scratch");
      expect(readFileSync(join(workspace, "note.txt"), "utf8")).toBe("kept\n");
    },
  );

  it("under docker, the prompt and the tools speak /workspace paths", async () => {
    const fx = standIn();
    const path = process.env.PATH;
    process.env.PATH = fx.env.PATH;
    process.env.DOCKER_LOG = fx.env.DOCKER_LOG;
    process.env.DOCKER_WORKSPACE_HOST = fx.home;
    try {
      const agentWorkspace = "/workspace/telegram/42/default/scratch";
      const prompts: string[] = [];
      const seen: string[] = [];
      faux.setResponses([
        (context) => {
          prompts.push(context.systemPrompt ?? "");
          return fauxAssistantMessage(
            [
              fauxToolCall("write", { path: `${agentWorkspace}/a.txt`, content: "hi" }),
              fauxToolCall("bash", { command: "cat a.txt" }),
            ],
            { stopReason: "toolUse" },
          );
        },
        (context) => {
          // What a provider is sent of a tool result: its content (details stay in guppy).
          const results = context.messages.flatMap((m) =>
            m.role === "toolResult" ? m.content.map((c) => (c.type === "text" ? c.text : "")) : [],
          );
          seen.push(results.join("\n"));
          return fauxAssistantMessage("done");
        },
      ]);
      const r = runner({ type: "docker", container: "guppy-box" }, fx.home);
      expect((await r.prompt({ text: "go" })).text).toBe("done");
      expect(prompts[0]).toContain(agentWorkspace);
      expect(prompts[0]).not.toContain(fx.home);
      expect(seen[0]).toContain(`Wrote 2 bytes to ${agentWorkspace}/a.txt.`);
      expect(seen[0]).not.toContain(fx.home);
      expect(readFileSync(join(fx.workspace, "a.txt"), "utf8")).toBe("hi");
      const exec = fx.calls().find((c) => c.at(-1) === "cat a.txt");
      expect(exec?.slice(0, 3)).toEqual(["exec", "-w", agentWorkspace]);
    } finally {
      process.env.PATH = path;
      delete process.env.DOCKER_LOG;
      delete process.env.DOCKER_WORKSPACE_HOST;
      rmSync(fx.root, { recursive: true, force: true });
    }
  });
});
