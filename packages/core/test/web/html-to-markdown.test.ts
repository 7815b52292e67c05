import { describe, expect, it } from "vitest";
import { htmlToMarkdown, leanHtml } from "../../src/web/html-to-markdown.js";

// What read_url's own Markdown walk writes for an article (it replaced turndown): headings,
// nested lists, fenced code, quotes, tables, emphasis, links and images made absolute against the
// page's <base>, and none of what a reader never sees.

const words = "Guppies like warm water and a steady routine of feeding and cleaning. ".repeat(6);
const page = `<html><head><title>Tank Notes</title><base href="https://cdn.example.org/docs/"></head><body>
<nav><a href="/">NAV-HOME</a></nav>
<article><h1>Tank Notes</h1>
<p>${words} See <a href="setup.html">the setup page</a> and <strong>never</strong> <em>overfeed</em>.</p>
<div hidden>HIDDEN-ATTR text</div><p style="display: none">HIDDEN-STYLE text</p>
<p style="color: red">${words}</p>
<h2>Steps</h2>
<ol><li>Fill the tank<ul><li>with dechlorinated water</li><li>at 24 °C</li></ul></li><li>Add fish</li></ol>
<pre><code class="language-sh">tank --fill
  --temp 24</code></pre>
<blockquote><p>Quoted: ${words}</p></blockquote>
<table><thead><tr><th>Fish</th><th>Food</th></tr></thead><tbody><tr><td>Guppy</td><td>Flakes | shrimp</td></tr></tbody></table>
<p><img src="data:image/png;base64,AAAA" alt="inline"><img src="img/guppy.png" alt="A guppy"> ${words}</p>
<svg><text>SVG-TEXT</text></svg><noscript>NOSCRIPT-TEXT</noscript>
</article></body></html>`;

describe("htmlToMarkdown", () => {
  it("writes an article's structure as Markdown, links and images absolute", async () => {
    const { text, title } = await htmlToMarkdown(page, "https://example.org/a/b");
    expect(title).toBe("Tank Notes");
    expect(text).toMatch(/^# Tank Notes\n\n/);
    expect(text).toContain(
      "See [the setup page](https://cdn.example.org/docs/setup.html) and **never** _overfeed_.",
    );
    expect(text).toContain("## Steps");
    expect(text).toContain(
      "1. Fill the tank\n   - with dechlorinated water\n   - at 24 °C\n2. Add fish",
    );
    expect(text).toContain("```sh\ntank --fill\n  --temp 24\n```");
    expect(text).toMatch(/^> Quoted: Guppies/m);
    expect(text).toContain("| Fish | Food |\n| --- | --- |\n| Guppy | Flakes \\| shrimp |");
    expect(text).toContain("![A guppy](https://cdn.example.org/docs/img/guppy.png)");
    for (const gone of ["NAV-HOME", "HIDDEN-", "SVG-TEXT", "NOSCRIPT-TEXT", "data:image"]) {
      expect(text).not.toContain(gone);
    }
  });

  it("takes a page's one article holding most of its text as it is, minus ads, sharing and related links", async () => {
    const words = "Guppies need plants to hide in and a lid on the tank. ".repeat(6);
    const { text, title } = await htmlToMarkdown(
      `<html><head><title>Plants | Fish Weekly</title></head><body><nav>NAV-LINKS</nav>
<article><h1>Plants for a guppy tank</h1><div class="share-buttons">SHARE-ON-X</div>
<p>${words}</p><aside>ASIDE-TEXT</aside><div class="ad-slot">BUY-NOW</div><p>${words}</p>
<div id="related-posts"><a href="/x">RELATED-POST</a></div><form>FORM-TEXT</form><p>Last <em>word</em>.</p></article>
<footer>FOOTER-TEXT</footer></body></html>`,
      "https://example.org/plants",
    );
    expect(title).toBe("Plants for a guppy tank");
    expect(text).toMatch(/^# Plants for a guppy tank\n\nGuppies need plants/);
    expect(text.match(/Plants for a guppy tank/g)).toHaveLength(1);
    expect(text).toContain("Last _word_.");
    for (const gone of ["NAV-", "SHARE-", "ASIDE-", "BUY-", "RELATED-", "FORM-", "FOOTER-"]) {
      expect(text).not.toContain(gone);
    }
  });

  it("leaves a page whose article holds little of its text to Readability", async () => {
    const words = "Guppies come from the rivers of northeast South America. ".repeat(8);
    const { text } = await htmlToMarkdown(
      `<html><head><title>Origins</title></head><body><article><p>TEASER-ARTICLE short text here that is under the share.</p></article>
<div class="post-body"><p>${words}</p><p>${words}</p><p>${words}</p></div></body></html>`,
      "https://example.org/origins",
    );
    expect(text).toMatch(/^# Origins\n\nGuppies come from the rivers/);
  });

  it("finds an article Readability only finds on a second pass (its page rebuilt as it was)", async () => {
    // The article sits in a block whose class looks like a sidebar: the first pass drops it, finds
    // too little text, and starts again from the page it kept (lazyPageCache rebuilds it).
    const words = "Guppies breed quickly, so a tank fills up within months. ".repeat(5);
    const { text } = await htmlToMarkdown(
      `<html><head><title>Retry</title></head><body><div class="comments-sidebar"><h2>Breeding</h2><p>${words}</p><p>${words}</p><p>Second <b>bold</b> part.<br>After break.</p></div><div>short</div></body></html>`,
      "https://example.org/",
    );
    expect(text).toMatch(/^# Retry\n\n## Breeding\n\nGuppies breed quickly/);
    expect(text).toContain("Second **bold** part.\nAfter break.");
    expect(text).not.toContain("guppy-page-cache");
  });

  it("cuts scripts, styles, comments, inline styles and data: URIs before parsing, keeping a hidden element's style", () => {
    const lean = leanHtml(
      `<script>x()</script><script type="application/ld+json">{"a":1}</script><style>p{}</style><!-- c --><p style="color:red">a</p><p style="display:none">b</p><img src="data:image/png;base64,AA"><iframe src="/x">i</iframe>`,
    );
    expect(lean).toBe(
      `<script type="application/ld+json">{"a":1}</script><p>a</p><p style="display:none">b</p><img>`,
    );
  });
});
