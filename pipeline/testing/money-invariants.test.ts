// The money invariants checker finds each kind of violation it names, allows at-least-once repeats, and —
// given the ledgers — finds a reservation no event announced and an announcement without a reservation.
import { describe, expect, it } from "vitest";
import { checkMoneyInvariants } from "./money-invariants.ts";
import type { LedgerFact, PublishedEvent } from "./money-invariants.ts";

const ORDERS: Record<string, number> = { ord_a: 300, ord_b: 1200 };
const facts = (ledgers?: LedgerFact[]) => ({
  orderAmountEur: (id: string) => ORDERS[id],
  limitEur: 500,
  ...(ledgers ? { ledgers } : {}),
});

const verdict = (claim: string, v: "ACCEPT" | "REJECT" | "ESCALATE", id = `ver_${claim}`): PublishedEvent => ({
  detailType: "ClaimVerdict",
  detail: { verdict_id: id, claim_id: claim, verdict: v },
});
const refund = (claim: string, order: string, eur: number, extra: Record<string, unknown> = {}): PublishedEvent => ({
  detailType: "RefundExecuted",
  detail: {
    execution_id: `exe_${claim}`,
    claim_id: claim,
    order_id: order,
    amount_eur: eur,
    verdict_id: `ver_${claim}`,
    ...extra,
  },
});
const approval = (claim: string, eur: number): PublishedEvent => ({
  detailType: "ReviewDecided",
  detail: {
    review_id: `rev_${claim}`,
    claim_id: claim,
    decision: "APPROVE",
    amount_eur: eur,
    execution_id: `exe_${claim}`,
  },
});

