import { closeSync } from "node:fs";
import { basename } from "node:path";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import { type Static, Type } from "typebox";
import { readAll } from "../fs/no-follow.js";
import type { PathPolicy } from "../sandbox/path-policy.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import type { ThreadHandle } from "../types.js";
import { openChecked, regularFileStat, textResult, toolPath } from "./tool-context.js";

const parameters = Type.Object({
  path: Type.String({ description: "File to send, absolute or relative to the workspace" }),
  comment: Type.Optional(Type.String({ description: "Short text posted with the file" })),
});

/** Largest file the upload tool sends (Telegram bots may send up to 50 MB). */
export const UPLOAD_MAX_BYTES = 50 * 1024 * 1024;

/** `upload`: posts a file from the workspace to the chat thread (ThreadHandle.uploadFile). */
export function createUploadTool(options: {
  workspaceDir: string;
  /** What the file tools may touch (see ToolContext.pathPolicy). */
  pathPolicy?: PathPolicy;
  /** Translates the paths the agent gives (Docker's /workspace) to host paths. */
  sandbox?: Pick<Sandbox, "toHostPath">;
  /** The thread's channel handle, if the thread lives on a channel that can receive files. */
  thread: () => ThreadHandle | undefined;
}): AgentTool<typeof parameters> {
  return {
    name: "upload",
    label: "upload",
    description:
      "Send a file (report, image, archive) to the user in this chat. Create the file first, then upload it.",
    parameters,
    async execute(_id, params: Static<typeof parameters>) {
      const path = toolPath(options, params.path, "read", "upload");
      regularFileStat(path, "upload");
      // The checked file itself is read here (see openChecked) and its bytes are what is sent.
      const file = openChecked(path, "upload");
      if (!file) throw new Error(`${path} does not exist`);
      let data: Buffer;
      const size = file.stat.size;
      try {
        if (size > UPLOAD_MAX_BYTES)
          throw new Error(`${path} is ${size} bytes; the limit is ${UPLOAD_MAX_BYTES}`);
        data = readAll(file.fd, size);
      } finally {
        closeSync(file.fd);
      }
      const handle = options.thread();
      if (!handle?.uploadFile) throw new Error("this conversation's channel cannot receive files");
      await handle.uploadFile({ data, filename: basename(path) }, params.comment);
      return textResult(`Uploaded ${basename(path)} (${size} bytes) to the chat.`, { path, size });
    },
  };
}
