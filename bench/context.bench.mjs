// bench/context: the context engine's cost and savings, with pi-ai's faux provider (no network).
//  1. Runtime overhead per turn (everything but the LLM call: assemble, count, repair, persist)
//     for histories of 10, 100, 1,000 and 5,000 messages; targets ≤ 5 ms at 1,000 messages and
//     ≤ 3× the 10-message figure at 5,000. Loading the thread (context.jsonl) is printed apart.
//  2. Token efficiency of the 60-turn session (3 prompts × 20 tool rounds of 5–50 KB outputs):
//     total input tokens sent vs sending the whole history every time, and the share of each
//     request that is an unchanged prefix of the previous one (cacheable; target ≥ 90% on turns
//     without a compaction).
//  Also: the time to count one 1 MB text without whitespace (a single run) and of 1 MB of words.
// Needs a build (npm run build). Prints figures; never fails on a timing.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAgentRunner, createStore } from "@guppy/core";
import { createTokenCounter } from "@guppy/core/context";
import {
  fauxAssistantMessage,
  fauxToolCall,
  registerFauxProvider,
  streamSimple,
} from "@mariozechner/pi-ai";
import { Type } from "typebox";
import { SUMMARY_SYSTEM_PROMPT } from "../packages/core/dist/context/summarise.js";
import { loadEncoder } from "../packages/core/dist/context/token-counter.js";

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const fmt = (n) => Math.round(n).toLocaleString("en-US");

const usage = {
  input: 10,
  output: 5,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 15,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];
const text = (chars, seed) => {
  let s = "";
  for (let i = 0; s.length < chars; i++) s += `${words[(i * 7 + seed) % 8]} ${i * 31} `;
  return s.slice(0, chars);
};

/** A stored history of `n` messages: user → assistant tool call → tool result → assistant answer. */
function history(n) {
  const out = [];
  for (let i = 0; out.length < n; i++) {
    const t = 1_000 + i;
    out.push({ role: "user", content: text(200, i), timestamp: t });
    out.push({
      role: "assistant",
      content: [
        { type: "toolCall", id: `c${i}`, name: "dump", arguments: { chars: 800, seed: i } },
      ],
      api: "faux",
      provider: "faux",
      model: "faux-bench",
      usage,
      stopReason: "toolUse",
      timestamp: t,
    });
    out.push({
      role: "toolResult",
      toolCallId: `c${i}`,
      toolName: "dump",
      content: [{ type: "text", text: text(800, i) }],
      isError: false,
      timestamp: t,
    });
    out.push({
      role: "assistant",
      content: [{ type: "text", text: text(300, i + 1) }],
      api: "faux",
      provider: "faux",
      model: "faux-bench",
      usage,
      stopReason: "stop",
      timestamp: t,
    });
  }
  return out.slice(0, n);
}

const dumpTool = {
  name: "dump",
  label: "dump",
  description: "prints a lot",
  parameters: Type.Object({ chars: Type.Integer(), seed: Type.Integer() }),
  async execute(_id, p) {
    return { content: [{ type: "text", text: text(p.chars, p.seed) }], details: {} };
  },
};

// 0. Tokenizer choice: gpt-tokenizer vs js-tiktoken (load time, large and small texts)
{
  const sample = Array.from(
    { length: 3_000 },
    (_, i) => `line ${i}: ${text(60, i)} /usr/lib/x86_64 {"a":${i}}`,
  ).join("\n");
  const candidates = [
    [
      "gpt-tokenizer cl100k_base",
      async () => {
        const m = await import("gpt-tokenizer/encoding/cl100k_base");
        return (s) => m.countTokens(s);
      },
    ],
    [
      "js-tiktoken cl100k_base",
      async () => {
        const { Tiktoken } = await import("js-tiktoken/lite");
        const ranks = (await import("js-tiktoken/ranks/cl100k_base")).default;
        const enc = new Tiktoken(ranks);
        return (s) => enc.encode(s).length;
      },
    ],
  ];
  console.log(`tokenizer choice (${fmt(sample.length)} chars of tool-like output):`);
  for (const [name, load] of candidates) {
    const t0 = performance.now();
    const count = await load();
    const loadMs = performance.now() - t0;
    count("warm up");
    const t1 = performance.now();
    let n = 0;
    for (let r = 0; r < 5; r++) n = count(sample);
    const bigMs = (performance.now() - t1) / 5;
    const t2 = performance.now();
    for (let r = 0; r < 2_000; r++) count(`message ${r}: hello, how are you today?`);
    const smallUs = ((performance.now() - t2) / 2_000) * 1000;
    console.log(
      `  ${name.padEnd(26)} load ${loadMs.toFixed(0)} ms, ${fmt(n)} tokens in ${bigMs.toFixed(1)} ms, ${smallUs.toFixed(1)} µs per short message`,
    );
  }
}