describe("checkMoneyInvariants", () => {
  it("passes an ACCEPT with its refund, a REJECT, and an approved escalation, each published twice", () => {
    const events = [
      verdict("c1", "ACCEPT"),
      refund("c1", "ord_a", 100),
      verdict("c2", "REJECT"),
      verdict("c3", "ESCALATE"),
      approval("c3", 700),
      refund("c3", "ord_b", 700, { approved_by: "alice" }),
    ];
    const summary = checkMoneyInvariants([...events, ...events], facts());
    expect(summary.violations).toEqual([]);
    expect({
      accepts: summary.accepts,
      refunds: summary.refunds,
      approved: summary.approvedRefunds,
      cents: summary.refundedCents,
    }).toEqual({ accepts: 1, refunds: 2, approved: 1, cents: 80_000 });
  });

  it.each([
    ["an ACCEPT without its refund", [verdict("c1", "ACCEPT")], /ACCEPT ver_c1 of claim c1 has 0 RefundExecuted/],
    ["a refund without an ACCEPT", [refund("c1", "ord_a", 10)], /has no ClaimVerdict ACCEPT/],
    [
      "two verdicts for one claim",
      [verdict("c1", "REJECT", "v1"), verdict("c1", "ESCALATE", "v2")],
      /claim c1 has 2 different verdicts/,
    ],
    [
      "one verdict id with two details",
      [
        verdict("c1", "REJECT"),
        { detailType: "ClaimVerdict", detail: { verdict_id: "ver_c1", claim_id: "c1", verdict: "ACCEPT" } },
      ],
      /published twice with different details/,
    ],
    [
      "more than the order",
      [verdict("c1", "ACCEPT"), refund("c1", "ord_a", 200), verdict("c2", "ACCEPT"), refund("c2", "ord_a", 200)],
      /order \|ord_a refunded 40000 cents, more than its 30000/,
    ],
    [
      "automatic refunds above the limit",
      [verdict("c1", "ACCEPT"), refund("c1", "ord_b", 400), verdict("c2", "ACCEPT"), refund("c2", "ord_b", 400)],
      /automatically, more than the 50000-cent limit/,
    ],
    [
      "an approver nobody approved",
      [refund("c1", "ord_b", 700, { approved_by: "mallory" })],
      /names approver mallory but no approved review carries it/,
    ],
    [
      "an approval refunding more than granted",
      [approval("c1", 100), refund("c1", "ord_b", 700, { approved_by: "alice" })],
      /granted 100 EUR but 700 EUR was refunded/,
    ],
  ])("finds %s", (_name, events, expected) => {
    expect(checkMoneyInvariants(events, facts()).violations.join("\n")).toMatch(expected);
  });

  it("counts approved refunds apart from the automatic limit", () => {
    const events = [
      verdict("c1", "ACCEPT"),
      refund("c1", "ord_b", 500),
      verdict("c2", "ESCALATE"),
      approval("c2", 700),
      refund("c2", "ord_b", 700, { approved_by: "alice" }),
    ];
    expect(checkMoneyInvariants(events, facts()).violations).toEqual([]);
  });

  describe("with the ledgers", () => {
    const events = [verdict("c1", "ACCEPT"), refund("c1", "ord_a", 100)];

    it("passes when every reservation is announced with its amount", () => {
      expect(checkMoneyInvariants(events, facts([{ orderId: "ord_a", claims: { c1: 10_000 } }])).violations).toEqual(
        [],
      );
    });

    it("finds a reservation no RefundExecuted announces (an approval that crashed after reserving)", () => {
      const v = checkMoneyInvariants(
        events,
        facts([
          { orderId: "ord_a", claims: { c1: 10_000 } },
          { orderId: "ord_b", claims: { c9: 70_000 } },
        ]),
      ).violations;
      expect(v).toEqual(["claim c9 holds 70000 cents on ord_b but no RefundExecuted announces it"]);
    });

    it("finds a RefundExecuted without a reservation, and one whose amount differs from the ledger", () => {
      expect(checkMoneyInvariants(events, facts([])).violations).toEqual([
        "RefundExecuted exe_c1 of claim c1 has no reservation on any ledger",
      ]);
      expect(checkMoneyInvariants(events, facts([{ orderId: "ord_a", claims: { c1: 9_999 } }])).violations).toEqual([
        "claim c1: RefundExecuted says 100 EUR, the ledger of ord_a holds 9999 cents",
      ]);
    });

    it("tells a simulation's ledger from the real one", () => {
      const simulated = [verdict("c1", "ACCEPT"), refund("c1", "ord_a", 100, { simulation_id: "sim_1" })];
      expect(
        checkMoneyInvariants(simulated, facts([{ orderId: "ord_a", scope: "sim_1", claims: { c1: 10_000 } }]))
          .violations,
      ).toEqual([]);
      expect(checkMoneyInvariants(simulated, facts([{ orderId: "ord_a", claims: { c1: 10_000 } }])).violations).toEqual(
        ["RefundExecuted exe_c1 of claim c1 names sim_1|ord_a, the reservation is on ord_a"],
      );
    });
  });
});

