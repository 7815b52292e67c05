import type { MessagePort } from "node:worker_threads";
import type { OrchestratorEvent, RunnerEvent, SendResult } from "@guppy/core";
import { createFileThreadLog } from "@guppy/core/state";
import type {
  BackendCalls,
  HttpBackend,
  HttpMessage,
  PromptReply,
  ReplyEvents,
} from "./http-backend.js";
import { listThreadDirs } from "./list-thread-dirs.js";

/**
 * The HTTP backend across a MessagePort: the worker (http-worker.ts) calls `createRemoteBackend`,
 * the main thread answers with `serveBackend` over the real orchestrator. A call is one message
 * each way (a plain chat answer's usage and end ride with its result); what one side posts in one
 * turn of its event loop crosses as one batch.
 */

/** A prompt as it crosses: the reply's listener stays in the worker, only what it wants goes. */
type WireMessage =
  | (Omit<Extract<HttpMessage, { type: "prompt" }>, "reply"> & { reply?: ReplyEvents })
  | Exclude<HttpMessage, { type: "prompt" }>;

/** SendResult without its promise: `synced` follows as its own message when asked for. */
type WireSendResult =
  | { status: "queued"; inboxId: string; position: number; deferred: boolean }
  | Exclude<SendResult, { status: "queued" }>;

/** The calls that go by name; a call of two arguments would not type-check here. */
type CallName = keyof OneArgument<BackendCalls>;
type OneArgument<T extends Record<keyof T, (arg: never) => Promise<unknown>>> = T;

/** Worker → main. `call` numbers a call; later messages about it (events, sync) carry it. */
export type BackendRequest =
  | { type: "call"; call: number; method: CallName; arg: unknown }
  | { type: "send"; call: number; threadId: string; message: WireMessage; synced: boolean }
  | { type: "subscribe"; call: number; threadId: string }
  | { type: "unsubscribe"; call: number };

/** What a prompt's run sent back: a runner event, or guppy's notice instead of a run. */
type ReplyOutcome = { type: "event"; event: RunnerEvent } | { type: "notice"; text: string };

/** Main → worker. */
export type BackendReply =
  | { type: "answer"; call: number; value: unknown }
  /** `outcomes`: what the reply got before the result went (a plain answer: all of it). */
  | { type: "sent"; call: number; result: WireSendResult; outcomes: ReplyOutcome[] }
  | { type: "failed"; call: number; message: string }
  | { type: "synced"; call: number; error?: string }
  | { type: "reply"; call: number; outcome: ReplyOutcome }
  | { type: "event"; call: number; event: OrchestratorEvent };

type Port = Pick<MessagePort, "postMessage" | "on" | "off">;

/** Posts what one turn of the event loop sends as one message: each message wakes the other thread. */
function batchedPoster<T>(port: Port): (message: T) => void {
  let batch: T[] = [];
  const flush = () => {
    const out = batch;
    batch = [];
    try {
      port.postMessage(out);
    } catch {
      // Not cloneable as is (an event holding a class instance): its JSON form is.
      port.postMessage(JSON.parse(JSON.stringify(out)) as T[]);
    }
  };
  return (message) => {
    if (batch.length === 0) setImmediate(flush);
    batch.push(message);
  };
}

/** How many of the worker's requests the main thread takes per turn, so a turn stays short. */
export const REQUESTS_PER_TURN = 16;

