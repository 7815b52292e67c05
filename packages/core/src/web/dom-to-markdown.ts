// An article's DOM (Readability's pick, or a whole page) written as Markdown in one walk.
// Why not turndown: on a large page it clones the whole tree, walks it to collapse whitespace and
// again to write it, and runs every rule's filter on every node; that was a third of read_url's
// time on a 1 MB page. This walk reads the tree once and writes what a model needs: headings,
// paragraphs, links and images (absolute), emphasis, code, lists, quotes and tables.

/** The little of a DOM node this walk reads (linkedom's nodes have it). */
export interface MarkdownNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  firstChild: MarkdownNode | null;
  nextSibling: MarkdownNode | null;
  getAttribute?(name: string): string | null;
}

const ELEMENT = 1;
const TEXT = 3;
const CDATA = 4;

/** A line break inside a `<pre>`: kept apart from the breaks the walk trims and collapses. */
const PRE_BREAK = "\uE000";
/** A space of a list item's indent: kept apart from the spaces tidy() trims. */
const INDENT = "\uE001";
const PRE_BREAKS = new RegExp(PRE_BREAK, "g");
const INDENTS = new RegExp(INDENT, "g");

/** Elements whose content is never text for a reader. */
const SKIPPED = new Set([
  "SCRIPT",
  "STYLE",
  "NOSCRIPT",
  "TEMPLATE",
  "SVG",
  "CANVAS",
  "IFRAME",
  "FORM",
  "BUTTON",
  "SELECT",
  "INPUT",
  "TEXTAREA",
  "OBJECT",
  "EMBED",
  "HEAD",
  "TITLE",
  "META",
  "LINK",
]);

/** Elements that start and end a block (a paragraph break around them). */
const BLOCKS = new Set([
  "P",
  "DIV",
  "SECTION",
  "ARTICLE",
  "MAIN",
  "HEADER",
  "FOOTER",
  "ASIDE",
  "NAV",
  "FIGURE",
  "FIGCAPTION",
  "ADDRESS",
  "DETAILS",
  "SUMMARY",
  "DL",
  "DT",
  "DD",
  "CENTER",
  "HGROUP",
  "BODY",
  "HTML",
  "FIELDSET",
  "CAPTION",
]);

/**
 * `root`'s content as Markdown. Relative links and images are made absolute against `baseUrl`
 * (the page's URL, or its `<base>`).
 */
export function domToMarkdown(root: MarkdownNode, baseUrl: string): string {
  return tidy(children(root, { baseUrl })).replace(PRE_BREAKS, "\n").replace(INDENTS, " ");
}

interface WalkContext {
  baseUrl: string;
}

function children(node: MarkdownNode, ctx: WalkContext): string {
  let text = "";
  for (let child = node.firstChild; child; child = child.nextSibling) text += walk(child, ctx);
  return text;
}