await loadEncoder();

// 0b. One long text: the time to count 1 MB without whitespace (one run, which the BPE merge —
// quadratic in a run's length — took minutes over before runs were counted in 128-character
// parts) beside 1 MB of ordinary words. First counts of fresh texts: a message's count is cached.
{
  const counter = createTokenCounter();
  let seed = 7;
  const letters = Array.from({ length: 1_000_000 }, () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return "abcdefghijklmnopqrstuvwxyz"[seed % 26];
  }).join("");
  console.log("counting one 1 MB text:");
  for (const [name, s] of [
    ["one letter 1,000,000 times", "y".repeat(1_000_000)],
    ["1,000,000 random letters", letters],
    ["1 MB of words and numbers", text(1_000_000, 3)],
  ]) {
    const t0 = performance.now();
    const n = counter.text(s);
    console.log(`  ${name.padEnd(27)} ${fmt(n)} tokens in ${fmt(performance.now() - t0)} ms`);
  }
}

// 1. Overhead per turn
console.log(
  "per-turn overhead (faux provider; LLM call excluded), median of 60 turns after 10 warm-up turns:",
);
const overhead = {};
for (const n of [10, 100, 1_000, 5_000]) {
  const faux = registerFauxProvider({
    models: [{ id: "faux-bench", contextWindow: 50_000_000, maxTokens: 1_000 }],
  });
  faux.setResponses(Array.from({ length: 100 }, () => fauxAssistantMessage("ok")));
  const home = mkdtempSync(join(tmpdir(), "guppy-bench-ctx-"));
  const store = createStore({ home });
  const threadId = "cli:local:bench";
  const messages = history(n);
  store.ensureThreadDir(threadId);
  writeFileSync(
    join(store.threadDir(threadId), "context.jsonl"),
    `${messages.map((m) => JSON.stringify(m)).join("\n")}\n`,
  );
  let llmMs = 0;
  const t0 = performance.now();
  const runner = createAgentRunner({
    threadId,
    store,
    model: faux.getModel(),
    apiKey: "faux",
    systemPrompt: "You are a bench.",
    tools: [dumpTool],
    maxToolRounds: 10,
    maxRetries: 0,
    baseStreamFn: (model, context, options) => {
      const s = performance.now();
      const stream = streamSimple(model, context, options);
      stream.result().then(() => {
        llmMs += performance.now() - s;
      });
      return stream;
    },
  });
  const loadMs = performance.now() - t0;
  const times = [];
  for (let i = 0; i < 70; i++) {
    llmMs = 0;
    const s = performance.now();
    await runner.prompt({ text: `turn ${i}` });
    const total = performance.now() - s;
    if (i >= 10) times.push(total - llmMs); // the first 10 warm up the JIT
  }
  overhead[n] = median(times);
  console.log(
    `  ${String(n).padStart(5)} messages: ${overhead[n].toFixed(2)} ms per turn (load of context.jsonl once: ${loadMs.toFixed(1)} ms)`,
  );
  faux.unregister();
  rmSync(home, { recursive: true, force: true });
}
console.log(
  `  target ≤ 5 ms at 1,000: ${overhead[1000].toFixed(2)} ms; 5,000 vs 10: ${(overhead[5000] / overhead[10]).toFixed(2)}× (target ≤ 3×)`,
);

