// Helper of bench/gateway: how late the agents' thread took the faux LLM's answers. Each answer's
// timer is due LATENCY_MS after its request; when the thread is busy with other runs, paused by
// GC or waiting for a CPU, it runs later, and the run's slot (GUPPY_MAX_CONCURRENT) is held
// meanwhile: the rounds (5,000 / 64 ≈ 78) times the mean lateness is most of the wall time over
// the ideal (60–77 % in this project's runs; the rest is the runs' own work and the last round).

/** Mean and 90th percentile of lateness values in ms, or undefined for none. */
export function summarizeLateness(values) {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return { mean, p90: sorted[Math.floor(0.9 * (sorted.length - 1))], count: sorted.length };
}

/** The readable clause for a report line ("" for none). */
export function describeLateness(summary) {
  return summary === undefined
    ? ""
    : `; it took the LLM's answers ${summary.mean.toFixed(1)} ms late on average (90 % within ${summary.p90.toFixed(1)} ms)`;
}
