import { mkdir, writeFile } from "node:fs/promises";
import { extname, join } from "node:path";
import type { ActorMessage, Logger } from "@guppy/core";
import type { Attachment } from "chat";

type ImageContent = NonNullable<Extract<ActorMessage, { type: "prompt" }>["images"]>[number];

export interface DownloadedAttachments {
  /** Paths of the saved files (images included), for the prompt text. */
  files: string[];
  /** Images for vision-capable models. */
  images: ImageContent[];
  /** One line per attachment that could not be fetched. */
  failures: string[];
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

/**
 * Saves a message's attachments to `<thread>/attachments/` (each one independently: a failure is
 * reported, never thrown) and returns images as ImageContent for vision models.
 */
export async function downloadAttachments(
  attachments: readonly Attachment[],
  dir: string,
  logger: Logger,
): Promise<DownloadedAttachments> {
  const result: DownloadedAttachments = { files: [], images: [], failures: [] };
  if (attachments.length === 0) return result;
  await mkdir(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  await Promise.all(
    attachments.map(async (attachment, index) => {
      const name = safeName(attachment.name, index, attachment.mimeType);
      try {
        let data: Buffer;
        if (attachment.data instanceof Buffer) data = attachment.data;
        else if (attachment.fetchData) {
          const fetched = await attachment.fetchData();
          data = Buffer.isBuffer(fetched) ? fetched : Buffer.from(new Uint8Array(fetched));
        } else if (attachment.url) {
          const response = await fetch(attachment.url);
          if (!response.ok) throw new Error(`HTTP ${response.status}`);
          data = Buffer.from(await response.arrayBuffer());
        } else throw new Error("no data or URL");
        const path = join(dir, `${stamp}-${name}`);
        await writeFile(path, data);
        result.files.push(path);
        const mimeType = mimeOf(attachment, name);
        if (mimeType && IMAGE_TYPES.has(mimeType) && data.length <= MAX_IMAGE_BYTES) {
          result.images.push({ type: "image", data: data.toString("base64"), mimeType });
        }
      } catch (error) {
        logger.warn("channel: attachment download failed", { name, error: String(error) });
        result.failures.push(`${name} (${error instanceof Error ? error.message : String(error)})`);
      }
    }),
  );
  return result;
}
