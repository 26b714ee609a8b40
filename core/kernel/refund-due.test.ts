import { describe, expect, it } from "vitest";
import { REFUND_DUE_WARNING_DAYS, refundDue, refundsDueSoon } from "./refund-due.ts";

const DAY = 86_400_000;
const decidedAt = "2026-06-01T10:00:00.000Z";
const at = (days: number, from = decidedAt) => Date.parse(from) + days * DAY;

describe("refund due", () => {
  it("warns exactly at refund_due_days − 4 days after the decision, not a millisecond before", () => {
    const clock = { decidedAt, returnAsked: false, refundDueDays: 14 };
    expect(refundDue(clock, at(14 - REFUND_DUE_WARNING_DAYS) - 1)?.warning).toBe(false);
    expect(refundDue(clock, at(10))).toEqual({ due_at: "2026-06-15T10:00:00.000Z", days_left: 4, warning: true });
    expect(refundDue(clock, at(15))).toEqual({ due_at: "2026-06-15T10:00:00.000Z", days_left: -1, warning: true });
  });

  it("defaults refund_due_days to 14 for a policy without returns", () => {
    expect(refundDue({ decidedAt, returnAsked: false }, at(0))?.due_at).toBe("2026-06-15T10:00:00.000Z");
    expect(refundDue({ decidedAt, returnAsked: false }, at(9.99))?.warning).toBe(false);
  });

  it("starts the clock at the return's pay_on event, and has none while the return is awaited", () => {
    const received = "2026-06-20T08:00:00.000Z";
    expect(refundDue({ decidedAt, returnAsked: true, refundDueDays: 7 }, at(60))).toBeUndefined();
    const due = refundDue(
      { decidedAt, returnAsked: true, returnReceivedAt: received, refundDueDays: 7 },
      at(3, received),
    );
    expect(due).toEqual({ due_at: "2026-06-27T08:00:00.000Z", days_left: 4, warning: true });
    expect(
      refundDue({ decidedAt, returnAsked: true, returnReceivedAt: received, refundDueDays: 7 }, at(2, received))
        ?.warning,
    ).toBe(false);
  });

  it("names only unsettled refunds at their warning, soonest due first", () => {
    const lines = refundsDueSoon(
      [
        { claim_id: "clm_settled", decidedAt, returnAsked: false, settled: true },
        { claim_id: "clm_late", decidedAt, returnAsked: false, settled: false },
        { claim_id: "clm_early", decidedAt: "2026-05-30T10:00:00.000Z", returnAsked: false, settled: false },
        { claim_id: "clm_recent", decidedAt: "2026-06-10T10:00:00.000Z", returnAsked: false, settled: false },
        { claim_id: "clm_awaiting", decidedAt, returnAsked: true, settled: false },
      ],
      at(10),
    );
    expect(lines).toEqual([
      { claim_id: "clm_early", due_at: "2026-06-13T10:00:00.000Z", days_left: 2 },
      { claim_id: "clm_late", due_at: "2026-06-15T10:00:00.000Z", days_left: 4 },
    ]);
  });
});
