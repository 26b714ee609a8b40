import { describe, expect, it } from "vitest";
import { formatScenario, formatSummary, refundedBeforeNote } from "./batch-output.ts";
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
  const rejected = row({ id: "E", verdict: "REJECT", reason_code: "EXCEEDS_REFUNDABLE_BALANCE", executed: false, matches: false, expected_reason_code: "VALIDATION_PASSED" });

  it("shows expected and actual reason codes on a ✗, in the scenario block and the summary", () => {
    const block = formatScenario(5, 6, rejected, { input: "free text", ms: 12 });
    expect(block).toContain("Verdict  : REJECT (EXCEEDS_REFUNDABLE_BALANCE)  expected ACCEPT (VALIDATION_PASSED)  ✗");
    expect(formatSummary([row({}), rejected], { ms: 1000 })).toMatch(/✗ REJECT +E +a claim {2}\(expected ACCEPT VALIDATION_PASSED, got REJECT EXCEEDS_REFUNDABLE_BALANCE\)/);
    expect(formatSummary([row({ matches: false, verdict: "NEEDS_REVIEW", reason_code: null })], { ms: 1 })).toContain("(expected ACCEPT, got NEEDS_REVIEW)");
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
