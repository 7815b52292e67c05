import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// A stand-in web server on 127.0.0.1 for read_url's tests: an article page with navigation,
// scripts and an ad block, redirect chains, big bodies, a PDF, pages in other encodings and
// responses that never end.

export const ARTICLE_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>Reef Fish Care | Example Site</title>
<script>window.tracker = "SCRIPT-IN-HEAD";</script>
<style>.x { color: red }</style></head>
<body>
<nav class="site-nav"><a href="/home">NAV-HOME</a> <a href="/shop">NAV-SHOP</a></nav>
<div class="ad-banner advertisement sponsored">AD-BLOCK buy cheap fish food now</div>
<article>
<h1>Reef Fish Care</h1>
<p>Guppies are small freshwater fish. Read <a href="/guides/water">the water guide</a> before you start.
${"Keep the water clean, warm and well filtered; change a quarter of it every week. ".repeat(12)}</p>
<h2>Feeding</h2>
<p>${"Feed small amounts twice a day, and never more than they eat in two minutes. ".repeat(12)}</p>
<script>document.write("SCRIPT-IN-BODY")</script>
<ul><li>Flakes</li><li>Brine shrimp</li></ul>
</article>
<aside class="sidebar ad">SIDEBAR-AD sponsored links</aside>
<footer>FOOTER-TEXT copyright</footer>
</body></html>`;

/** A tiny valid one-page PDF whose page says `text` (built by hand: objects and an xref table). */
export function tinyPdf(text: string, title = "Tiny Test PDF"): Buffer {
  const stream = `BT /F1 24 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    `<< /Title (${title}) >>`,
  ];
  let pdf = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(pdf.length);
    pdf += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) pdf += `${String(offset).padStart(10, "0")} 00000 n \n`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info 6 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, "latin1");
}

export interface PageServer {
  /** http://127.0.0.1:<port> */
  origin: string;
  port: number;
  /** Paths asked for, in order. */
  hits: string[];
  stop(): Promise<void>;
}

const SIX_MB = 6 * 1024 * 1024;

export async function startPageServer(): Promise<PageServer> {
  const hits: string[] = [];
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    hits.push(url.pathname);
    open.add(res);
    res.on("close", () => open.delete(res));
    const path = url.pathname;
    const redirect = /^\/r\/(\d+)$/.exec(path);
    if (redirect) {
      const left = Number(redirect[1]);
      if (left === 0) {
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
        res.end("end of the redirect chain");
        return;
      }
      res.writeHead(302, { location: `/r/${left - 1}` });
      res.end();
      return;
    }
    switch (path) {
      case "/article":
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(ARTICLE_HTML);
        return;
      case "/notes.txt":
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("plain notes\nline two");
        return;
      case "/data.json":
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"fish":"guppy","count":3}');
        return;
      case "/image.png":
        res.writeHead(200, { "content-type": "image/png" });
        res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]));
        return;
      case "/doc.pdf":
        res.writeHead(200, { "content-type": "application/pdf" });
        res.end(tinyPdf("Hello from a tiny PDF"));
        return;
      case "/big": {
        const line = Buffer.from(`${"x".repeat(1023)}\n`);
        res.writeHead(200, { "content-type": "text/plain", "content-length": String(SIX_MB) });
        for (let i = 0; i < SIX_MB / 1024; i++) res.write(line);
        res.end();
        return;
      }
      case "/big-chunked": {
        // No content-length: Node sends it chunked. Written in pieces so it streams.
        res.writeHead(200, { "content-type": "text/plain" });
        const piece = Buffer.from("y".repeat(64 * 1024));
        let sent = 0;
        const more = () => {
          while (sent < SIX_MB && !res.destroyed) {
            sent += piece.length;
            if (!res.write(piece)) {
              res.once("drain", more);
              return;
            }
          }
          if (!res.destroyed) res.end();
        };
        more();
        return;
      }
      case "/latin1":
        res.writeHead(200, { "content-type": "text/html; charset=windows-1252" });
        // "Café – naïve €5" in windows-1252.
        res.end(
          Buffer.concat([
            Buffer.from("<html><head><title>Caf"),
            Buffer.from([0xe9]),
            Buffer.from("</title></head><body><p>Caf"),
            Buffer.from([0xe9, 0x20, 0x96, 0x20]),
            Buffer.from("na"),
            Buffer.from([0xef]),
            Buffer.from("ve "),
            Buffer.from([0x80]),
            Buffer.from("5</p></body></html>"),
          ]),
        );
        return;
      case "/meta-charset":
        res.writeHead(200, { "content-type": "text/html" });
        res.end(
          Buffer.concat([
            Buffer.from('<html><head><meta charset="iso-8859-1"><title>Gr'),
            Buffer.from([0xfc]),
            Buffer.from("n</title></head><body><p>Gr"),
            Buffer.from([0xfc]),
            Buffer.from("ne Fische, "),
            Buffer.from([0xdf]),
            Buffer.from("e Gr"),
            Buffer.from([0xf6, 0xdf]),
            Buffer.from("e</p></body></html>"),
          ]),
        );
        return;
      case "/to-loopback":
        res.writeHead(301, { location: `http://127.0.0.1:${port()}/article` });
        res.end();
        return;
      case "/to-file":
        res.writeHead(302, { location: "file:///etc/passwd" });
        res.end();
        return;
      case "/hang-body":
        res.writeHead(200, { "content-type": "text/html" });
        res.write("<html><body><p>starts but never ends");
        return;
      case "/hang":
        return;
      case "/missing":
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("no such page");
        return;
      default:
        res.writeHead(404);
        res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = () => (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port()}`,
    port: port(),
    hits,
    stop: async () => {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