describe("the payment provider's side", () => {
  const refund = (id: string, claim: string, amount: number) => ({
    execution_id: id,
    claim_id: claim,
    dfid: "d",
    order_id: "ord_pay",
    amount_eur: amount,
  });
  const executed = (id: string, claim: string, amount = 10, extra: Record<string, unknown> = {}) => ({
    detailType: "RefundExecuted",
    detail: { ...refund(id, claim, amount), verdict_id: `v_${id}`, approved_by: "rita", ...extra },
  });
  const settle = (type: string, id: string, claim: string, amount = 10) => ({
    detailType: type,
    detail: { ...refund(id, claim, amount), provider: "stripe" },
  });
  const violationsOf = (events: { detailType: string; detail: Record<string, unknown> }[]) =>
    checkMoneyInvariants(events, { orderAmountEur: () => 1000, limitEur: 500 }).violations.filter(
      (v) => !v.includes("approver"),
    );

  it("holds for a settled refund announced twice (at least once)", () => {
    expect(
      violationsOf([executed("e1", "c1"), settle("RefundSettled", "e1", "c1"), settle("RefundSettled", "e1", "c1")]),
    ).toEqual([]);
  });

  it("finds a settlement without its RefundExecuted, of another amount, or of a simulation", () => {
    expect(violationsOf([settle("RefundSettled", "e9", "c9")])).toEqual(["RefundSettled e9 has no RefundExecuted"]);
    expect(violationsOf([executed("e1", "c1"), settle("RefundSettled", "e1", "c1", 11)])).toEqual([
      "RefundSettled e1 does not match its RefundExecuted (claim or amount)",
    ]);
    expect(
      violationsOf([executed("e1", "c1", 10, { simulation_id: "s" }), settle("RefundSettled", "e1", "c1")]),
    ).toEqual(["RefundSettled e1 pays a simulation's refund"]);
  });

  it("a failed refund is not money paid: failed then paid is a violation, and so is a claim paid twice", () => {
    expect(
      violationsOf([executed("e1", "c1"), settle("RefundFailed", "e1", "c1"), settle("RefundSettled", "e1", "c1")]),
    ).toEqual(["refund e1 was reported failed, then paid"]);
    const twice = violationsOf([
      executed("e1", "c1"),
      executed("e2", "c1"),
      settle("RefundSettled", "e1", "c1"),
      settle("RefundSettled", "e2", "c1"),
    ]);
    expect(twice).toContain("claim c1 was paid by 2 executions (e1, e2)");
  });
});

describe("checkMoneyInvariants — a failed refund's RETRY and CLOSE", () => {
  const failedRefund = [
    verdict("c1", "ACCEPT"),
    refund("c1", "ord_a", 100),
    {
      detailType: "RefundFailed",
      detail: { execution_id: "exe_c1", claim_id: "c1", order_id: "ord_a", amount_eur: 100 },
    },
  ];
  const retry = (extra: Record<string, unknown> = {}) =>
    refund("c1", "ord_a", 100, { execution_id: "exe_r1", retry_of: "exe_c1", ...extra });
  const decided = (decision: "RETRY" | "CLOSE", execution: string): PublishedEvent => ({
    detailType: "ReviewDecided",
    detail: { review_id: `rev_${decision}`, claim_id: "c1", decision, execution_id: execution },
  });
  const paid = (execution: string): PublishedEvent => ({
    detailType: "RefundSettled",
    detail: { execution_id: execution, claim_id: "c1", order_id: "ord_a", amount_eur: 100 },
  });
  const ledger = (claims: Record<string, number>): LedgerFact[] => [{ orderId: "ord_a", claims }];

  it("a RETRY's new execution counts as the claim's one refund, paid once", () => {
    const summary = checkMoneyInvariants(
      [...failedRefund, decided("RETRY", "exe_r1"), retry(), paid("exe_r1")],
      facts(ledger({ c1: 10000 })),
    );
    expect(summary.violations).toEqual([]);
    expect(summary.refundedCents).toBe(10000);
  });

  it("finds a retry of a refund that never failed, one no reviewer decided, and one of another amount", () => {
    const ok = [decided("RETRY", "exe_r1")];
    expect(
      checkMoneyInvariants([verdict("c1", "ACCEPT"), refund("c1", "ord_a", 100), ...ok, retry()], facts()).violations,
    ).toEqual(["RefundExecuted exe_r1 retries exe_c1, which never failed"]);
    expect(checkMoneyInvariants([...failedRefund, retry()], facts()).violations).toEqual([
      "RefundExecuted exe_r1 retries exe_c1 but no reviewer's RETRY carries it",
    ]);
    expect(checkMoneyInvariants([...failedRefund, ...ok, retry({ amount_eur: 200 })], facts()).violations).toEqual([
      "RefundExecuted exe_r1 retries exe_c1, which is no refund of the same claim and amount",
    ]);
  });

  it("a CLOSEd refund is not money paid and holds no reservation; a closed refund that was paid is a violation", () => {
    const closed = [...failedRefund, decided("CLOSE", "exe_c1")];
    const summary = checkMoneyInvariants(closed, facts(ledger({})));
    expect(summary.violations).toEqual([]);
    expect(summary.refundedCents).toBe(0);
    expect(checkMoneyInvariants(closed, facts(ledger({ c1: 10000 }))).violations).toEqual([
      "claim c1 holds 10000 cents on ord_a but no RefundExecuted announces it",
    ]);
    expect(checkMoneyInvariants([...closed, paid("exe_c1")], facts()).violations).toContain(
      "claim c1: refund exe_c1 was closed, yet paid",
    );
  });

  it("a refund CLOSEd as paid out of band counts as refunded and keeps its reservation", () => {
    const closed: PublishedEvent[] = [
      ...failedRefund,
      { ...decided("CLOSE", "exe_c1"), detail: { ...decided("CLOSE", "exe_c1").detail, paid_out_of_band: true } },
    ];
    const summary = checkMoneyInvariants(closed, facts(ledger({ c1: 10000 })));
    expect(summary.violations).toEqual([]);
    expect(summary.refundedCents).toBe(10000);
    expect(checkMoneyInvariants(closed, facts(ledger({}))).violations).not.toEqual([]);
  });
});

