import { domToMarkdown, type MarkdownNode } from "./dom-to-markdown.js";
import type { PageText } from "./types.js";

type ParsedDocument = ReturnType<typeof import("linkedom")["parseHTML"]>["document"];

// HTML to Markdown on the calling thread. read_url runs it in a worker (html-worker.ts) so a
// large page does not hold the gateway's thread; this is the work itself. Every node the parser
// makes costs linkedom a Map and Readability a few walks, so what no reader sees is cut from the
// text before it is parsed.

/**
 * A page's article as Markdown under its title: the page's one <article> or <main> when it
 * plainly holds the text (obviousMain), else the one Readability picks (dropping navigation,
 * scripts and ad blocks); dom-to-markdown.ts writes it; links and images point at
 * absolute URLs. A page Readability finds no article in (a list, an index) is written whole,
 * without its scripts, styles, navigation, headers, footers and forms.
 */
export async function htmlToMarkdown(html: string, pageUrl: string): Promise<PageText> {
  const [{ parseHTML }, { Readability }] = await Promise.all([
    import("linkedom"),
    import("@mozilla/readability"),
  ]);
  const lean = leanHtml(html);
  const { document } = parseHTML(lean);
  const base = baseUrl(document, pageUrl);
  const pageTitle = document.querySelector("title")?.textContent?.trim() ?? "";
  dropHidden(document);
  const main = obviousMain(document);
  if (main) {
    const heading = main.element.querySelector("h1");
    const headingText = heading?.textContent?.replace(/\s+/g, " ").trim() ?? "";
    const title = headingText && headingText.length <= 200 ? headingText : pageTitle;
    if (heading && headingText === title) heading.remove();
    const body = domToMarkdown(main.element as unknown as MarkdownNode, base).trim();
    const clean = title.replace(/\s+/g, " ").trim();
    return {
      kind: "html",
      ...(clean ? { title: clean } : {}),
      text: clean ? `# ${clean}\n\n${body}` : body,
    };
  }
  const reader = new Readability<unknown>(document, {
    charThreshold: 200,
    // Classes are never written to Markdown: removing them is a walk for nothing.
    keepClasses: true,
    // The element Readability picked is walked as it is, not serialised to HTML and parsed again.
    serializer: (node) => node,
  });
  fasterReadability(reader);
  lazyPageCache(reader, document, () => {
    const fresh = parseHTML(lean).document;
    dropHidden(fresh);
    return fresh;
  });
  const article = reader.parse();
  let body: string;
  if (article?.content) body = domToMarkdown(article.content as MarkdownNode, base);
  else {
    // Readability changed the document it read: the page is parsed again as it was.
    const whole = parseHTML(lean).document;
    dropHidden(whole);
    const root = whole.body ?? whole.documentElement;
    for (const node of root?.querySelectorAll(
      "nav, header, footer, aside, [role=navigation], [aria-hidden=true]",
    ) ?? []) {
      node.remove();
    }
    body = root ? domToMarkdown(root as unknown as MarkdownNode, base) : "";
  }
  const title = (article?.title || pageTitle).replace(/\s+/g, " ").trim();
  const text = title ? `# ${title}\n\n${body.trim()}` : body.trim();
  return { kind: "html", ...(title ? { title } : {}), text };
}

/**
 * The HTML without what nothing reads as text: scripts (JSON-LD stays: Readability reads a title
 * from it), styles, comments, SVG, noscript, iframes, templates, forms' controls, inline style
 * attributes (a hidden element's stays, for dropHidden) and data: URIs. On a large page these are
 * often most of the bytes. The patterns end an element where an HTML parser does (the first
 * closing tag).
 */
export function leanHtml(html: string): string {
  return html
    .replace(/<script\b(?![^>]*application\/ld\+json)[^>]*>[\s\S]*?<\/script\s*>/gi, "")
    .replace(/<style\b[^>]*>[\s\S]*?<\/style\s*>/gi, "")
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/<(svg|noscript|iframe|template|select|textarea|canvas)\b[\s\S]*?<\/\1\s*>/gi, "")
    .replace(/\sstyle\s*=\s*("[^"]*"|'[^']*')/gi, (attr) =>
      /display\s*:\s*none|visibility\s*:\s*hidden/i.test(attr) ? attr : "",
    )
    .replace(/\s(src|href|srcset)\s*=\s*("data:[^"]*"|'data:[^']*')/gi, "");
}