// 2. Token efficiency of the 60-turn session
for (const { window, maxChars } of [
  { window: 8_000, maxChars: 3_000 },
  { window: 32_000, maxChars: 10_000 },
  { window: 200_000, maxChars: 10_000 },
]) {
  const faux = registerFauxProvider({
    models: [
      { id: "faux-60", contextWindow: window, maxTokens: Math.min(16_384, Math.floor(window / 4)) },
    ],
  });
  const requests = [];
  let turn = 0;
  let left = 0;
  const step = (context) => {
    const summary = context.systemPrompt === SUMMARY_SYSTEM_PROMPT;
    requests.push({ summary, context: JSON.parse(JSON.stringify(context)) });
    if (summary)
      return fauxAssistantMessage(
        `## Goal\n- dump rounds\n## Progress\n- ${turn} turns done\n## Open items\n- continue`,
      );
    turn++;
    if (left-- > 0)
      return fauxAssistantMessage(
        fauxToolCall("dump", { chars: 5_000 + ((turn * 7_919) % 45_001), seed: turn }),
        { stopReason: "toolUse" },
      );
    return fauxAssistantMessage(`done at ${turn}`);
  };
  faux.setResponses(Array.from({ length: 400 }, () => step));
  const home = mkdtempSync(join(tmpdir(), "guppy-bench-ctx-"));
  const store = createStore({ home });
  const runner = createAgentRunner({
    threadId: "cli:local:sixty",
    store,
    model: faux.getModel(),
    apiKey: "faux",
    systemPrompt: "You are a bench.",
    tools: [dumpTool],
    maxToolRounds: 100,
    maxRetries: 0,
    toolResultMaxChars: maxChars,
  });
  for (let i = 0; i < 3; i++) {
    left = 20;
    await runner.prompt({ text: `prompt ${i}: run the dump rounds` });
  }
  const counter = createTokenCounter();
  const key = (m) => JSON.stringify(m);
  const fixed = (c) => counter.system(c.systemPrompt ?? "") + counter.tools(c.tools ?? []);
  const tokensOf = (c) => fixed(c) + c.messages.reduce((n, m) => n + counter.message(m), 0);
  const seenAll = new Map();
  let sent = 0;
  let whole = 0;
  let summaryTokens = 0;
  const shares = [];
  let prefixTokens = 0;
  let extendedTokens = 0;
  let prev;
  let compactions = 0;
  for (const r of requests) {
    if (r.summary) {
      summaryTokens += tokensOf(r.context);
      continue;
    }
    const c = r.context;
    sent += tokensOf(c);
    for (const m of c.messages) {
      const k = key(m);
      if (!seenAll.has(k) && !(m.role === "user" && key(m).includes("[Summary of the earlier")))
        seenAll.set(k, counter.message(m));
    }
    let all = fixed(c);
    for (const t of seenAll.values()) all += t;
    whole += all;
    if (prev) {
      let same = 0;
      while (
        same < prev.messages.length &&
        same < c.messages.length &&
        key(prev.messages[same]) === key(c.messages[same])
      )
        same++;
      const extended = same === prev.messages.length && c.systemPrompt === prev.systemPrompt;
      if (extended) {
        let prefix = fixed(c);
        for (let i = 0; i < same; i++) prefix += counter.message(c.messages[i]);
        shares.push(prefix / tokensOf(c));
        prefixTokens += prefix;
        extendedTokens += tokensOf(c);
      } else compactions++;
    }
    prev = c;
  }
  const mains = requests.filter((r) => !r.summary).length;
  console.log(
    `60-turn session, window ${fmt(window)}, tool results cut at ${fmt(maxChars)} chars: ${mains} requests, ${requests.length - mains} summary requests, ${compactions} compacted turns`,
  );
  console.log(
    `  input tokens sent ${fmt(sent)} (+ ${fmt(summaryTokens)} in summary requests) vs whole history every time ${fmt(whole)}: ${(((sent + summaryTokens) / whole) * 100).toFixed(1)}%`,
  );
  console.log(
    `  cacheable prefix on turns without a compaction: ${((prefixTokens / extendedTokens) * 100).toFixed(1)}% of their input tokens (target ≥ 90%); per turn median ${(median(shares) * 100).toFixed(1)}%, min ${(Math.min(...shares) * 100).toFixed(1)}%, ${shares.filter((x) => x >= 0.9).length} of ${shares.length} turns ≥ 90%`,
  );
  const totals = runner.stats().totals;
  console.log(
    `  faux provider's own cache accounting: ${fmt(totals.cacheRead)} cache-read of ${fmt(totals.input + totals.cacheRead + totals.cacheWrite)} input tokens (${((totals.cacheRead / (totals.input + totals.cacheRead + totals.cacheWrite)) * 100).toFixed(1)}%)`,
  );
  faux.unregister();
  rmSync(home, { recursive: true, force: true });
}