describe("checkMoneyInvariants — people bind the automation", () => {
  const at = (claim: string, v: "ACCEPT" | "ESCALATE", decidedAt: string): PublishedEvent => ({
    detailType: "ClaimVerdict",
    detail: { verdict_id: `ver_${claim}`, claim_id: claim, verdict: v, decided_at: decidedAt },
  });
  const requested = (claim: string, order: string, eur: number): PublishedEvent => ({
    detailType: "ReviewRequested",
    detail: { review_id: `rev_${claim}`, claim_id: claim, order_id: order, amount_eur: eur },
  });
  const decided = (claim: string, decision: "DENY" | "APPROVE", decidedAt: string, eur?: number): PublishedEvent => ({
    detailType: "ReviewDecided",
    detail: {
      review_id: `rev_${claim}`,
      claim_id: claim,
      decision,
      decided_at: decidedAt,
      ...(eur === undefined ? {} : { amount_eur: eur, execution_id: `exe_${claim}` }),
    },
  });
  const T0 = "2026-06-01T12:00:00.000Z";
  const T1 = "2026-06-01T12:05:00.000Z";
  const T2 = "2026-06-01T12:10:00.000Z";

  it("finds an automatic refund on an order decided after a person's DENY there, not one decided before", () => {
    const denied = [at("big", "ESCALATE", T0), requested("big", "ord_b", 1200), decided("big", "DENY", T1)];
    const after = [...denied, at("late", "ACCEPT", T2), refund("late", "ord_b", 100)];
    expect(checkMoneyInvariants(after, facts()).violations).toEqual([
      "claim late was refunded automatically on order ord_b after a person denied claim big on it",
    ]);
    const before = [...denied, at("early", "ACCEPT", T0), refund("early", "ord_b", 100)];
    expect(checkMoneyInvariants(before, facts()).violations).toEqual([]);
  });

  it("finds one after an approval of less than proposed, and none after a full approval", () => {
    const partial = [
      at("big", "ESCALATE", T0),
      requested("big", "ord_b", 1200),
      decided("big", "APPROVE", T1, 900),
      refund("big", "ord_b", 900, { approved_by: "r" }),
      at("rest", "ACCEPT", T2),
      refund("rest", "ord_b", 300),
    ];
    expect(checkMoneyInvariants(partial, facts()).violations).toHaveLength(1);
    const full = partial.map((e) =>
      e.detailType === "ReviewRequested" ? { ...e, detail: { ...e.detail, amount_eur: 900 } } : e,
    );
    expect(checkMoneyInvariants(full, facts()).violations).toEqual([]);
  });

  it("finds automatic refunds of one customer above customer_limits, exactly the limit passes", () => {
    const customers = {
      customerOf: (id: string) => (id.startsWith("ord_c") ? "cus_1" : undefined),
      limits: { window_days: 30, max_automatic_refunds: 2, max_automatic_eur: 150 },
    };
    const ORDERS_C: Record<string, number> = { ord_c1: 100, ord_c2: 100, ord_c3: 100, ord_a: 300 };
    const f = { orderAmountEur: (id: string) => ORDERS_C[id], limitEur: 500, customers };
    const two = [
      at("c1", "ACCEPT", T0),
      refund("c1", "ord_c1", 75),
      at("c2", "ACCEPT", T1),
      refund("c2", "ord_c2", 75),
    ];
    expect(checkMoneyInvariants(two, f).violations).toEqual([]);
    expect(
      checkMoneyInvariants([...two, at("c3", "ACCEPT", T2), refund("c3", "ord_c3", 1)], f).violations,
    ).toHaveLength(1);
    // An order without a customer is not bound; a reviewer's approval is not automatic.
    expect(
      checkMoneyInvariants(
        [...two, at("a", "ACCEPT", T2), refund("a", "ord_a", 100), refund("c3", "ord_c3", 50, { approved_by: "r" })],
        { ...f, orderAmountEur: (id: string) => ORDERS_C[id] },
      ).violations.filter((v) => v.includes("customer")),
    ).toEqual([]);
  });
});

