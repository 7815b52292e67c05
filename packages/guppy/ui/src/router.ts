import { useEffect, useState } from "preact/hooks";

// Where the page is, in the URL's fragment: #/chat/<thread id>, #/access, #/schedules, #/usage,
// #/status. The fragment only chooses a page; it never names a server (client.ts).

export const PAGES = ["chat", "access", "schedules", "usage", "status"] as const;
export type PageName = (typeof PAGES)[number];

export interface Route {
  page: PageName;
  /** The rest of the fragment, decoded: the thread id on the chat page. */
  param?: string;
}

export function parseRoute(hash: string): Route {
  const [, name = "", ...rest] = hash.replace(/^#/, "").split("/");
  const page = (PAGES as readonly string[]).includes(name) ? (name as PageName) : "chat";
  let param: string | undefined;
  if (rest.length > 0 && rest.join("/") !== "") {
    try {
      param = decodeURIComponent(rest.join("/"));
    } catch {
      param = undefined;
    }
  }
  return param === undefined ? { page } : { page, param };
}

export function routeHref(page: PageName, param?: string): string {
  return param === undefined ? `#/${page}` : `#/${page}/${encodeURIComponent(param)}`;
}

export function navigate(page: PageName, param?: string): void {
  location.hash = routeHref(page, param);
}

/** The current route, following the fragment. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}
