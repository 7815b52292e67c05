import type { Logger } from "../logging/logger.js";
import type { Orchestrator } from "../types.js";
import type { EventSpec } from "./event-file.js";

/** Time and timers, injectable so a test can walk a schedule through a daylight-saving day. */
export interface EventClock {
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

/** What the bus did, for the gateway's readable log. */
export type EventBusReport =
  | {
      type: "fired";
      id: string;
      /** The thread the prompt went to (a channel target: the new thread, once opened). */
      threadId: string;
      slot: number;
      /** How long after its slot the prompt was sent, ms. */
      delayMs: number;
      late?: true;
    }
  | { type: "skipped"; id: string; slot: number; reason: string }
  | { type: "missed"; id: string; count: number; last: number }
  | { type: "invalid"; id: string; problem: string; file: string }
  /** The start scan is done: `count` events loaded in `ms`. */
  | { type: "loaded"; count: number; ms: number };

/** One loaded event as `guppy events list`, `/status` and `GET /v1/threads` show it. */
export interface ScheduledEvent {
  id: string;
  type: EventSpec["type"];
  target: string;
  schedule?: string;
  timezone?: string;
  /** ISO time of its next firing (none: a periodic schedule that never comes again). */
  nextRun?: string;
}

export interface EventBusOptions {
  /** GUPPY_HOME: events are `<home>/events/*.json`. */
  home: string;
  orchestrator: Pick<Orchestrator, "send" | "sendToChannel">;
  /** GUPPY_TIMEZONE: the zone of schedules that name none (absent: the system's). */
  timezone?: string;
  logger?: Logger;
  report?(report: EventBusReport): void;
  clock?: EventClock;
  /** The watcher's debounce and retry waits (tests shorten nothing by default). */
  debounceMs?: number;
  retryDelaysMs?: readonly number[];
}

export interface EventBus {
  /**
   * Opens the runs journal, watches the folder and reads every event file there, setting the
   * timer as it goes; resolves once all are read (a few hundred before it returns).
   */
  start(): Promise<void>;
  /** Stops the timer and the watcher: nothing fires after this (a gateway shutting down). */
  stop(): void;
  list(): ScheduledEvent[];
  /** The events that target `threadId` (any spelling), for its status. */
  eventsOf(threadId: string): ScheduledEvent[];
}
