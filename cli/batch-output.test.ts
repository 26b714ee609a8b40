import { describe, expect, it } from "vitest";
import { formatCalls, formatLlmFigures, formatProgress } from "./batch-output.ts";

describe("progress while a claim is waited for", () => {
  it("says how long, the claim's status and the model calls in flight", () => {
    expect(formatProgress({ id: "E", claimId: "clm_1", status: "RUNNING", elapsedMs: 42_400, inFlight: [{ task: "decide_refund", elapsedMs: 12_600 }], done: 3 })).toBe(
      "  … E clm_1: RUNNING for 42 s; 1 model call in flight (decide_refund 13 s); 3 calls done in this run",
    );
    expect(formatProgress({ id: "E", claimId: "clm_1", status: "RECEIVED", elapsedMs: 10_000, inFlight: [] })).toBe("  … E clm_1: RECEIVED for 10 s; no model call in flight");
  });
});

describe("the model's figures", () => {
  const calls = [
    { task: "analyze_claim", ok: true, attempts: 1, ms: 4_000 },
    { task: "decide_refund", ok: false, code: "LLM_TIMEOUT", attempts: 1, ms: 30_000 },
    { task: "fix_step", ok: true, attempts: 1, ms: 8_000 },
    { task: "analyze_claim", ok: false, code: "LLM_UNREACHABLE", attempts: 0, ms: 0 },
  ];

  it("gives one claim's calls, their time and what failed", () => {
    expect(formatCalls(calls.slice(0, 3))).toBe("3 calls, 42.0 s (max 30.0 s); 1 failed: LLM_TIMEOUT");
    expect(formatCalls([])).toBe("no model calls");
  });

  it("gives a run's time per call and per claim, and says which calls were never sent", () => {
    expect(formatLlmFigures(calls, [12_000, 30_000])).toEqual([
      "LLM: 4 calls (analyze_claim 2, decide_refund 1, fix_step 1); per call mean 10.5 s, median 8.0 s, max 30.0 s; 2 failed: LLM_TIMEOUT, LLM_UNREACHABLE (not sent: endpoint down).",
      "Per claim: mean 21.0 s, max 30.0 s.",
    ]);
  });
});
