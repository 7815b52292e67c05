// bench/split-message: the reply splitter on long Markdown (prose + code blocks), raw and with
// Telegram's MarkdownV2 measure (each part rendered to check the 4,096 limit after escaping).
// Needs a build (npm run build). Prints figures; never fails on a timing.
import { splitMessage } from "../packages/guppy/dist/channels/bridge/split-message.js";
import { renderTelegramMarkdown } from "../packages/guppy/dist/channels/telegram/telegram-format.js";

const code = Array.from(
  { length: 300 },
  (_, i) => `const x${i} = compute(${i}); // step ${i}`,
).join("\n");
const prose = Array.from(
  { length: 20 },
  (_, i) => `Paragraph ${i}: ${"some text, with punctuation. ".repeat(15)}`,
).join("\n\n");
const doc = [prose, `\`\`\`ts\n${code}\n\`\`\``, prose, `\`\`\`ts\n${code}\n\`\`\``].join("\n\n");

function time(label, fn, runs) {
  fn();
  const t0 = performance.now();
  let parts = 0;
  for (let i = 0; i < runs; i++) parts = fn().length;
  const ms = (performance.now() - t0) / runs;
  console.log(`${label}: ${ms.toFixed(2)} ms per split (${parts} parts)`);
}

console.log(`input: ${doc.length} chars of Markdown`);
time("raw, 4,096 limit", () => splitMessage(doc, 4096), 50);
time(
  "Telegram MarkdownV2 measure, 4,096 limit",
  () => splitMessage(doc, 4096, renderTelegramMarkdown),
  10,
);
time("Discord, 2,000 limit", () => splitMessage(doc, 2000), 50);