/** Answers a remote backend's calls on `port` with `backend`; returns a function that stops. */
export function serveBackend(port: Port, backend: HttpBackend): () => void {
  const subscriptions = new Map<number, () => void>();
  const post = batchedPoster<BackendReply>(port);
  const failed = (call: number) => (error: unknown) =>
    post({ type: "failed", call, message: error instanceof Error ? error.message : String(error) });

  const onRequest = (request: BackendRequest) => {
    const { call } = request;
    switch (request.type) {
      case "send": {
        const { message } = request;
        let relay: Relay | undefined;
        let local: HttpMessage;
        if (message.type !== "prompt") local = message;
        else {
          const { reply, ...rest } = message;
          relay = reply ? relayReply(call, reply, post) : undefined;
          local = relay ? { ...rest, reply: relay.reply } : rest;
        }
        backend.send(request.threadId, local).then((result) => {
          const { wire, synced } = splitResult(result);
          if (relay) relay.sent(wire);
          else post({ type: "sent", call, result: wire, outcomes: [] });
          // Only a caller that waits for the disk hears of it (core logs a failed sync).
          if (!synced || !request.synced) return;
          synced.then(
            () => post({ type: "synced", call }),
            (error: unknown) => post({ type: "synced", call, error: String(error) }),
          );
        }, failed(call));
        return;
      }
      case "call": {
        const method = backend[request.method] as (arg: unknown) => Promise<unknown>;
        method
          .call(backend, request.arg)
          .then((value) => post({ type: "answer", call, value }), failed(call));
        return;
      }
      case "subscribe":
        if (backend.subscribe) {
          subscriptions.set(
            call,
            backend.subscribe(request.threadId, (event) => post({ type: "event", call, event })),
          );
        }
        return;
      case "unsubscribe":
        subscriptions.get(call)?.();
        subscriptions.delete(call);
        return;
    }
  };
  // A burst is taken REQUESTS_PER_TURN at a time, in order, so the timers and I/O of running
  // runs are not held up behind it.
  let pending: BackendRequest[] = [];
  let next = 0;
  const take = () => {
    const end = Math.min(next + REQUESTS_PER_TURN, pending.length);
    while (next < end) {
      const request = pending[next++] as BackendRequest;
      try {
        onRequest(request);
      } catch (error) {
        failed(request.call)(error); // and the rest of the burst is still taken
      }
    }
    if (next < pending.length) setImmediate(take);
    else {
      pending = [];
      next = 0;
    }
  };
  const onBatch = (batch: BackendRequest[]) => {
    const idle = pending.length === 0;
    for (const request of batch) pending.push(request);
    if (idle) take();
  };
  port.on("message", onBatch);
  return () => {
    port.off("message", onBatch);
    // The worker is gone: what it asked and this side has not taken yet was never answered.
    pending = [];
    next = 0;
    for (const unsubscribe of subscriptions.values()) unsubscribe();
    subscriptions.clear();
  };
}

/** A SendResult as it crosses, and its `synced` promise, which cannot. */
function splitResult(result: SendResult): { wire: WireSendResult; synced?: Promise<void> } {
  if (result.status !== "queued") return { wire: result };
  const { synced, ...rest } = result;
  return { wire: { ...rest, deferred: synced !== undefined }, ...(synced ? { synced } : {}) };
}

interface Relay {
  reply: PromptReply;
  /** The send's result: posted with what the reply holds, now or (a plain answer) at its end. */
  sent(result: WireSendResult): void;
}

/**
 * A prompt's reply on its way to the worker: a streamed answer's events follow its result; a
 * plain answer's outcome (usage and end, or a notice) goes with the result when the run ends.
 */
function relayReply(call: number, events: ReplyEvents, post: (reply: BackendReply) => void): Relay {
  let result: WireSendResult | undefined;
  let posted = false;
  const held: ReplyOutcome[] = [];
  const ends = (o: ReplyOutcome) => o.type === "notice" || o.event.type === "run_end";
  const flush = (sent: WireSendResult) => {
    posted = true;
    post({ type: "sent", call, result: sent, outcomes: held.splice(0) });
  };
  const push = (outcome: ReplyOutcome) => {
    if (posted) return post({ type: "reply", call, outcome });
    held.push(outcome);
    if (result && ends(outcome)) flush(result);
  };
  return {
    reply: {
      events,
      onEvent: (event) => push({ type: "event", event }),
      notice: (text) => push({ type: "notice", text }),
    },
    sent(sent) {
      result = sent;
      if (events === "all" || sent.status !== "queued" || held.some(ends)) flush(sent);
    },
  };
}

/**
 * The backend for the worker: a call of BackendCalls is a message to `serveBackend` on the main
 * thread, by name; the worker itself reads thread logs (through the state seam) and lists the
 * thread directories.
 */