function walk(node: MarkdownNode, ctx: WalkContext): string {
  const type = node.nodeType;
  if (type === TEXT || type === CDATA) {
    return (node.textContent ?? "").replace(/[ \t\n\r\f]+/g, " ");
  }
  if (type !== ELEMENT) return "";
  const tag = node.nodeName.toUpperCase();
  if (SKIPPED.has(tag)) return "";
  switch (tag) {
    case "H1":
    case "H2":
    case "H3":
    case "H4":
    case "H5":
    case "H6": {
      const text = oneLine(children(node, ctx));
      return text ? block(`${"#".repeat(Number(tag[1]))} ${text}`) : "";
    }
    case "BR":
      return "\n";
    case "HR":
      return block("---");
    case "A": {
      const text = children(node, ctx).trim();
      const href = resolve(node.getAttribute?.("href"), ctx.baseUrl);
      if (!text) return "";
      if (!href || href.startsWith("javascript:")) return text;
      return `[${text.replace(/\n+/g, " ")}](${href})`;
    }
    case "IMG": {
      const src = node.getAttribute?.("src") ?? "";
      if (!src || src.startsWith("data:")) return "";
      const alt = (node.getAttribute?.("alt") ?? "").replace(/\s+/g, " ").trim();
      return `![${alt}](${resolve(src, ctx.baseUrl)})`;
    }
    case "EM":
    case "I":
    case "CITE":
      return wrap(children(node, ctx), "_");
    case "STRONG":
    case "B":
      return wrap(children(node, ctx), "**");
    case "DEL":
    case "S":
    case "STRIKE":
      return wrap(children(node, ctx), "~~");
    case "CODE":
    case "KBD":
    case "SAMP":
    case "TT": {
      const code = (node.textContent ?? "").replace(/\s+/g, " ");
      if (!code.trim()) return code;
      const fence = code.includes("`") ? "``" : "`";
      return `${fence}${fence === "``" ? ` ${code} ` : code}${fence}`;
    }
    case "PRE": {
      const code = (node.textContent ?? "").replace(/\n$/, "");
      const language = /(?:^|\s)(?:language|lang)-([\w+#-]+)/.exec(
        codeClass(node) ?? node.getAttribute?.("class") ?? "",
      )?.[1];
      const fence = code.includes("```") ? "~~~" : "```";
      return block(`${fence}${language ?? ""}\n${code}\n${fence}`.replace(/\n/g, PRE_BREAK));
    }
    case "BLOCKQUOTE": {
      const inner = tidy(children(node, ctx));
      return inner ? block(inner.replace(/^/gm, "> ").replace(/^> $/gm, ">")) : "";
    }
    case "UL":
    case "OL":
      return block(list(node, tag === "OL", ctx));
    case "LI":
      // A list item outside a list: a line of its own.
      return block(`- ${tidy(children(node, ctx))}`);
    case "TABLE":
      return block(table(node, ctx));
    default:
      return BLOCKS.has(tag) ? block(children(node, ctx)) : children(node, ctx);
  }
}

/** A paragraph break on each side; runs of them collapse in tidy(). */
function block(text: string): string {
  return `\n\n${text}\n\n`;
}

/** Inline text marked with `mark` (`_`, `**`), its outer spaces kept outside the marks. */
function wrap(text: string, mark: string): string {
  const inner = text.trim();
  if (!inner) return text;
  const lead = text.startsWith(" ") ? " " : "";
  const trail = text.endsWith(" ") ? " " : "";
  return `${lead}${mark}${inner}${mark}${trail}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** A `<pre>`'s language is often on its `<code>` child. */
function codeClass(pre: MarkdownNode): string | null | undefined {
  for (let child = pre.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === ELEMENT && child.nodeName.toUpperCase() === "CODE") {
      return child.getAttribute?.("class");
    }
  }
  return undefined;
}

function list(node: MarkdownNode, ordered: boolean, ctx: WalkContext): string {
  const start = ordered ? Number.parseInt(node.getAttribute?.("start") ?? "1", 10) || 1 : 1;
  const items: string[] = [];
  for (let child = node.firstChild; child; child = child.nextSibling) {
    if (child.nodeType !== ELEMENT) continue;
    const tag = child.nodeName.toUpperCase();
    if (tag !== "LI") {
      // A nested list or stray element directly in the list: kept as it is.
      const text = tidy(walk(child, ctx));
      if (text) items.push(text);
      continue;
    }
    const marker = ordered ? `${start + items.length}. ` : "- ";
    // A nested list follows its item's text on the next line (a tight list), not after a gap.
    const text = tidy(children(child, ctx)).replace(/\n\n(?=- |\d+\. )/g, "\n");
    const indent = INDENT.repeat(marker.length);
    items.push(
      marker + text.replace(/\n(?=[^\n])/g, `\n${indent}`).replace(PRE_BREAKS, PRE_BREAK + indent),
    );
  }
  return items.join("\n");
}

/** A table as Markdown: its first row the header, a cell's blocks on one line. */
function table(node: MarkdownNode, ctx: WalkContext): string {
  const rows: string[][] = [];
  const collect = (parent: MarkdownNode) => {
    for (let child = parent.firstChild; child; child = child.nextSibling) {
      if (child.nodeType !== ELEMENT) continue;
      const tag = child.nodeName.toUpperCase();
      if (tag === "TR") {
        const cells: string[] = [];
        for (let cell = child.firstChild; cell; cell = cell.nextSibling) {
          if (cell.nodeType !== ELEMENT) continue;
          const cellTag = cell.nodeName.toUpperCase();
          if (cellTag !== "TD" && cellTag !== "TH") continue;
          cells.push(
            oneLine(
              tidy(children(cell, ctx)).replace(PRE_BREAKS, " ").replace(INDENTS, ""),
            ).replace(/\|/g, "\\|"),
          );
        }
        if (cells.length > 0) rows.push(cells);
      } else if (tag === "THEAD" || tag === "TBODY" || tag === "TFOOT") collect(child);
    }
  };
  collect(node);
  if (rows.length === 0) return "";
  const width = Math.max(...rows.map((r) => r.length));
  const line = (cells: string[]) =>
    `| ${Array.from({ length: width }, (_, i) => cells[i] ?? "").join(" | ")} |`;
  const [head = [], ...body] = rows;
  return [line(head), `| ${Array(width).fill("---").join(" | ")} |`, ...body.map(line)].join("\n");
}

/** Trims spaces around line breaks and collapses blank-line runs (`<pre>` breaks stay marked). */
function tidy(text: string): string {
  // One pass: a run of breaks and blanks becomes one break, or a blank line when it held two.
  return text
    .replace(/[ \t]*\n[ \t\n]*/g, (run) =>
      run.indexOf("\n") === run.lastIndexOf("\n") ? "\n" : "\n\n",
    )
    .trim();
}

function resolve(href: string | null | undefined, baseUrl: string): string | undefined {
  if (!href) return undefined;
  const value = href.trim();
  if (value.startsWith("#")) return value;
  try {
    return new URL(value, baseUrl).href;
  } catch {
    return value;
  }
}
