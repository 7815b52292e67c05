import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A pass-through HTTP proxy in front of a mock LLM that records each request's Authorization
 * header as sent: aimock's journal shows key headers as "[REDACTED]", and a test of which key
 * guppy sent needs the value. Binds 127.0.0.1; `stop()` closes it.
 */
export interface HeaderProxy {
  url: string;
  /** `{ path, authorization }` of each request, oldest first. */
  seen: Array<{ path: string; authorization: string }>;
  stop(): Promise<void>;
}

export async function startHeaderProxy(target: string): Promise<HeaderProxy> {
  const seen: HeaderProxy["seen"] = [];
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? "", authorization: req.headers.authorization ?? "" });
    const upstream = request(
      new URL(req.url ?? "/", target),
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
