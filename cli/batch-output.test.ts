import { describe, expect, it } from "vitest";
import {
  formatCalls,
  formatLlmFigures,
  formatProgress,
  formatScenario,
  formatSummary,
  refundedBeforeNote,
} from "./batch-output.ts";
import type { BatchRow } from "./batch-output.ts";

const row = (over: Partial<BatchRow>): BatchRow => ({
  id: "A",
  label: "a claim",
  claim_id: "clm_1",
  verdict: "ACCEPT",
  expected: "ACCEPT",
  reason_code: "VALIDATION_PASSED",
  reason: "Validation passed",
  order_id: "ord_001",
  amount_eur: 299.99,
  executed: true,
  matches: true,
  expected_reason_code: null,
  ...over,
});

describe("batch output", () => {
  const rejected = row({
    id: "E",
    verdict: "REJECT",
    reason_code: "EXCEEDS_REFUNDABLE_BALANCE",
    executed: false,
    matches: false,
    expected_reason_code: "VALIDATION_PASSED",
  });

  it("shows expected and actual reason codes on a ✗, in the scenario block and the summary", () => {
    const block = formatScenario(5, 6, rejected, { input: "free text", ms: 12 });
    expect(block).toContain("Verdict  : REJECT (EXCEEDS_REFUNDABLE_BALANCE)  expected ACCEPT (VALIDATION_PASSED)  ✗");
    expect(formatSummary([row({}), rejected], { ms: 1000 })).toMatch(
      /✗ REJECT +E +a claim {2}\(expected ACCEPT VALIDATION_PASSED, got REJECT EXCEEDS_REFUNDABLE_BALANCE\)/,
    );
    expect(formatSummary([row({ matches: false, verdict: "NEEDS_REVIEW", reason_code: null })], { ms: 1 })).toContain(
      "(expected ACCEPT, got NEEDS_REVIEW)",
    );
  });

  it("explains a balance rejection caused by an earlier row of the run refunding the same order", () => {
    const note = refundedBeforeNote(rejected, [row({}), row({ id: "B", order_id: "ord_002" })]).note;
    expect(note).toMatch(/^ord_001 was already refunded in this run \(299\.99 EUR by A\)/);
    const shown = formatScenario(5, 6, { ...rejected, ...(note ? { note } : {}) }, { input: "x", ms: 1 });
    expect(shown).toContain(`  Why      : ${note}`);
    expect(formatSummary([{ ...rejected, ...(note ? { note } : {}) }], { ms: 1 })).toContain(`      why: ${note}`);
  });

  it.each([
    ["no earlier refund of the order", [row({ executed: false })]],
    ["an earlier refund of another order", [row({ order_id: "ord_009" })]],
  ])("says nothing with %s", (_name, earlier) => {
    expect(refundedBeforeNote(rejected, earlier)).toEqual({});
  });

  it("says nothing for another reason code", () => {
    expect(refundedBeforeNote({ ...rejected, reason_code: "OUTSIDE_RETURN_WINDOW" }, [row({})])).toEqual({});
  });
});

describe("progress while a claim is waited for", () => {
  it("says how long, the claim's status and the model calls in flight", () => {
    expect(
      formatProgress({
        id: "E",
        claimId: "clm_1",
        status: "RUNNING",
        elapsedMs: 42_400,
        inFlight: [{ task: "decide_refund", elapsedMs: 12_600 }],
        done: 3,
      }),
    ).toBe("  … E clm_1: RUNNING for 42 s; 1 model call in flight (decide_refund 13 s); 3 calls done in this run");
    expect(formatProgress({ id: "E", claimId: "clm_1", status: "RECEIVED", elapsedMs: 10_000, inFlight: [] })).toBe(
      "  … E clm_1: RECEIVED for 10 s; no model call in flight",
    );
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