describe("checkMoneyInvariants with returns (docs/returns.md)", () => {
  const asked = (claim: string, eur: number, pay_on = "delivered"): PublishedEvent => ({
    detailType: "ReturnRequested",
    detail: {
      execution_id: `exe_${claim}`,
      claim_id: claim,
      order_id: "ord_a",
      amount_eur: eur,
      verdict_id: `ver_${claim}`,
      pay_on,
    },
  });
  const withEvents = (events: Record<string, { event: string }[]>, ledgers?: LedgerFact[]) => ({
    ...facts(ledgers),
    returnEvents: (claim: string) => events[claim],
  });

  it("lets a return-required ACCEPT wait with its reservation announced by ReturnRequested, and pay once on pay_on", () => {
    const waiting = [verdict("c1", "ACCEPT"), asked("c1", 100)];
    const ledger = [{ orderId: "ord_a", claims: { c1: 10_000 } }];
    expect(checkMoneyInvariants(waiting, withEvents({ c1: [] }, ledger)).violations).toEqual([]);
    const paid = [...waiting, refund("c1", "ord_a", 100)];
    expect(checkMoneyInvariants(paid, withEvents({ c1: [{ event: "delivered" }] }, ledger)).violations).toEqual([]);
  });

  it("finds a refund paid before pay_on, on a failed inspection, twice, or other than the one reserved", () => {
    const paid = [verdict("c1", "ACCEPT"), asked("c1", 100), refund("c1", "ord_a", 100)];
    expect(checkMoneyInvariants(paid, withEvents({ c1: [{ event: "in_transit" }] })).violations).toEqual([
      "claim c1 was paid before its return reached delivered",
    ]);
    expect(
      checkMoneyInvariants(paid, withEvents({ c1: [{ event: "delivered" }, { event: "inspected_failed" }] }))
        .violations,
    ).toEqual(["claim c1 was paid although its return failed inspection"]);
    const twice = [...paid, refund("c1", "ord_a", 100, { execution_id: "exe_other" })];
    expect(checkMoneyInvariants(twice, facts()).violations).toEqual(
      expect.arrayContaining([
        "ACCEPT ver_c1 of claim c1 has 2 RefundExecuted",
        "claim c1: RefundExecuted exe_other is not the refund its ReturnRequested reserved",
      ]),
    );
  });
});
