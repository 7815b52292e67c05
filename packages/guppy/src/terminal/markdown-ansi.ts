import { Lexer, type Token, type Tokens } from "marked";
import type { Styles } from "./ansi.js";

// An answer's Markdown as a terminal shows it: marked's lexer reads it (the renderer libraries on
// npm pull in large trees for this), and these few lines turn its tokens into text with ANSI
// styles: headings bold, emphasis, code in colour and indented, lists with bullets, links with
// their address. The text is the model's, already made terminal-safe by the caller; only the
// styles' own sequences are added.

/**
 * `markdown` rendered for a terminal with `styles`, keeping its trailing line breaks. What this
 * does not know (tables, HTML) is shown as written.
 */
export function renderMarkdown(markdown: string, styles: Styles): string {
  const trailing = /\n*$/.exec(markdown)?.[0] ?? "";
  const tokens = new Lexer({ gfm: true }).lex(markdown);
  return `${blocks(tokens, styles)}${trailing}`;
}

/** Block tokens, each without its line break; one blank line where the source had one or more. */
function blocks(tokens: readonly Token[], styles: Styles): string {
  let out = "";
  let separator = "";
  for (const token of tokens) {
    if (token.type === "space") {
      if (out !== "") separator = "\n\n";
      continue;
    }
    const text = block(token, styles);
    if (out !== "") out += separator || "\n";
    out += text;
    separator = "";
  }
  return out;
}

function block(token: Token, styles: Styles): string {
  switch (token.type) {
    case "heading": {
      const t = token as Tokens.Heading;
      const text = inline(t.tokens, styles);
      return t.depth === 1 ? styles.bold(styles.underline(text)) : styles.bold(text);
    }
    case "paragraph":
      return inline((token as Tokens.Paragraph).tokens, styles);
    case "text": {
      const t = token as Tokens.Text;
      return t.tokens ? inline(t.tokens, styles) : t.text;
    }
    case "code": {
      const t = token as Tokens.Code;
      const code = t.text.split("\n").map((line) => `  ${styles.yellow(line)}`);
      return [...(t.lang ? [styles.dim(`  ${t.lang}`)] : []), ...code].join("\n");
    }
    case "list":
      return list(token as Tokens.List, styles);
    case "blockquote":
      return blocks((token as Tokens.Blockquote).tokens, styles)
        .split("\n")
        .map((line) => `${styles.dim("│")} ${line}`)
        .join("\n");
    case "hr":
      return styles.dim("─".repeat(40));
    default:
      // Tables, HTML, link definitions: as written.
      return token.raw.replace(/\n+$/, "");
  }
}

function list(token: Tokens.List, styles: Styles): string {
  const first = typeof token.start === "number" ? token.start : 1;
  return token.items
    .map((item, i) => {
      const task = item.task ? `${item.checked ? "[x]" : "[ ]"} ` : "";
      const marker = token.ordered ? `${first + i}.` : "•";
      const body = blocks(
        // A task's checkbox is its own token: shown as the marker's part instead.
        item.tokens.filter((t) => t.type !== "checkbox"),
        styles,
      );
      const pad = " ".repeat(marker.length + 1);
      return body
        .split("\n")
        .map((line, n) => (n === 0 ? `${styles.dim(marker)} ${task}${line}` : `${pad}${line}`))
        .join("\n");
    })
    .join(token.loose ? "\n\n" : "\n");
}

function inline(tokens: readonly Token[], styles: Styles): string {
  return tokens.map((token) => span(token, styles)).join("");
}

function span(token: Token, styles: Styles): string {
  switch (token.type) {
    case "strong":
      return styles.bold(inline((token as Tokens.Strong).tokens, styles));
    case "em":
      return styles.italic(inline((token as Tokens.Em).tokens, styles));
    case "del":
      return styles.dim(inline((token as Tokens.Del).tokens, styles));
    case "codespan":
      return styles.yellow((token as Tokens.Codespan).text);
    case "link": {
      const t = token as Tokens.Link;
      const text = inline(t.tokens, styles);
      // An address written as itself (autolink, or [url](url)) is shown once.
      if (t.text === t.href || t.href === `mailto:${t.text}`) return styles.underline(text);
      return `${styles.underline(text)} ${styles.dim(`(${t.href})`)}`;
    }
    case "image": {
      const t = token as Tokens.Image;
      return styles.dim(`[image${t.text ? `: ${t.text}` : ""}] (${t.href})`);
    }
    case "br":
      return "\n";
    case "text": {
      const t = token as Tokens.Text;
      return t.tokens ? inline(t.tokens, styles) : t.text;
    }
    case "escape":
      return (token as Tokens.Escape).text;
    default:
      return token.raw;
  }
}
