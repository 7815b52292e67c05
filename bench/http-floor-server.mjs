// Helper of bench/gateway: the HTTP floor — a bare Hono app on @hono/node-server that checks the
// bearer token, reads the JSON body, waits for one of 64 slots and 20 ms, and answers a chat
// completion. No guppy at all: what the framework and this machine's loopback cost under the same
// client. Prints its port on stdout.
import { createAdaptorServer } from "@hono/node-server";
import { Hono } from "hono";
import { ACCEPT_BACKLOG } from "../packages/guppy/dist/channels/http/listen-http.js";

const SLOTS = Number(process.argv[2] ?? 64);
const LATENCY_MS = Number(process.argv[3] ?? 20);
let free = SLOTS;
const waiting = [];
const acquire = () => {
  if (free === 0) return new Promise((resolve) => waiting.push(resolve));
  free--;
  return Promise.resolve();
};
const release = () => {
  const next = waiting.shift();
  if (next) next();
  else free++;
};

const app = new Hono();
app.use("*", async (c, next) => {
  if (c.req.header("authorization") !== "Bearer floor") return c.json({ error: "token" }, 401);
  await next();
});
app.post("/v1/chat/completions", async (c) => {
  const body = JSON.parse(await c.req.text());
  await acquire();
  await new Promise((resolve) => setTimeout(resolve, LATENCY_MS));
  release();
  return c.json({
    id: "floor",
    object: "chat.completion",
    model: body.model,
    choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  });
});
// The same accept backlog as guppy's HTTP API (listen-http.ts), so that a burst of new
// connections costs both servers the same.
const server = createAdaptorServer({ fetch: app.fetch, hostname: "127.0.0.1" });
server.listen({ host: "127.0.0.1", port: 0, backlog: ACCEPT_BACKLOG }, () =>
  process.stdout.write(`${server.address().port}\n`),
);
process.on("SIGTERM", () => server.close(() => process.exit(0)));
