import type { ChatCompletionRequest } from "@copilotkit/aimock";
import { afterEach, describe, expect, it } from "vitest";
import { tempHome } from "../helpers/run-cli.js";
import {
  type AsyncMockLlm,
  contentText,
  type ServeProcess,
  startAsyncMockLlm,
  startServe,
} from "../serve/serve-harness.js";
import { type FakeBotApi, startFakeBotApi } from "./helpers/fake-bot-api.js";
import { until } from "./helpers/until.js";

const ANN = { id: 1001, name: "ann" };
const BOB = { id: 1002, name: "bob" };

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A 1×1 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

/** The first line of the last user message: what a prompt said. */
function promptOf(request: ChatCompletionRequest): string {
  const last = [...request.messages].reverse().find((m) => m.role === "user");
  return contentText(last?.content).split("\n")[0] ?? "";
}

/**
 * guppy serve killed with SIGKILL while Telegram updates are on their way in, then started again
 * on the same home against the same Bot API (which sends again what was not confirmed): every
 * message is answered, once.
 */
describe("Telegram intake through guppy serve, killed with SIGKILL", () => {
  let api: FakeBotApi;
  let llm: AsyncMockLlm;
  let serve: ServeProcess | undefined;
  let cleanup = () => {};
  /** While closed, the model's answers wait: nothing is answered before the kill. */
  let gate: Promise<void> = Promise.resolve();
  let open = () => {};

  afterEach(async () => {
    open();
    serve?.child.kill("SIGKILL");
    await serve?.exited;
    serve = undefined;
    await api?.stop();
    await llm?.stop();
    cleanup();
  });

  async function start(): Promise<{ home: string; env: Record<string, string> }> {
    api = await startFakeBotApi();
    llm = await startAsyncMockLlm(async (request) => {
      await gate;
      return { content: `ECHO ${promptOf(request)}` };
    });
    const temp = tempHome();
    cleanup = temp.cleanup;
    const env = {
      ...llm.env(),
      TELEGRAM_BOT_TOKEN: api.token,
      GUPPY_TELEGRAM_API_URL: api.apiUrl,
      GUPPY_ACCESS_POLICY: "open",
    };
    serve = await startServe(temp.home, env);
    api.say(ANN, "warm up");
    await until("the first answer", () => api.texts(ANN.id).includes("ECHO warm up"));
    gate = new Promise((resolve) => {
      open = resolve;
    });
    return { home: temp.home, env };
  }

  const kill = () => serve?.child.kill("SIGKILL");

  /** Starts guppy serve again once the killed one is gone; the model answers at once. */
  async function restart(home: string, env: Record<string, string>) {
    await serve?.exited;
    open();
    serve = await startServe(home, env);
  }

  /**
   * Every expected answer, each exactly once; each chat's prompts first run in the order sent (a
   * run the kill cut short runs again); nothing left with Telegram.
   */
  async function answeredOnce(expected: Map<number, string[]>) {
    await until(
      "every answer",
      () =>
        [...expected].every(([chat, texts]) =>
          texts.every((text) => api.texts(chat).includes(`ECHO ${text}`)),
        ),
      20_000,
    );
    await pause(800);
    const asked = [...new Set(llm.requests.map(promptOf))];
    for (const [chat, texts] of expected) {
      const answers = api.texts(chat).filter((t) => t.startsWith("ECHO"));
      expect(answers.sort()).toEqual(texts.map((text) => `ECHO ${text}`).sort());
      expect(asked.filter((p) => texts.includes(p))).toEqual(texts);
    }
    await until("everything confirmed", () => api.unconfirmed().length === 0);
  }

  it.each([
    ["as its parts are fetched", 0],
    ["while its parts are combined", 400],
    ["once it is in the inbox", 1500],
  ])("loses no album and answers nothing twice when killed %s", async (_, delay) => {
    const { home, env } = await start();
    api.onDeliver = (updates) => {
      if (!updates.some((u) => (u.message as { media_group_id?: string })?.media_group_id)) return;
      api.onDeliver = undefined;
      if (delay === 0) kill();
      else setTimeout(kill, delay);
    };
    for (const i of [0, 1]) {
      api.files.set(`P${i}`, PNG);
      api.sayRaw(ANN, {
        media_group_id: "album-1",
        photo: [{ file_id: `P${i}`, file_unique_id: `u${i}`, width: 1, height: 1 }],
        ...(i === 0 ? { caption: "what is in these photos?" } : {}),
      });
    }
    api.say(ANN, "and which one is sharper?");
    api.say(BOB, "hi from bob");
    await restart(home, env);
    await answeredOnce(
      new Map([
        [ANN.id, ["warm up", "what is in these photos?", "and which one is sharper?"]],
        [BOB.id, ["hi from bob"]],
      ]),
    );
  });

  it("loses nothing of a burst and answers nothing twice when killed at its first confirmation", async () => {
    const { home, env } = await start();
    // The warm-up was confirmed before its answer came: this is the burst's first.
    api.onConfirm = () => {
      api.onConfirm = undefined;
      kill();
    };
    const texts = { ann: [] as string[], bob: [] as string[] };
    for (let i = 0; i < 6; i++) {
      texts.ann.push(`ann ${i}`);
      api.say(ANN, `ann ${i}`);
      if (i % 2 === 0) {
        texts.bob.push(`bob ${i}`);
        api.say(BOB, `bob ${i}`);
      }
      await pause(30);
    }
    await restart(home, env);
    await answeredOnce(
      new Map([
        [ANN.id, ["warm up", ...texts.ann]],
        [BOB.id, texts.bob],
      ]),
    );
  });
});
