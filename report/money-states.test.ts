// "Refunded" means paid: each refund's money counted in one state (settled, paid out of band, pending, failed,
// closed unpaid), the authorised total beside them, in the served report as in the function.
import { describe, expect, it } from "vitest";
import type { AuditEvent } from "../core/integrity/audit.ts";
import { moneyStates } from "./money-states.ts";
import { renderServedReport } from "./served.ts";

let seq = 0;
const event = (event_type: string, details: Record<string, unknown>): AuditEvent =>
  ({
    event_id: `evt_${++seq}`,
    event_type,
    dfid: `dfid_${String(details.claim_id)}`,
    root_dfid: `dfid_${String(details.claim_id)}`,
    state: "DONE",
    created_at: new Date(Date.UTC(2026, 5, 1, 12, 0, seq)).toISOString(),
    details,
  }) as unknown as AuditEvent;

const executed = (claim: string, exe: string, cents: number, extra: Record<string, unknown> = {}) =>
  event("CLAIM_REFUND_EXECUTED", { claim_id: claim, execution_id: exe, amount_cents: cents, ...extra });
const settled = (claim: string, exe: string) => event("REFUND_SETTLED", { claim_id: claim, execution_id: exe });
const failed = (claim: string, exe: string) => event("REFUND_FAILED", { claim_id: claim, execution_id: exe });
const decided = (claim: string, decision: string, extra: Record<string, unknown>) =>
  event("REVIEW_DECIDED", { claim_id: claim, decision, ...extra });

/** Ten refunds as the issue found them: three settled, one pending, one failed, one CLOSEd unpaid, one paid out of band, a failed one RETRIED and paid. */
const EVENTS = [
  executed("c1", "e1", 100_00),
  settled("c1", "e1"),
  executed("c2", "e2", 200_00),
  settled("c2", "e2"),
  executed("c3", "e3", 50_00),
  executed("c4", "e4", 80_00),
  failed("c4", "e4"),
  executed("c5", "e5", 120_00),
  failed("c5", "e5"),
  decided("c5", "CLOSE", { execution_id: "e5", paid_out_of_band: false }),
  executed("c6", "e6", 30_00),
  failed("c6", "e6"),
  decided("c6", "CLOSE", { execution_id: "e6", paid_out_of_band: true }),
  executed("c7", "e7", 40_00),
  failed("c7", "e7"),
  executed("c7", "e8", 40_00, { retry_of: "e7" }),
  settled("c7", "e8"),
];

describe("moneyStates", () => {
  it("counts each refund once, in the state its last word put it in, and 'refunded' only when settled", () => {
    expect(moneyStates(EVENTS)).toEqual({
      authorised: { count: 7, eur: 620 },
      settled: { count: 3, eur: 340 },
      paidOutOfBand: { count: 1, eur: 30 },
      pending: { count: 1, eur: 50 },
      failed: { count: 1, eur: 80 },
      closedUnpaid: { count: 1, eur: 120 },
    });
  });

  it("shows the states apart in the served report: Refunded is what the provider settled", () => {
    const page = renderServedReport(EVENTS);
    const value = (key: string) =>
      new RegExp(`data-summary="${key}"[^>]*>([\\s\\S]*?)</dd>`).exec(page)?.[1]?.replace(/<[^>]+>/g, "");
    expect(value("refunds")).toBe("3 (340.00 EUR) settled by the provider");
    expect(value("paid-out-of-band")).toBe("1 (30.00 EUR) CLOSEd by a reviewer as paid");
    expect(value("authorised")).toBe("7 (620.00 EUR)");
    expect(value("refunds-pending")).toBe("1 (50.00 EUR) with the provider");
    expect(value("refunds-failed")).toBe("1 (80.00 EUR)");
    expect(value("closed-unpaid")).toBe("1 (120.00 EUR)");
  });
});
