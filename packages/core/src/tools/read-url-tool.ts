import type { AgentTool } from "@mariozechner/pi-agent-core";
import { type Static, Type } from "typebox";
import type { Redactor } from "../logging/redact.js";
import { type FetchLimits, fetchPage } from "../web/fetch-page.js";
import { pageToText, warmPageToText } from "../web/page-to-text.js";
import type { SsrfPolicy } from "../web/ssrf-guard.js";
import { untrustedContent } from "../web/untrusted-content.js";
import { spillOutput } from "./spill-output.js";
import { textResult } from "./tool-context.js";

const parameters = Type.Object({
  url: Type.String({ description: "http or https URL" }),
  max_chars: Type.Optional(
    Type.Integer({
      minimum: 1000,
      description: "Most chars returned (default 50000); the rest is saved to a file you can read",
    }),
  ),
});

type Params = Static<typeof parameters>;

/** read_url's limits: the 30 s, 5 MB, 5 redirects and 50,000 chars. */
export const readUrlDefaults = {
  timeoutMs: 30_000,
  maxBytes: 5 * 1024 * 1024,
  maxRedirects: 5,
  maxChars: 50_000,
} as const;

export interface ReadUrlDetails {
  /** Where the text came from, after redirects. */
  url: string;
  status: number;
  contentType: string;
  kind: "html" | "pdf" | "text";
  /** The download went past the byte cap and was cut there. */
  truncated: boolean;
  /** The whole text, saved when it was longer than max_chars. */
  fullOutputPath?: string;
}

export interface ReadUrlToolOptions {
  /** fetchAllowPrivate / fetchAllowHosts, and (tests) a resolver. */
  policy: SsrfPolicy;
  /** Where a text longer than max_chars is saved (the thread's artifacts/). */
  artifactsDir: () => string;
  redactor?: Redactor;
  /** The timeout, byte cap and redirect limit (default readUrlDefaults; tests shorten them). */
  limits?: Partial<FetchLimits>;
}

/**
 * `read_url`: a web page as Markdown, or a text, JSON or PDF document as text, inside an
 * untrusted-content block naming its URL. Fetched under the SSRF guard (ssrf-guard.ts) within
 * 30 s, 5 MB and 5 redirects. It cuts its own text at max_chars (saving the rest like a long
 * output), so the tool-result hook leaves it alone (spill-output.ts).
 */
export function createReadUrlTool(
  options: ReadUrlToolOptions,
): AgentTool<typeof parameters, ReadUrlDetails> {
  const limits: FetchLimits = {
    timeoutMs: options.limits?.timeoutMs ?? readUrlDefaults.timeoutMs,
    maxBytes: options.limits?.maxBytes ?? readUrlDefaults.maxBytes,
    maxRedirects: options.limits?.maxRedirects ?? readUrlDefaults.maxRedirects,
  };
  return {
    name: "read_url",
    label: "read_url",
    description:
      "Read a web page (as Markdown: the article, its title first, links kept), a text or JSON file, or a PDF's text, from an http(s) URL. Private and local network addresses are refused unless the owner allows them.",
    parameters,
    async execute(_id, params: Params, signal) {
      warmPageToText();
      const page = await fetchPage(params.url.trim(), options.policy, limits, signal);
      if (page.status >= 400) {
        throw new Error(`read_url: ${page.url} answered HTTP ${page.status}.`);
      }
      const content = await pageToText(page, signal ? { signal } : {});
      const notes: string[] = [];
      if (page.url !== page.requested) notes.push(`Redirected from ${page.requested}.`);
      if (page.truncated) {
        const of = page.announcedBytes ? ` of ${page.announcedBytes} bytes` : "";
        notes.push(
          `The download stopped at the ${formatBytes(limits.maxBytes)} cap${of}: the text above is from its first ${formatBytes(limits.maxBytes)} only.`,
        );
      }
      if (content.text.trim() === "") notes.push("The page has no readable text.");
      const block = untrustedContent(page.url, content.text);
      const maxChars = params.max_chars ?? readUrlDefaults.maxChars;
      const spilled = spillOutput({
        text: block,
        maxChars,
        dir: options.artifactsDir,
        label: "read_url",
        ...(options.redactor ? { redactor: options.redactor } : {}),
      });
      const text = notes.length > 0 ? `${spilled.text}\n\n${notes.join("\n")}` : spilled.text;
      return textResult(text, {
        url: page.url,
        status: page.status,
        contentType: page.contentType,
        kind: content.kind,
        truncated: page.truncated,
        ...(spilled.path ? { fullOutputPath: spilled.path } : {}),
      });
    },
  };
}

function formatBytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return Number.isInteger(mb) ? `${mb} MB` : `${bytes} bytes`;
}
