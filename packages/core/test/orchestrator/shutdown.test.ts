import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { INBOX_FILE } from "../../src/inbox/create-inbox.js";
import {
  recordingHandle,
  reportOf,
  stoppableSummary,
  until,
  useOrchestratorHarness,
} from "./harness.js";

describe("shutdown", () => {
  const h = useOrchestratorHarness();

  it("refuses prompts after shutdown and lets a running turn finish within the grace", async () => {
    const o = await h.started();
    const t = recordingHandle("test:c:shutdown");
    const id = t.handle.threadId;
    o.send(id, { type: "prompt", text: "gate slow", thread: t.handle });
    o.send(id, { type: "prompt", text: "queued behind", thread: t.handle });
    await h.gate.entered();
    const done = o.shutdown(5000);
    expect(o.send(id, { type: "prompt", text: "late" })).toMatchObject({ status: "refused" });
    expect(t.notices.some((n) => /saved and will be answered/.test(n))).toBe(true);
    setTimeout(() => h.gate.open(), 30);
    await done;
    expect(t.finals()).toHaveLength(1);
    expect(t.finals()[0]).toMatchObject({ stopReason: "stop" });
    // The queued prompt is still in the inbox for the next start.
    await h.startLinked(t.handle);
    await until(() => t.finals().length === 2);
    expect(t.finals()[1]).toMatchObject({ text: "re: queued behind" });
  });

  it("tells a prompt waiting for its concurrency slot at shutdown that it is saved, as a queued one", async () => {
    const o = await h.started({ maxConcurrent: 1 });
    const a = recordingHandle("test:c:slot-a");
    const b = recordingHandle("test:c:slot-b");
    o.send(a.handle.threadId, { type: "prompt", text: "gate slow", thread: a.handle });
    await h.gate.entered();
    o.send(b.handle.threadId, { type: "prompt", text: "waits for the slot", thread: b.handle });
    expect(o.counters().waitingForSlot).toBe(1);
    const done = o.shutdown(5000);
    expect(b.notices).toEqual([
      "guppy is restarting: your message is saved and will be answered when it is back.",
    ]);
    expect(a.notices).toEqual([]); // running: it may still finish
    setTimeout(() => h.gate.open(), 30);
    await done;
    expect(b.finals()).toEqual([]);
    // Kept, as the notice says: the next start answers it.
    await h.startLinked(b.handle);
    await until(() => b.finals().length === 1);
    expect(b.finals()[0]).toMatchObject({ text: "re: waits for the slot" });
  });

  it("aborts running turns when the shutdown grace runs out, with the context saved", async () => {
    const o = await h.started();
    const t = recordingHandle("test:c:grace");
    o.send(t.handle.threadId, { type: "prompt", text: "gate forever", thread: t.handle });
    await h.gate.entered();
    await o.shutdown(20);
    expect(t.finals()[0]).toMatchObject({ stopReason: "aborted" });
    expect(h.store.loadContext(t.handle.threadId).length).toBeGreaterThanOrEqual(2);
    // The sender is told, and so is anyone reading the thread's log later (GET messages).
    const stopped = "guppy is shutting down: this run was stopped; its progress is saved.";
    expect(t.notices).toEqual([stopped]);
    expect(
      h.store.readLog(t.handle.threadId).map((e) => [e.isBot ? "guppy" : "user", e.text]),
    ).toEqual([
      ["user", "gate forever"],
      ["guppy", stopped],
    ]);
  });

  it("keeps a prompt still waiting for its content in the inbox at shutdown, with its saved text", async () => {
    const o = await h.started();
    const t = recordingHandle("test:c:content-stop");
    const id = t.handle.threadId;
    // An active thread: a prompt with nothing to wait for would start at once.
    o.send(id, { type: "prompt", text: "hello", thread: t.handle });
    await until(() => t.finals().length === 1);
    const never = new Promise<{ text: string }>(() => {});
    o.send(id, { type: "prompt", text: "photo (saved)", content: never, thread: t.handle });
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    await o.shutdown(20_000);
    // It did not wait out the grace for the content that never comes.
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(h.requests).toEqual(["hello"]);
    expect(t.notices).toEqual([
      "guppy is restarting: your message is saved and will be answered when it is back.",
    ]);
    await h.startLinked(t.handle);
    await until(() => t.finals().length === 2);
    expect(h.requests).toEqual(["hello", "photo (saved)"]);
  });

  it("stops a /compact that holds queued prompts when the shutdown grace runs out", async () => {
    const { o, t, id } = await h.threadWithHistory("compact-at-shutdown");
    h.faux.setResponses([stoppableSummary]);
    const compaction = reportOf(o.compact(id));
    await new Promise((r) => setTimeout(r, 20));
    o.send(id, { type: "prompt", text: "four", thread: t.handle });
    const t0 = Date.now();
    await o.shutdown(50);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(await compaction).toBe("Compaction stopped; the context is as it was.");
    // Not run: it stays accepted in the inbox for the next start.
    expect(t.finals()).toHaveLength(3);
    expect(readFileSync(join(h.home, INBOX_FILE), "utf8")).toContain('"text":"four"');
  });
});
