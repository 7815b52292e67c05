// Types the web/ files share.

/** What read_url hands on: the page's text and what kind of page it was. */
export interface PageText {
  /** "html", "pdf", "text" (text/* and JSON). */
  kind: "html" | "pdf" | "text";
  /** The page's title, when it has one (HTML, PDF metadata). */
  title?: string;
  text: string;
}
