import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type ChatCompletionRequest, type FixtureResponse, LLMock } from "@copilotkit/aimock";
import { withoutTimeStamps } from "../helpers/mock-llm.js";
import { cleanEnv, guppyBin } from "../helpers/run-cli.js";

/** An aimock LLM whose answers may be async (delays, gates). */
export interface AsyncMockLlm {
  url: string;
  /** Requests as scripts see them: user messages without guppy's time stamp. */
  requests: ChatCompletionRequest[];
  /** The same requests as sent, stamps included. */
  rawRequests: ChatCompletionRequest[];
  env(): Record<string, string>;
  stop(): Promise<void>;
}

export async function startAsyncMockLlm(
  respond: (request: ChatCompletionRequest) => FixtureResponse | Promise<FixtureResponse>,
): Promise<AsyncMockLlm> {
  const mock = new LLMock({ port: 0, host: "127.0.0.1" });
  const requests: ChatCompletionRequest[] = [];
  const rawRequests: ChatCompletionRequest[] = [];
  mock.on({ predicate: () => true }, async (request) => {
    rawRequests.push(structuredClone(request));
    const plain = withoutTimeStamps(request);
    requests.push(plain);
    return respond(plain);
  });
  const url = await mock.start();
  return {
    url,
    requests,
    rawRequests,
    env: () => ({
      GUPPY_MODEL: "openai/mock-gpt",
      GUPPY_BASE_URL: `${url}/v1`,
      GUPPY_API: "openai-completions",
      GUPPY_API_KEY: "test-key",
      GUPPY_MAX_RETRIES: "0",
    }),
    stop: () => mock.stop(),
  };
}

/** Text of a message as aimock normalised it. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((p) => (p && typeof p === "object" && "text" in p ? String(p.text) : ""))
      .join("");
  return "";
}

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  token: string;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  /** Authorised fetch against the API. */
  api(path: string, init?: RequestInit): Promise<Response>;
}

/**
 * Starts `guppy serve` on 127.0.0.1:0 and resolves once the HTTP API listens. `prefix`: a
 * command it runs under (as `prlimit --nofile=300:300`).
 */
export function startServe(
  home: string,
  env: Record<string, string>,
  options: { prefix?: string[] } = {},
): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    const [command, ...args] = [...(options.prefix ?? []), process.execPath, guppyBin, "serve"];
    const child = spawn(command as string, args, {
      env: cleanEnv({ GUPPY_HOME: home, GUPPY_HTTP_PORT: "0", ...env }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let settled = false;
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      child.kill("SIGKILL");
      reject(new Error(`guppy serve did not start\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, 45_000);
    child.stderr?.on("data", (d) => {
      stderr += d;
    });
    child.stdout?.on("data", (d) => {
      stdout += d;
      const m = /HTTP API listening on (http:\/\/\S+)/.exec(stdout);
      if (m?.[1] && !settled && /guppy serve ready/.test(stdout)) {
        settled = true;
        clearTimeout(timer);
        const url = m[1];
        const token = readFileSync(join(home, "api-token"), "utf8").trim();
        resolve({
          child,
          url,
          token,
          stdout: () => stdout,
          stderr: () => stderr,
          exited,
          api: authorizedFetch(url, token),
        });
      }
    });
    child.on("exit", (code) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error(`guppy serve exited with ${code}\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

/** A fetch against the API at `url` with its bearer token and a JSON content type. */
export function authorizedFetch(
  url: string,
  token: string,
): (path: string, init?: RequestInit) => Promise<Response> {
  return (path, init = {}) =>
    fetch(`${url}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        ...(init.headers as Record<string, string> | undefined),
      },
    });
}

/** Sends `signal` to each still-running process of `running` (emptied) and waits for its exit. */
export async function stopServes(
  running: ServeProcess[],
  signal: NodeJS.Signals = "SIGKILL",
): Promise<void> {
  for (const s of running.splice(0)) {
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill(signal);
      await s.exited;
    }
  }
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  ms = 10_000,
  what = "condition",
): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface LogMessage {
  id: string;
  is_bot: boolean;
  text: string;
}

export async function threadMessages(
  serve: Pick<ServeProcess, "api">,
  threadId: string,
): Promise<LogMessage[]> {
  const r = await serve.api(`/v1/threads/${encodeURIComponent(threadId)}/messages`);
  if (r.status === 404) return [];
  const body = (await r.json()) as { messages: LogMessage[] };
  return body.messages;
}

/** Reads an SSE response's events until `until` says stop. */
export async function readSse(
  response: Response,
  until: (event: string, data: Record<string, unknown>) => boolean,
): Promise<Array<{ event: string; data: Record<string, unknown> }>> {
  const out: Array<{ event: string; data: Record<string, unknown> }> = [];
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return out;
    buffer += decoder.decode(value, { stream: true });
    let index = buffer.indexOf("\n\n");
    while (index !== -1) {
      const block = buffer.slice(0, index);
      buffer = buffer.slice(index + 2);
      index = buffer.indexOf("\n\n");
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (data === undefined) continue;
      const parsed = JSON.parse(data) as Record<string, unknown>;
      out.push({ event, data: parsed });
      if (until(event, parsed)) {
        await reader.cancel();
        return out;
      }
    }
  }
}