type ParsedElement = NonNullable<ParsedDocument["body"]>;

/** Class or id words of blocks a reader skips inside an article: ads, sharing, related links, comments. */
const ASIDE_WORDS =
  /(^|[\s_-])(ads?|advert\w*|sponsor\w*|promo\w*|share|sharing|social|related|newsletter|comments?|disqus|popup|banner|breadcrumbs?|pagination|pager)([\s_-]|$)/i;

/**
 * The page's main element when it is obvious — its one <article>, else its one <main>, holding at
 * least 70% of the page's text — with what a reader skips inside it removed (navigation, asides,
 * forms, ad, share and related-link blocks). Readability's scoring of every paragraph, most of a
 * large page's conversion, would pick that element anyway; other pages go through Readability.
 */
function obviousMain(document: ParsedDocument): { element: ParsedElement } | undefined {
  const all = document.body?.textContent?.length ?? 0;
  for (const tag of ["article", "main"]) {
    const found = document.querySelectorAll(tag);
    if (found.length !== 1) continue;
    const element = found[0] as ParsedElement;
    const text = element.textContent?.length ?? 0;
    if (text < 500 || text < 0.7 * all) continue;
    for (const node of element.querySelectorAll(
      "nav, aside, footer, form, button, [role=navigation], [role=complementary], [role=dialog]",
    )) {
      node.remove();
    }
    for (const node of element.querySelectorAll("[class], [id]")) {
      const words = `${node.getAttribute("class") ?? ""} ${node.getAttribute("id") ?? ""}`;
      // A wrapper of much of the article is never a block to skip, whatever its class says.
      if (ASIDE_WORDS.test(words) && (node.textContent?.length ?? 0) < 0.3 * text) node.remove();
    }
    return { element };
  }
  return undefined;
}

/** Elements a browser would not show (hidden, display:none): not the article's text. */
function dropHidden(document: ParsedDocument): void {
  for (const node of document.querySelectorAll("[hidden], [style], [aria-hidden=true]")) {
    if (node.hasAttribute("hidden") || node.getAttribute("aria-hidden") === "true") node.remove();
    else if (/display\s*:\s*none|visibility\s*:\s*hidden/i.test(node.getAttribute("style") ?? ""))
      node.remove();
    else node.removeAttribute("style");
  }
}

interface ReaderElement {
  nodeType: number;
  localName: string;
  textContent: string | null;
  firstElementChild: ReaderElement | null;
  nextElementSibling: ReaderElement | null;
  documentElement?: ReaderElement | null;
  getAttribute(name: string): string | null;
}

/**
 * Three of Readability's helpers replaced by cheaper ones that answer the same on linkedom:
 * - `_isValidByline` asks every element for its whole text before it checks whether the element
 *   could be a byline at all (rel, itemprop, a byline-like class): on a large page that is the
 *   text of the body, the article and every wrapper, each a walk of the tree. Same test, the
 *   cheap parts first.
 * - `_getAllNodesWithTag` runs `querySelectorAll`, which on linkedom compiles the selector at
 *   every call, and Readability calls it for every paragraph. A walk of the elements instead
 *   (in document order, as querySelectorAll answers).
 * - `_fixRelativeUris` resolves every link against a base linkedom does not know; the Markdown
 *   walk resolves them against the page's URL anyway.
 */
