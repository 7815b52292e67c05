// The JSON of the HTTP API's routes, as the routes answer it and the control UI reads it (the UI
// imports this file by path, types only: it must import nothing but types that resolve there
// too, see packages/guppy/ui/tsconfig.json). docs/channels.md "HTTP API" describes the routes.
import type { EventType } from "@guppy/core/event-kinds";

/** Where an event's text goes: an existing thread, or a new thread opened in a channel. */
export type EventTargetJson = { thread: string } | { adapter: string; channel: string };

/** An event as GET /v1/events lists it (and POST/PATCH answer it). */
export interface EventJson {
  id: string;
  type: EventType;
  target: EventTargetJson;
  text: string;
  /** ISO time (one-shot), cron expression (periodic), null (immediate). */
  schedule: string | null;
  /** The IANA zone the schedule is read in; absent: the gateway's (GUPPY_TIMEZONE). */
  timezone?: string;
  /** ISO 8601 in UTC; null when the event never fires again. */
  next_run: string | null;
}

/** A thread's event as GET /v1/threads lists it (and GET /v1/threads/{id}/status). */
export interface ThreadEventJson {
  id: string;
  type: EventType;
  schedule: string | null;
  next_run: string | null;
}

/** GET /v1/events. */
export interface EventListJson {
  events: EventJson[];
}

/** DELETE /v1/events/{id}. */
export interface EventDeletedJson {
  status: "deleted";
  id: string;
}

/**
 * The body of POST /v1/events and PATCH /v1/events/{id}: fields the API names; in an edit, the
 * given ones replace the file's and `null` removes `schedule` or `timezone`.
 */
export interface EventBody {
  id?: string;
  type?: EventType;
  text?: string;
  schedule?: string | null;
  timezone?: string | null;
  thread?: string;
  adapter?: string;
  channel?: string;
}

/** Totals of ledger requests, as the API spells them. */
export interface UsageTotalsJson {
  requests: number;
  input: number;
  cache_read: number;
  cache_write: number;
  output: number;
  /** Dollars reported by the providers; a subscription's requests add none. */
  cost: number;
  /** Of `requests`, those made through a subscription's sign-in: no spend, not in `cost`. */
  subscription_requests: number;
}

/** What GET /v1/usage groups by (`?by=`). */
export type UsageGrouping = "day" | "thread" | "model";

/** A row of GET /v1/usage: its key under the grouping's name (`day`, `thread` or `model`). */
export type UsageRowJson<B extends UsageGrouping> = UsageTotalsJson & { [K in B]: string };

/** GET /v1/usage, and `guppy usage --json`. */
export interface UsageReportJson<B extends UsageGrouping = UsageGrouping> {
  days: number;
  /** The first local day counted and today (`YYYY-MM-DD`, the gateway's time zone). */
  from: string;
  to: string;
  by: B;
  /** Only days, threads or models with requests; days oldest first, else by cost. */
  rows: Array<UsageRowJson<B>>;
  total: UsageTotalsJson;
}
