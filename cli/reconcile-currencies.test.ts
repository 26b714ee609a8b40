// `claims reconcile` never adds two currencies (issue 32): a journal holding an EUR and a USD refund (the USD one with
// `amount` only, as the bus carries it) totals EUR apart from USD, and a refund from before currencies still counts.
import { describe, expect, it } from "vitest";
import { reconcile } from "../core/kernel/settlement.ts";
import { settlementFacts, shownApart } from "./reconcile.ts";

const executed = (id: string, amount: Record<string, unknown>) => ({
  "detail-type": "RefundExecuted",
  time: "2026-12-01T10:00:00Z",
  detail: { execution_id: id, claim_id: `clm_${id}`, dfid: "d", order_id: "o", verdict_id: "v", ...amount },
});
const settled = (id: string) => ({
  "detail-type": "RefundSettled",
  time: "2026-12-01T10:01:00Z",
  detail: { execution_id: id, claim_id: `clm_${id}`, provider: "stripe" },
});

describe("reconcile in several currencies", () => {
  it("totals EUR apart from USD and KWD, reading amount when amount_eur is absent", () => {
    const facts = settlementFacts([
      executed("e1", { amount_eur: 120, amount: { value: "120.00", currency: "EUR" } }),
      executed("e2", { amount: { value: "45.00", currency: "USD" } }),
      executed("e3", { amount: { value: "12.345", currency: "KWD" } }),
      executed("e4", { amount_eur: 10 }),
      settled("e1"),
      settled("e2"),
    ]);
    const result = reconcile(facts);
    expect(result.refunds.map((r) => [r.execution_id, r.amount_eur, r.currency ?? "EUR", r.status])).toEqual([
      ["e1", 120, "EUR", "SETTLED"],
      ["e2", 45, "USD", "SETTLED"],
      ["e3", 12.345, "KWD", "PENDING"],
      ["e4", 10, "EUR", "PENDING"],
    ]);
    expect(result.totals).toEqual({
      settled_eur: 120,
      pending_eur: 10,
      failed_eur: 0,
      currencies: {
        KWD: { settled: "0.000", pending: "12.345", failed: "0.000" },
        USD: { settled: "45.00", pending: "0.00", failed: "0.00" },
      },
    });
  });

  it("keeps the EUR-only totals as they were when every refund is in EUR", () => {
    const result = reconcile(settlementFacts([executed("e1", { amount_eur: 99.99 }), settled("e1")]));
    expect(result.totals).toEqual({ settled_eur: 99.99, pending_eur: 0, failed_eur: 0 });
  });

  it("sums only EUR refunds in what it shows apart", () => {
    const closed = (id: string) => ({
      "detail-type": "ReviewDecided",
      time: "2026-12-01T11:00:00Z",
      detail: { execution_id: id, decision: "CLOSE", paid_out_of_band: false },
    });
    const facts = settlementFacts([
      executed("e1", { amount_eur: 20 }),
      executed("e2", { amount: { value: "30.00", currency: "USD" } }),
      closed("e1"),
      closed("e2"),
    ]);
    const apart = shownApart(facts, reconcile(facts));
    expect(apart.closed_unpaid).toMatchObject({ count: 2, eur: 20 });
    expect(apart.closed_unpaid.refunds.map((r) => r.currency ?? "EUR")).toEqual(["EUR", "USD"]);
  });
});
