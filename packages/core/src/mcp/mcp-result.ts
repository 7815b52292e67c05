import type { AgentToolResult } from "@mariozechner/pi-agent-core";
import type { ImageContent, TextContent } from "@mariozechner/pi-ai";

/** A content block of an MCP tool result (the SDK's CallToolResult content, loosely typed). */
interface McpContent {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; mimeType?: string; text?: string; blob?: string };
}

/** What an MCP server answers a tools/call with (the parts guppy reads). */
export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
  /** Old servers (protocol 2024-10-07) answer `toolResult` instead of `content`. */
  toolResult?: unknown;
}

/**
 * An MCP tool's result as an agent tool result: text as text, images as images, an embedded
 * resource as its text (or its URI when it is binary), a resource link as its URI, audio as a
 * note; structured content alone as JSON. An `isError` result is thrown (the agent loop makes a
 * thrown error the tool's error result). A long text is spilled by the run's tool-result hook
 * (spill-output.ts), as any tool's.
 */
export function mcpToolResult(result: McpCallResult): AgentToolResult<{ server?: string }> {
  const blocks = Array.isArray(result.content) ? (result.content as McpContent[]) : [];
  const content: (TextContent | ImageContent)[] = blocks.map(mapBlock);
  if (content.length === 0) {
    const value = result.structuredContent ?? result.toolResult;
    content.push({
      type: "text",
      text: value === undefined ? "(no output)" : JSON.stringify(value, null, 2),
    });
  }
  if (result.isError) {
    const text = content
      .filter((c): c is TextContent => c.type === "text")
      .map((c) => c.text)
      .join("\n");
    throw new Error(text.trim() === "" ? "the tool reported an error" : text);
  }
  return { content, details: {} };
}

function mapBlock(block: McpContent): TextContent | ImageContent {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text ?? "" };
    case "image":
      return block.data
        ? { type: "image", data: block.data, mimeType: block.mimeType ?? "image/png" }
        : { type: "text", text: "[an image without data]" };
    case "resource": {
      const r = block.resource ?? {};
      if (typeof r.text === "string") {
        return { type: "text", text: r.uri ? `[resource ${r.uri}]\n${r.text}` : r.text };
      }
      return {
        type: "text",
        text: `[binary resource ${r.uri ?? "(no uri)"}${r.mimeType ? `, ${r.mimeType}` : ""}; not shown]`,
      };
    }
    case "resource_link":
      return {
        type: "text",
        text: `[resource link ${block.uri ?? ""}${block.name ? ` (${block.name})` : ""}]`,
      };
    case "audio":
      return {
        type: "text",
        text: `[audio${block.mimeType ? ` ${block.mimeType}` : ""}; not shown]`,
      };
    default:
      return { type: "text", text: `[${block.type} content; not shown]` };
  }
}
