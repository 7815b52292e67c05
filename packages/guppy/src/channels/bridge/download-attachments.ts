import { mkdir, writeFile } from "node:fs/promises";
import { extname, join } from "node:path";
import type { Logger, PromptContent } from "@guppy/core";
import type { Attachment } from "chat";

type ImageContent = NonNullable<PromptContent["images"]>[number];

/** A message's attachments, planned: where each goes, and the downloads to run. */
export interface AttachmentDownloads {
  /**
   * The prompt text saved before the downloads run (what a run after a restart gets): the
   * message's text and, per attachment, the path it was being saved to.
   */
  savedText: string;
  /**
   * Runs the downloads (each independently: a failure is reported, never thrown) and resolves —
   * never rejects, and within `waitMs` — to the prompt as its run gets it: one line per
   * attachment, in the message's order, and images for vision models.
   */
  run(): Promise<PromptContent>;
}

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

function safeName(name: string | undefined, index: number, mimeType: string | undefined): string {
  const cleaned = (name ?? "").replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "");
  if (cleaned) return cleaned.slice(-100);
  const ext = mimeType?.split("/")[1]?.replace(/[^a-z0-9]/g, "") ?? "bin";
  return `attachment-${index}.${ext}`;
}

function mimeOf(attachment: Attachment, fileName: string): string | undefined {
  if (attachment.mimeType) return attachment.mimeType;
  const ext = extname(fileName).toLowerCase();
  if (ext === ".jpg" || ext === ".jpeg") return "image/jpeg";
  if (ext === ".png") return "image/png";
  if (ext === ".gif") return "image/gif";
  if (ext === ".webp") return "image/webp";
  return attachment.type === "image" ? "image/jpeg" : undefined;
}

async function fetchData(attachment: Attachment): Promise<Buffer> {
  if (attachment.data instanceof Buffer) return attachment.data;
  if (attachment.fetchData) {
    const fetched = await attachment.fetchData();
    return Buffer.isBuffer(fetched) ? fetched : Buffer.from(new Uint8Array(fetched));
  }
  if (attachment.url) {
    const response = await fetch(attachment.url);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return Buffer.from(await response.arrayBuffer());
  }
  throw new Error("no data or URL");
}

/** What became of one attachment. */
type Outcome =
  | { kind: "saved"; path: string; image?: ImageContent }
  | { kind: "failed"; line: string }
  | { kind: "waiting"; path: string };

const lineOf = (outcome: Outcome): string =>
  outcome.kind === "saved"
    ? `[attachment saved: ${outcome.path}]`
    : outcome.kind === "failed"
      ? `[attachment could not be downloaded: ${outcome.line}]`
      : `[attachment still downloading to ${outcome.path}]`;

const withLines = (text: string, lines: string[]): string =>
  lines.length > 0 ? `${text}\n\n${lines.join("\n")}`.trim() : text;

/**
 * Plans the download of a message's attachments to `<dir>/<time>-<name>`: the paths are fixed
 * now, so the prompt can be saved before a byte is fetched, and its lines list the attachments in
 * the message's order, whichever download ends first.
 */
export function planAttachmentDownloads(
  text: string,
  attachments: readonly Attachment[],
  dir: string,
  logger: Logger,
  waitMs: number,
): AttachmentDownloads {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const planned = attachments.map((attachment, index) => {
    const name = safeName(attachment.name, index, attachment.mimeType);
    return { attachment, name, path: join(dir, `${stamp}-${name}`) };
  });
  const download = async ({ attachment, name, path }: (typeof planned)[number]) => {
    try {
      const data = await fetchData(attachment);
      await mkdir(dir, { recursive: true });
      await writeFile(path, data);
      const mimeType = mimeOf(attachment, name);
      const image: ImageContent | undefined =
        mimeType && IMAGE_TYPES.has(mimeType) && data.length <= MAX_IMAGE_BYTES
          ? { type: "image", data: data.toString("base64"), mimeType }
          : undefined;
      return { kind: "saved", path, ...(image ? { image } : {}) } satisfies Outcome;
    } catch (error) {
      logger.warn("channel: attachment download failed", { name, error: String(error) });
      const reason = error instanceof Error ? error.message : String(error);
      return { kind: "failed", line: `${name} (${reason})` } satisfies Outcome;
    }
  };
  return {
    savedText: withLines(
      text,
      planned.map(
        (p) => `[attachment, download cut short by a restart (the file may be missing): ${p.path}]`,
      ),
    ),
    async run() {
      const outcomes: Outcome[] = planned.map((p) => ({ kind: "waiting", path: p.path }));
      const all = Promise.all(
        planned.map(async (p, i) => {
          outcomes[i] = await download(p);
        }),
      );
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, waitMs);
        timer.unref();
      });
      await Promise.race([all, timeout]);
      clearTimeout(timer);
      const images = outcomes.flatMap((o) => (o.kind === "saved" && o.image ? [o.image] : []));
      return {
        text: withLines(text, outcomes.map(lineOf)),
        ...(images.length > 0 ? { images } : {}),
      };
    },
  };
}