export function createRemoteBackend(
  port: Port,
  options: { events: boolean; home: string },
): HttpBackend {
  let next = 0;
  const answers = new Map<number, (reply: BackendReply) => void>();
  const replies = new Map<number, PromptReply>();
  const syncs = new Map<number, { resolve(): void; reject(error: Error): void }>();
  const streams = new Map<number, (event: OrchestratorEvent) => void>();

  const answer = (reply: BackendReply) => {
    const waiting = answers.get(reply.call);
    answers.delete(reply.call);
    waiting?.(reply);
  };
  /** Hands a run's event or notice to its reply; the reply is done after the last one. */
  const deliver = (call: number, outcome: ReplyOutcome) => {
    const target = replies.get(call);
    if (outcome.type === "notice" || outcome.event.type === "run_end") replies.delete(call);
    if (outcome.type === "notice") target?.notice(outcome.text);
    else target?.onEvent(outcome.event);
  };

  const postRequest = batchedPoster<BackendRequest>(port);
  const onReply = (reply: BackendReply) => {
    switch (reply.type) {
      case "sent":
        for (const outcome of reply.outcomes) deliver(reply.call, outcome);
        answer(reply);
        return;
      case "reply":
        deliver(reply.call, reply.outcome);
        return;
      case "synced": {
        const sync = syncs.get(reply.call);
        syncs.delete(reply.call);
        if (reply.error === undefined) sync?.resolve();
        else sync?.reject(new Error(reply.error));
        return;
      }
      case "event":
        streams.get(reply.call)?.(reply.event);
        return;
      default:
        answer(reply);
    }
  };
  port.on("message", (batch: BackendReply[]) => {
    for (const reply of batch) onReply(reply);
  });

  /** Posts a request and resolves with its answer (rejects on "failed"). */
  const ask = <T extends "answer" | "sent">(
    request: BackendRequest,
    expect: T,
  ): Promise<Extract<BackendReply, { type: T }>> =>
    new Promise((resolve, reject) => {
      answers.set(request.call, (reply) => {
        if (reply.type === expect) resolve(reply as Extract<BackendReply, { type: T }>);
        else if (reply.type === "failed") reject(new Error(reply.message));
        else reject(new Error(`expected a "${expect}" answer, got "${reply.type}"`));
      });
      postRequest(request);
    });
  const call = <M extends CallName>(method: M, arg: Parameters<BackendCalls[M]>[0]) =>
    ask({ type: "call", call: next++, method, arg }, "answer").then(
      (reply) => reply.value as Awaited<ReturnType<BackendCalls[M]>>,
    );

  const own: Omit<HttpBackend, CallName> = {
    async send(threadId, message) {
      const call = next++;
      let wire: WireMessage;
      let onDisk: Promise<void> | undefined;
      if (message.type !== "prompt") wire = message;
      else {
        const { reply, ...rest } = message;
        wire = reply ? { ...rest, reply: reply.events } : rest;
        if (reply) replies.set(call, reply);
        // Without a reply the caller acknowledges once on disk (a 202): it waits for `synced`.
        else onDisk = new Promise<void>((resolve, reject) => syncs.set(call, { resolve, reject }));
      }
      const forget = () => {
        replies.delete(call);
        syncs.delete(call);
      };
      let result: WireSendResult;
      try {
        const synced = onDisk !== undefined;
        result = (await ask({ type: "send", call, threadId, message: wire, synced }, "sent"))
          .result;
      } catch (error) {
        forget();
        throw error;
      }
      if (result.status !== "queued") {
        forget();
        return result;
      }
      const { deferred, ...queued } = result;
      if (!deferred || !onDisk) {
        syncs.delete(call);
        return queued;
      }
      return { ...queued, synced: onDisk };
    },
    // Listed and read here, in the worker: the walk and a long log cost the agents' thread nothing.
    threadIdsOnDisk: () => listThreadDirs(options.home),
    log: createFileThreadLog(options.home),
    subscribe: options.events
      ? (threadId, listener) => {
          const call = next++;
          streams.set(call, listener);
          postRequest({ type: "subscribe", call, threadId });
          return () => {
            streams.delete(call);
            postRequest({ type: "unsubscribe", call });
          };
        }
      : undefined,
  };
  // Any other name is a call of BackendCalls, found on the prototype (`send` and the others
  // above stay plain properties): its forwarder is made once, on first use.
  const forwarders = new Map<string, (arg: unknown) => Promise<unknown>>();
  const calls = new Proxy(Object.prototype, {
    get(target, name, receiver) {
      if (typeof name !== "string" || name in target || name === "then") {
        return Reflect.get(target, name, receiver);
      }
      let forward = forwarders.get(name);
      if (!forward) {
        forward = (arg) => call(name as CallName, arg as never);
        forwarders.set(name, forward);
      }
      return forward;
    },
  });
  return Object.assign(Object.create(calls), own) as HttpBackend;
}
