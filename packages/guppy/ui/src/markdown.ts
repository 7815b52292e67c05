import { lexer, type Token, type Tokens } from "marked";
import { type ComponentChildren, h } from "preact";
import { useMemo } from "preact/hooks";
import "./markdown.css";

// Markdown from the model or a user, turned into Preact elements token by token: marked's lexer
// (already guppy's dependency; its parser and renderer, which write HTML text, are never used)
// reads the text, and each token becomes an element made here. No string is ever parsed as HTML
// (no innerHTML), so nothing a model or user writes can add markup: raw HTML comes out as the
// text it is, and a link is one only when it goes to http, https or mailto.

/** Renders `text` as Markdown, safely (see above). */
export function Markdown({ text }: { text: string }) {
  const children = useMemo(() => blocks(tokensOf(text)), [text]);
  return h("div", { class: "md" }, children);
}

function tokensOf(text: string): Token[] {
  try {
    return lexer(text, { gfm: true, breaks: false });
  } catch {
    // marked throws on nothing we know of; should it, the text is still shown, as text.
    return [{ type: "paragraph", raw: text, text, tokens: [{ type: "text", raw: text, text }] }];
  }
}

/** The schemes a link may have; any other (javascript:, data:, vbscript:, …) is shown as text. */
const SAFE_SCHEMES = new Set(["http:", "https:", "mailto:"]);

/** `href` when it is an absolute http(s) or mailto URL, else undefined. */
export function safeHref(href: string): string | undefined {
  let url: URL;
  try {
    url = new URL(href.trim());
  } catch {
    return undefined; // Relative or malformed: it would resolve against this page.
  }
  return SAFE_SCHEMES.has(url.protocol) ? url.href : undefined;
}

function blocks(tokens: Token[]): ComponentChildren[] {
  return tokens.map(block);
}

function block(token: Token, key: number): ComponentChildren {
  const t = token as Tokens.Generic;
  switch (t.type) {
    case "space":
    case "def":
      return null;
    case "paragraph":
      return h("p", { key }, inline((t as Tokens.Paragraph).tokens));
    case "heading": {
      const heading = t as Tokens.Heading;
      const depth = Math.min(Math.max(heading.depth, 1), 6);
      return h(`h${depth}`, { key }, inline(heading.tokens));
    }
    case "code": {
      const code = t as Tokens.Code;
      return h(
        "pre",
        { key, class: "md-code" },
        h("code", code.lang ? { "data-lang": code.lang } : {}, code.text),
      );
    }
    case "blockquote":
      return h("blockquote", { key }, blocks((t as Tokens.Blockquote).tokens));
    case "list":
      return list(t as Tokens.List, key);
    case "table":
      return table(t as Tokens.Table, key);
    case "hr":
      return h("hr", { key });
    case "html":
      // Raw HTML, shown as the text it is.
      return h("p", { key, class: "md-html" }, (t as Tokens.HTML).text);
    case "text": {
      // A list item's text: its inline tokens, when the lexer gave them.
      const text = t as Tokens.Text;
      return text.tokens ? h("span", { key }, inline(text.tokens)) : decodeEntities(text.text);
    }
    default:
      return t.raw ? h("p", { key }, t.raw) : null;
  }
}

function list(token: Tokens.List, key: number): ComponentChildren {
  const items = token.items.map((item, i) => {
    const children: ComponentChildren[] = [];
    if (item.task) {
      children.push(
        h("input", {
          key: "check",
          type: "checkbox",
          checked: item.checked === true,
          disabled: true,
          "aria-label": item.checked ? "done" : "not done",
        }),
      );
    }
    const content = item.tokens.filter((t) => t.type !== "checkbox");
    // A tight list's items hold bare text tokens; a loose one's hold paragraphs.
    children.push(...content.map((t, j) => (t.type === "text" ? inlineToken(t, j) : block(t, j))));
    return h("li", { key: i }, children);
  });
  if (!token.ordered) return h("ul", { key }, items);
  const start = typeof token.start === "number" && token.start !== 1 ? token.start : undefined;
  return h("ol", start !== undefined ? { key, start } : { key }, items);
}

function table(token: Tokens.Table, key: number): ComponentChildren {
  const style = (align: Tokens.TableCell["align"]) => (align ? { textAlign: align } : undefined);
  return h(
    "div",
    { key, class: "md-table" },
    h(
      "table",
      null,
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          token.header.map((cell, i) =>
            h("th", { key: i, scope: "col", style: style(cell.align) }, inline(cell.tokens)),
          ),
        ),
      ),
      h(
        "tbody",
        null,
        token.rows.map((row, r) =>
          h(
            "tr",
            { key: r },
            row.map((cell, i) =>
              h("td", { key: i, style: style(cell.align) }, inline(cell.tokens)),
            ),
          ),
        ),
      ),
    ),
  );
}

function inline(tokens: Token[] | undefined): ComponentChildren[] {
  return (tokens ?? []).map(inlineToken);
}

function inlineToken(token: Token, key: number): ComponentChildren {
  const t = token as Tokens.Generic;
  switch (t.type) {
    case "text": {
      const text = t as Tokens.Text;
      return text.tokens ? h("span", { key }, inline(text.tokens)) : decodeEntities(text.text);
    }
    case "escape":
      return (t as Tokens.Escape).text;
    case "strong":
      return h("strong", { key }, inline((t as Tokens.Strong).tokens));
    case "em":
      return h("em", { key }, inline((t as Tokens.Em).tokens));
    case "del":
      return h("del", { key }, inline((t as Tokens.Del).tokens));
    case "codespan":
      return h("code", { key }, (t as Tokens.Codespan).text);
    case "br":
      return h("br", { key });
    case "link": {
      const link = t as Tokens.Link;
      const href = safeHref(link.href);
      if (!href) return h("span", { key, class: "md-unsafe-link" }, inline(link.tokens));
      return h(
        "a",
        {
          key,
          href,
          target: "_blank",
          rel: "noopener noreferrer",
          ...(link.title ? { title: link.title } : {}),
        },
        inline(link.tokens),
      );
    }
    case "image": {
      // Never loaded (the page asks no other origin for anything): its text, linked if safe.
      const image = t as Tokens.Image;
      const label = `[image: ${decodeEntities(image.text) || "untitled"}]`;
      const href = safeHref(image.href);
      return href
        ? h("a", { key, href, target: "_blank", rel: "noopener noreferrer" }, label)
        : label;
    }
    case "html":
      return (t as Tokens.Tag).text; // Raw HTML, as text.
    case "checkbox":
      return null;
    default:
      return t.raw;
  }
}

const NAMED: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
};

/**
 * Character references in text as the characters they stand for (marked leaves them for an HTML
 * renderer to resolve): `&amp;` reads "&". The few common named ones and all numeric ones.
 */
export function decodeEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (whole, ref: string) => {
    if (ref.startsWith("#")) {
      const code =
        ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : Number(ref.slice(1));
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)
        ? String.fromCodePoint(code)
        : whole;
    }
    return NAMED[ref.toLowerCase()] ?? whole;
  });
}
