import type { FetchedPage } from "./fetch-page.js";
import { type HtmlConverter, sharedHtmlConverter } from "./html-worker-client.js";
import type { PageText } from "./types.js";

export { htmlToMarkdown } from "./html-to-markdown.js";
export type { PageText } from "./types.js";

// A fetched body as text for the model: HTML as Markdown (the article only: Readability drops
// navigation, scripts and ad blocks; dom-to-markdown.ts writes what is left; a worker thread does
// it, html-worker-client.ts), text and JSON as they are,
// PDF as its extracted text. The libraries load on first use: most runs never read a page.

/** Thrown for a body read_url does not turn into text (an image, a zip): names its type. */
export class UnsupportedContent extends Error {
  override name = "UnsupportedContent";
}

/** How a Content-Type (or, without one, the body's first bytes) says to read the body. */
function kindOf(mime: string, body: Buffer): PageText["kind"] | undefined {
  if (mime === "text/html" || mime === "application/xhtml+xml") return "html";
  if (mime === "application/pdf" || mime === "application/x-pdf") return "pdf";
  if (mime.startsWith("text/")) return "text";
  if (mime === "application/json" || mime.endsWith("+json")) return "text";
  if (mime === "application/xml" || mime.endsWith("+xml")) return "text";
  if (mime === "application/javascript" || mime === "application/x-ndjson") return "text";
  if (mime === "" || mime === "application/octet-stream") {
    const head = body.subarray(0, 1024);
    if (head.subarray(0, 5).toString("latin1") === "%PDF-") return "pdf";
    if (head.includes(0)) return undefined;
    return /<(!doctype html|html|head|body)\b/i.test(head.toString("latin1")) ? "html" : "text";
  }
  return undefined;
}

export interface PageToTextOptions {
  /** Ends an HTML conversion under way (the run's abort). */
  signal?: AbortSignal;
  /** Converts HTML (default: the process's worker, html-worker-client.ts). */
  converter?: HtmlConverter;
}

/** Gets the HTML converter's worker started while a page downloads (the first page's wait). */
export function warmPageToText(): void {
  sharedHtmlConverter().warm();
}

/** The body of `page` as text; throws UnsupportedContent for a type it does not read. */
export async function pageToText(
  page: FetchedPage,
  options: PageToTextOptions = {},
): Promise<PageText> {
  const [mimePart = "", ...params] = page.contentType.split(";");
  const mime = mimePart.trim().toLowerCase();
  const kind = kindOf(mime, page.body);
  if (!kind) {
    throw new UnsupportedContent(
      `read_url reads web pages, text, JSON and PDF; ${page.url} is ${mime || "binary data without a content type"}.`,
    );
  }
  if (kind === "pdf") {
    if (page.truncated) {
      throw new UnsupportedContent(
        `read_url: the PDF at ${page.url} is larger than the download cap, and a PDF cut short cannot be read.`,
      );
    }
    return pdfToText(page.body);
  }
  const charset = params
    .map((p) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(p)?.[1])
    .find((c) => c !== undefined);
  const html = kind === "html";
  const text = decode(page.body, charset ?? (html ? metaCharset(page.body) : undefined));
  if (!html) return { kind, text };
  return (options.converter ?? sharedHtmlConverter()).convert(text, page.url, options.signal);
}

/** The bytes decoded by `charset` (a label TextDecoder knows), else by a BOM, else as UTF-8. */
export function decode(bytes: Uint8Array, charset?: string): string {
  const decoder = (() => {
    try {
      return new TextDecoder(charset ?? "utf-8");
    } catch {
      // A label TextDecoder does not know: UTF-8, as browsers fall back to.
      return new TextDecoder("utf-8");
    }
  })();
  if (decoder.encoding === "windows-1252") return decodeWindows1252(bytes);
  return decoder.decode(bytes);
}

// windows-1252's 0x80–0x9F (curly quotes, dashes, €), which the web uses for every "latin1" and
// "iso-8859-1" label too. Node 20's TextDecoder decodes that range as C1 control codes.
const cp1252High =
  "\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f" +
  "\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178";

function decodeWindows1252(bytes: Uint8Array): string {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  return text.replace(/[\x80-\x9f]/g, (c) => cp1252High[c.charCodeAt(0) - 0x80] ?? c);
}

/** The charset a page declares in its head: `<meta charset>` or the http-equiv Content-Type. */
export function metaCharset(body: Uint8Array): string | undefined {
  // Browsers look at the first 1024 bytes; some pages put long scripts first, so a little more.
  const head = Buffer.from(body.subarray(0, 4096)).toString("latin1");
  for (const tag of head.match(/<meta\b[^>]*>/gi) ?? []) {
    const direct = /\bcharset\s*=\s*["']?\s*([\w.:-]+)/i.exec(tag);
    if (direct?.[1]) return direct[1];
  }
  return undefined;
}

/**
 * The text of a PDF, page by page, by pdfjs-dist (4.10.38: the last that runs on Node 20). Its
 * worker module is loaded into this thread (globalThis.pdfjsWorker), so pdf.js looks up no
 * worker file, and it runs without eval or system fonts.
 */
export async function pdfToText(bytes: Uint8Array): Promise<PageText> {
  const pdfjs = await loadPdfjs();
  const task = pdfjs.getDocument({
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
  });
  let document: Awaited<typeof task.promise>;
  try {
    document = await task.promise;
  } catch (error) {
    throw new UnsupportedContent(
      `read_url could not read the PDF: ${error instanceof Error ? error.message : String(error)}.`,
    );
  }
  try {
    const pages: string[] = [];
    for (let n = 1; n <= document.numPages; n++) {
      const page = await document.getPage(n);
      const content = await page.getTextContent();
      let text = "";
      for (const item of content.items) {
        if (!("str" in item)) continue;
        text += item.str;
        if (item.hasEOL) text += "\n";
        else if (item.str && !item.str.endsWith(" ")) text += " ";
      }
      pages.push(text.replace(/[ \t]+\n/g, "\n").trim());
      page.cleanup();
    }
    const info = (await document.getMetadata().catch(() => undefined))?.info as
      | { Title?: unknown }
      | undefined;
    const title = typeof info?.Title === "string" ? info.Title.trim() : "";
    const body = pages
      .map((text, i) => (pages.length > 1 ? `## Page ${i + 1}\n\n${text}` : text))
      .join("\n\n");
    return {
      kind: "pdf",
      ...(title ? { title } : {}),
      text: title ? `# ${title}\n\n${body}` : body,
    };
  } finally {
    await document.destroy();
  }
}

type Pdfjs = typeof import("pdfjs-dist/legacy/build/pdf.mjs");
let pdfjsLoading: Promise<Pdfjs> | undefined;

function loadPdfjs(): Promise<Pdfjs> {
  pdfjsLoading ??= (async () => {
    // @ts-expect-error pdfjs-dist ships no types for its worker module (only its exports are used).
    const worker = await import("pdfjs-dist/legacy/build/pdf.worker.mjs");
    (globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = worker;
    return import("pdfjs-dist/legacy/build/pdf.mjs");
  })();
  return pdfjsLoading;
}
