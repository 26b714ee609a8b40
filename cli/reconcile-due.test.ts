// `claims reconcile`'s refund-due lines from a bus journal: the unsettled refunds near their legal deadline.
import { describe, expect, it } from "vitest";
import { reconcile } from "../core/kernel/settlement.ts";
import { refundDueText, refundsDueInJournal, settlementFacts } from "./reconcile.ts";

const DAY = 86_400_000;
const T0 = Date.parse("2026-06-01T10:00:00.000Z");
const iso = (days: number) => new Date(T0 + days * DAY).toISOString();
const line = (type: string, days: number, detail: Record<string, unknown>) => ({
  "detail-type": type,
  time: iso(days),
  detail: { dfid: "d", order_id: "o", verdict_id: "v", ...detail },
});
const executed = (id: string, days: number, extra: Record<string, unknown> = {}) =>
  line("RefundExecuted", days, { execution_id: `exe_${id}`, claim_id: `clm_${id}`, amount_eur: 10, ...extra });

function due(lines: ReturnType<typeof line>[], now: number) {
  return refundsDueInJournal(lines, reconcile(settlementFacts(lines)), now);
}

describe("claims reconcile: refunds due", () => {
  it("names an unsettled refund from 14 − 4 days after its first RefundExecuted, never a settled one", () => {
    const lines = [
      executed("a", 0),
      executed("b", 0),
      line("RefundSettled", 0, { execution_id: "exe_b", claim_id: "clm_b" }),
      executed("c", -2),
      line("RefundFailed", -1, { execution_id: "exe_c", claim_id: "clm_c", failure_reason: "expired_card" }),
      // A RETRY's new execution keeps the claim's clock.
      executed("c2", 3, { claim_id: "clm_c", retry_of: "exe_c" }),
      executed("sim", -30, { simulation_id: "sim_1" }),
    ];
    expect(due(lines, T0 + 8 * DAY - 1)).toEqual([]);
    expect(due(lines, T0 + 10 * DAY)).toEqual([
      { claim_id: "clm_c", due_at: iso(12), days_left: 2 },
      { claim_id: "clm_a", due_at: iso(14), days_left: 4 },
    ]);
  });

  it("takes a return's refund_due_days from its ReturnRequested; the clock starts when the return released the refund", () => {
    const lines = [
      line("ReturnRequested", 0, { execution_id: "exe_r", claim_id: "clm_r", refund_due_days: 7 }),
      executed("r", 5),
    ];
    expect(due(lines, T0 + 8 * DAY - 1)).toEqual([]);
    expect(due(lines, T0 + 8 * DAY)).toEqual([{ claim_id: "clm_r", due_at: iso(12), days_left: 4 }]);
    // Awaiting its return: no RefundExecuted yet, no clock.
    expect(due(lines.slice(0, 1), T0 + 60 * DAY)).toEqual([]);
  });

  it("says the days left, or by how much it is overdue", () => {
    const at = "2026-06-15T10:00:00.000Z";
    expect(refundDueText({ claim_id: "clm_a", due_at: at, days_left: 1 })).toBe(
      `DUE SOON clm_a refund due ${at} (1 day left)`,
    );
    expect(refundDueText({ claim_id: "clm_a", due_at: at, days_left: -3 })).toBe(
      `DUE SOON clm_a refund due ${at} (overdue by 3 days)`,
    );
  });
});
