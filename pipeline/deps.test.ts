import { describe, expect, it } from "vitest";
import { pipelineSettingsFor, pipelineWaitsFor } from "./deps.ts";

describe("pipelineWaitsFor", () => {
  it.each([1_000, 30_000, 60_000, 120_000, 900_000])(
    "never waits less than the model needs, for calls of up to %d ms",
    (callMs) => {
      const w = pipelineWaitsFor(callMs);
      // A step must outlast its calls: one for the analyst and the fixer, two for the Decision Maker (its self-check repair).
      expect(w.timeouts.analystMs).toBeGreaterThan(callMs);
      expect(w.timeouts.fixerMs).toBeGreaterThan(callMs);
      expect(w.timeouts.decisionMs).toBeGreaterThan(2 * callMs);
      // An invocation outlasts its longest step, and a message stays hidden for longer than an invocation runs.
      expect(w.workerMs).toBeGreaterThanOrEqual(
        Math.max(w.timeouts.analystMs, w.timeouts.decisionMs, w.timeouts.fixerMs),
      );
      expect(w.workerVisibilityMs).toBeGreaterThan(w.workerMs);
      expect(w.extractionMs).toBeGreaterThan(callMs);
      expect(w.extractionVisibilityMs).toBeGreaterThan(w.extractionMs);
      // A claim may use every extraction receive, then analyst, fixer, decision and fixer again.
      expect(w.claimMs).toBeGreaterThan(
        3 * w.extractionVisibilityMs + w.timeouts.analystMs + w.timeouts.decisionMs + 2 * w.timeouts.fixerMs,
      );
    },
  );

  it("grows with the model's budget", () => {
    expect(pipelineWaitsFor(120_000).claimMs).toBeGreaterThan(pipelineWaitsFor(30_000).claimMs);
  });

  it("gives the crew the derived step deadlines and keeps the proposal validity", () => {
    expect(pipelineSettingsFor(30_000)).toEqual({
      proposalValidityMs: 15 * 60_000,
      timeouts: pipelineWaitsFor(30_000).timeouts,
    });
  });
});