function fasterReadability(reader: object): void {
  const target = reader as {
    REGEXPS?: { byline?: RegExp };
    _isValidByline?: (node: ReaderElement, matchString: string) => boolean;
    _getAllNodesWithTag?: (node: ReaderElement, tagNames: string[]) => ReaderElement[];
    _fixRelativeUris?: (content: ReaderElement) => void;
  };
  const byline = target.REGEXPS?.byline;
  if (byline && typeof target._isValidByline === "function") {
    target._isValidByline = (node, matchString) => {
      const rel = node.getAttribute("rel");
      const itemprop = node.getAttribute("itemprop");
      if (!(rel === "author" || itemprop?.includes("author") || byline.test(matchString))) {
        return false;
      }
      const length = (node.textContent ?? "").trim().length;
      return length > 0 && length < 100;
    };
  }
  if (typeof target._getAllNodesWithTag === "function") {
    target._getAllNodesWithTag = (node, tagNames) => elementsByTag(node, tagNames);
  }
  if (typeof target._fixRelativeUris === "function") target._fixRelativeUris = () => {};
}

/**
 * Readability keeps the body's HTML before it looks for the article (serialising the whole page,
 * a tenth of the work on a large one), to start again from it if the article it finds is too
 * short. It rarely is: the body's first `innerHTML` read gives a marker instead, and only when
 * Readability hands the marker back is the page rebuilt as it was then: parsed afresh and put
 * through the same steps Readability took before reading it (noscript images, scripts, its
 * `_prepDocument`). Left as it is when this Readability lacks one of those steps.
 */
function lazyPageCache(reader: object, document: ParsedDocument, reparse: () => ParsedDocument) {
  const steps = reader as {
    _doc?: unknown;
    _unwrapNoscriptImages?: (doc: unknown) => void;
    _removeScripts?: (doc: unknown) => void;
    _prepDocument?: () => void;
  };
  const body = document.body as unknown as object | null;
  let proto = body ? Object.getPrototypeOf(body) : null;
  let innerHtml: PropertyDescriptor | undefined;
  while (proto && !innerHtml) {
    innerHtml = Object.getOwnPropertyDescriptor(proto, "innerHTML");
    proto = Object.getPrototypeOf(proto);
  }
  const { get, set } = innerHtml ?? {};
  if (
    !body ||
    !get ||
    !set ||
    typeof steps._unwrapNoscriptImages !== "function" ||
    typeof steps._removeScripts !== "function" ||
    typeof steps._prepDocument !== "function"
  ) {
    return;
  }
  const marker = `\u0000guppy-page-cache-${Math.random()}\u0000`;
  let handedOut = false;
  Object.defineProperty(body, "innerHTML", {
    configurable: true,
    get() {
      if (handedOut) return get.call(body);
      handedOut = true;
      return marker;
    },
    set(value: string) {
      if (value !== marker) return set.call(body, value);
      const fresh = reparse();
      const readerDoc = steps._doc;
      steps._doc = fresh;
      try {
        steps._unwrapNoscriptImages?.(fresh);
        steps._removeScripts?.(fresh);
        steps._prepDocument?.();
      } finally {
        steps._doc = readerDoc;
      }
      set.call(body, get.call(fresh.body));
    },
  });
}

/** The elements under `root` named `tagNames` (any case), in document order. */
function elementsByTag(root: ReaderElement, tagNames: string[]): ReaderElement[] {
  const wanted = new Set(tagNames.map((name) => name.toLowerCase()));
  const found: ReaderElement[] = [];
  let next: ReaderElement | null | undefined = root.firstElementChild;
  if (root.nodeType === 9) {
    // A document: its root element counts, and the walk goes on under it.
    const html = root.documentElement;
    if (html && wanted.has(html.localName)) found.push(html);
    next = html?.firstElementChild;
  }
  const stack: ReaderElement[] = [];
  // Depth first: an element, then its children, then its next sibling (or an ancestor's).
  while (next || stack.length > 0) {
    if (!next) {
      next = stack.pop()?.nextElementSibling ?? null;
      continue;
    }
    if (wanted.has(next.localName)) found.push(next);
    stack.push(next);
    next = next.firstElementChild;
  }
  return found;
}

/** The URL links are relative to: the page's `<base>` when it has a valid one. */
function baseUrl(document: ParsedDocument, pageUrl: string): string {
  const href = document.querySelector("base[href]")?.getAttribute("href");
  if (!href) return pageUrl;
  try {
    return new URL(href, pageUrl).href;
  } catch {
    // An invalid <base> is ignored, as browsers do.
    return pageUrl;
  }
}
