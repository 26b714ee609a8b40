// The kernel on orders with lines and in other currencies (docs/kernel.md "Orders with lines"): the claim's line
// decides category, window and amount; the order's currency is judged against that currency's bounds only.
import { describe, expect, it } from "vitest";
import type { Claim } from "../claim/claim.ts";
import type { ClaimsContract, Order } from "../integrity/contracts.ts";
import { DAY_MS } from "../integrity/time.ts";
import { triageClaim, type DecideClaimInput } from "./kernel.ts";
import { emptyLedgerEntry } from "./ledger.ts";
import { lineReserveOf } from "./claim-lines.ts";
import { decideOnLines, isoAt, LINES_RECEIVED_MS, lineResponsibility } from "./order-lines.test-kit.ts";
import { reviewFacts } from "./review-facts.ts";

const RECEIVED_MS = LINES_RECEIVED_MS;
const iso = isoAt;
const responsibility = lineResponsibility;

const POLICY: ClaimsContract = {
  allowed_refund_categories: ["electronics", "clothing"],
  max_refund_without_escalation: 500,
  return_window_days: { default: 14, electronics: 30 },
  currencies: {
    USD: { max_refund_without_escalation: 600 },
    JPY: { max_refund_without_escalation: 50_000 },
    KWD: { max_refund_without_escalation: 150.5 },
  },
};

/** The order: a TV (electronics, 30-day window here) and two shirts (clothing, 14 days), bought 20 days ago. */
const TV_AND_SHIRTS: Order = {
  order_id: "ord_100",
  purchase_date: iso(RECEIVED_MS - 20 * DAY_MS),
  currency: "USD",
  shipping: "9.99",
  lines: [
    { line_id: "l1", sku: "TV-55", category: "electronics", quantity: 1, amount: "499.00" },
    { line_id: "l2", sku: "TEE-M", category: "clothing", quantity: 2, amount: "40.00" },
  ],
};

function decide(
  order: Order,
  category: string,
  amount: number,
  over: Partial<DecideClaimInput> = {},
  claimOver: Partial<Claim> = {},
) {
  const claim: Claim = { order_id: order.order_id, amount_eur: amount, category, reason: "broken", ...claimOver };
  return decideOnLines({ order, claim, policy: POLICY, output: { amount_eur: amount, category }, over }).verdict;
}

describe("the kernel on an order with lines", () => {
  it("accepts a claim on the TV: its line's 30-day window, in USD against the USD bounds", () => {
    const v = decide(TV_AND_SHIRTS, "electronics", 499);
    expect(v).toMatchObject({ verdict: "ACCEPT", reason_code: "VALIDATION_PASSED" });
    expect(v.checks.map((c) => c.name)).toContain("line_known");
    expect(v.checks.map((c) => c.name)).toContain("currency_in_policy");
  });

  it("judges a claim on the shirts against their own line: 14 days, so 20 days after purchase it is out of window", () => {
    const v = decide(TV_AND_SHIRTS, "clothing", 40);
    expect(v).toMatchObject({ verdict: "REJECT", reason_code: "OUTSIDE_RETURN_WINDOW" });
    expect(v.reason).toMatch(/return_window_days\.default: 14/);
  });

  it("never refunds more on a line than was paid for it, even when the order has more left", () => {
    const within = { ...TV_AND_SHIRTS, purchase_date: iso(RECEIVED_MS - 3 * DAY_MS) };
    expect(decide(within, "clothing", 40).verdict).toBe("ACCEPT");
    const v = decide(within, "clothing", 40.01);
    expect(v).toMatchObject({ verdict: "REJECT", reason_code: "EXCEEDS_REFUNDABLE_BALANCE" });
    expect(v.reason).toMatch(/what was paid for line l2 of order ord_100 \(40\.0 USD\)/);
  });

  it("judges a line's balance over claims: what other claims refunded on it (the ledger's line counts), never its own", () => {
    const within = { ...TV_AND_SHIRTS, purchase_date: iso(RECEIVED_MS - 3 * DAY_MS) };
    const ledgerEntry = {
      ...emptyLedgerEntry("ord_100"),
      refunded_cents: 3_000,
      claims: { clm_other: 3_000 },
      automatic_cents: 3_000,
      line_cents: { l2: 3_000 },
      claim_lines: { clm_other: { lines: { l2: 3_000 } } },
    };
    expect(decide(within, "clothing", 10, { ledgerEntry, claimId: "clm_me" }).verdict).toBe("ACCEPT");
    const v = decide(within, "clothing", 10.01, { ledgerEntry, claimId: "clm_me" });
    expect(v).toMatchObject({ verdict: "REJECT", reason_code: "EXCEEDS_REFUNDABLE_BALANCE" });
    expect(v.reason).toMatch(
      /refundable balance of line l2 of order ord_100 \(10\.0 USD: paid 40\.0 USD, already refunded 30\.0 USD\)/,
    );
    // The claim's own reservation (a redelivery deciding again) does not count against it.
    expect(decide(within, "clothing", 30, { ledgerEntry, claimId: "clm_other" }).verdict).toBe("ACCEPT");
    // The TV's line is its own.
    expect(decide(within, "electronics", 499, { ledgerEntry, claimId: "clm_me" }).verdict).toBe("ACCEPT");
  });

  it("rejects CURRENCY_MISMATCH a claim in another currency than the order's, and never traces an EUR claim on an EUR order", () => {
    const within = { ...TV_AND_SHIRTS, purchase_date: iso(RECEIVED_MS - 3 * DAY_MS) };
    const v = decide(within, "clothing", 40, {}, { currency: "EUR" });
    expect(v).toMatchObject({ verdict: "REJECT", reason_code: "CURRENCY_MISMATCH", layer: 8.6 });
    expect(v.reason).toBe("Claim is in 'EUR', order ord_100 in USD: a claim is refunded only in the order's currency");
    const usd = decide(within, "clothing", 40, {}, { currency: "usd" });
    expect(usd.verdict).toBe("ACCEPT");
    expect(usd.checks).toContainEqual(expect.objectContaining({ name: "currency_match", passed: true }));
    const eurOrder: Order = { ...within, currency: "EUR" };
    const eur = decide(eurOrder, "clothing", 40, {}, { currency: "EUR" });
    expect(eur.verdict).toBe("ACCEPT");
    expect(eur.checks.map((c) => c.name)).not.toContain("currency_match");
    expect(decide(eurOrder, "clothing", 40, {}, { currency: "JPY" }).reason_code).toBe("CURRENCY_MISMATCH");
  });

  it("judges a claim that names its line and units: at most what those units cost", () => {
    const within = { ...TV_AND_SHIRTS, purchase_date: iso(RECEIVED_MS - 3 * DAY_MS) };
    // Category says nothing here: the named line decides (one shirt of two: 20.00).
    const one = { lines: [{ line_id: "l2", quantity: 1 }] };
    expect(decide(within, "electronics", 20, {}, one).verdict).toBe("ACCEPT");
    const v = decide(within, "electronics", 20.01, {}, one);
    expect(v).toMatchObject({ verdict: "REJECT", reason_code: "EXCEEDS_REFUNDABLE_BALANCE" });
    expect(v.reason).toMatch(/what the claimed units cost \(1 × l2 of order ord_100: 20\.0 USD\)/);
    // All units by default.
    expect(decide(within, "x", 40, {}, { lines: [{ line_id: "l2" }] }).verdict).toBe("ACCEPT");
  });

  it("rejects LINE_NOT_IN_ORDER a line the order does not have, or more units than were bought", () => {
    const unknown = decide(TV_AND_SHIRTS, "clothing", 10, {}, { lines: [{ line_id: "l7" }] });
    expect(unknown).toMatchObject({ verdict: "REJECT", reason_code: "LINE_NOT_IN_ORDER", layer: 3 });
    expect(unknown.reason).toBe('Claim names line "l7" is not a line of order ord_100 (its lines: l1, l2)');
    const more = decide(TV_AND_SHIRTS, "clothing", 10, {}, { lines: [{ line_id: "l2", quantity: 3 }] });
    expect(more).toMatchObject({ reason_code: "LINE_NOT_IN_ORDER" });
    expect(more.reason).toContain("3 units claimed of line l2 of order ord_100, which has 2");
  });

  it("decides a claim on several lines as one: ACCEPT only when every line passes (the shirts out of their window)", () => {
    // 20 days after purchase: the TV (30 days) is in its window, the shirts (14 days) are not.
    const both = { lines: [{ line_id: "l1" }, { line_id: "l2" }] };
    const v = decide(TV_AND_SHIRTS, "electronics", 539, {}, both);
    expect(v).toMatchObject({ verdict: "REJECT", reason_code: "OUTSIDE_RETURN_WINDOW" });
    expect(v.reason).toContain("return_window_days.default: 14");
    // The TV alone passes.
    expect(decide(TV_AND_SHIRTS, "electronics", 499, {}, { lines: [{ line_id: "l1" }] }).verdict).toBe("ACCEPT");
    // In the window both pass; the amount falls on the lines in the claim's order (499 on l1, then 40 on l2).
    const within = { ...TV_AND_SHIRTS, purchase_date: iso(RECEIVED_MS - 3 * DAY_MS) };
    expect(decide(within, "electronics", 539, {}, both).verdict).toBe("ACCEPT");
    expect(lineReserveOf(within, { category: "x", lines: both.lines }, 50_000, POLICY)).toEqual({
      paid: { l1: 49_900, l2: 4_000 },
      shipping: 0,
      claimed: { l1: 49_900, l2: 100 },
    });
    // …judged per line against what other claims left of it.
    const ledgerEntry = {
      ...emptyLedgerEntry("ord_100"),
      refunded_cents: 3_950,
      claims: { clm_other: 3_950 },
      automatic_cents: 3_950,
      line_cents: { l2: 3_950 },
      claim_lines: { clm_other: { lines: { l2: 3_950 } } },
    };
    const shirts = { lines: [{ line_id: "l2" }] };
    const left = decide(within, "electronics", 0.51, { ledgerEntry, claimId: "clm_me" }, shirts);
    expect(left).toMatchObject({ verdict: "REJECT", reason_code: "EXCEEDS_REFUNDABLE_BALANCE" });
    expect(left.reason).toMatch(/0\.51 USD on line l2 of order ord_100 exceeds its refundable balance \(0\.5 USD/);
    expect(decide(within, "electronics", 0.5, { ledgerEntry, claimId: "clm_me" }, shirts).verdict).toBe("ACCEPT");
    expect(decide(within, "electronics", 499.5, { ledgerEntry, claimId: "clm_me" }, both).verdict).toBe("ACCEPT");
  });

  it("counts the order's balance in its own currency, without shipping unless the policy refunds it", () => {
    const ledgerEntry = {
      ...emptyLedgerEntry("ord_100"),
      refunded_cents: 50_000,
      automatic_cents: 50_000,
      claims: { other: 50_000 },
    };
    const v = decide(TV_AND_SHIRTS, "electronics", 39.01, { ledgerEntry });
    expect(v).toMatchObject({ reason_code: "EXCEEDS_REFUNDABLE_BALANCE" });
    expect(v.reason).toMatch(/balance of order ord_100 \(39\.0 USD: order 539\.0 USD, already refunded 500\.0 USD\)/);
    const withShipping = decide(TV_AND_SHIRTS, "electronics", 39.01, {
      ledgerEntry,
      contract: { ...POLICY, refund_shipping: "with_last_line" },
    });
    expect(withShipping.verdict).toBe("ACCEPT");
  });

  it("escalates LINE_AMBIGUOUS when the claim's category matches two lines, or none of several", () => {
    const twoShirts: Order = {
      ...TV_AND_SHIRTS,
      purchase_date: iso(RECEIVED_MS - 3 * DAY_MS),
      lines: [...TV_AND_SHIRTS.lines!, { line_id: "l3", category: "clothing", quantity: 1, amount: "25.00" }],
    };
    expect(decide(twoShirts, "clothing", 20)).toMatchObject({ verdict: "ESCALATE", reason_code: "LINE_AMBIGUOUS" });
    const none = decide(twoShirts, "home", 20);
    expect(none).toMatchObject({ verdict: "ESCALATE", reason_code: "LINE_AMBIGUOUS" });
    expect(none.reason).toMatch(/matches no single line of order ord_100 \(l1, l2, l3\)/);
  });

  it("rejects an ambiguous claim only when none of its candidate lines could be refunded", () => {
    const old = {
      ...TV_AND_SHIRTS,
      lines: [...TV_AND_SHIRTS.lines!, { line_id: "l3", category: "clothing", quantity: 1, amount: "5" }],
    };
    // Both shirt lines are out of their 14-day window: whichever was meant, the answer is the same.
    expect(decide(old, "clothing", 5)).toMatchObject({ verdict: "REJECT", reason_code: "OUTSIDE_RETURN_WINDOW" });
  });

  it("escalates CURRENCY_NOT_IN_POLICY for a currency without bounds, and never compares it to EUR's", () => {
    const gbp: Order = { ...TV_AND_SHIRTS, currency: "GBP", purchase_date: iso(RECEIVED_MS - 3 * DAY_MS) };
    expect(decide(gbp, "electronics", 10)).toMatchObject({
      verdict: "ESCALATE",
      reason_code: "CURRENCY_NOT_IN_POLICY",
    });
  });

  it("holds a yen order to the JPY limit in whole yen", () => {
    const jpy: Order = {
      order_id: "ord_jp",
      purchase_date: iso(RECEIVED_MS - 3 * DAY_MS),
      currency: "JPY",
      category: "electronics",
      amount: 80_000,
    };
    expect(decide(jpy, "electronics", 50_000).verdict).toBe("ACCEPT");
    const above = decide(jpy, "electronics", 50_001);
    expect(above).toMatchObject({ verdict: "ESCALATE", reason_code: "AMOUNT_ABOVE_LIMIT" });
    expect(above.reason).toMatch(/50001 JPY exceeds max_refund_without_escalation \(50000 JPY\)/);
    expect(decide(jpy, "electronics", 0.5)).toMatchObject({ reason_code: "INVALID_AMOUNT" });
  });

  it("holds a dinar order to the KWD limit in fils", () => {
    const kwd: Order = {
      order_id: "ord_kw",
      purchase_date: iso(RECEIVED_MS - 3 * DAY_MS),
      currency: "KWD",
      category: "electronics",
      amount: "200.000",
    };
    expect(decide(kwd, "electronics", 150.5).verdict).toBe("ACCEPT");
    expect(decide(kwd, "electronics", 150.51)).toMatchObject({ reason_code: "AMOUNT_ABOVE_LIMIT" });
  });

  it("triages a claim on an out-of-window line to its REJECT before any crew", () => {
    const claim: Claim = { order_id: "ord_100", amount_eur: 40, category: "clothing", reason: "too small" };
    const base = { claim, contract: POLICY, responsibility, order: TV_AND_SHIRTS, ledgerEntry: undefined };
    const times = { receivedAt: iso(RECEIVED_MS), decidedAt: iso(RECEIVED_MS) };
    expect(triageClaim({ ...base, ...times })).toMatchObject({ reason_code: "OUTSIDE_RETURN_WINDOW" });
    expect(triageClaim({ ...base, ...times, claim: { ...claim, category: "electronics" } })).toBeUndefined();
  });
});

describe("what a reviewer sees of an order with lines", () => {
  it("shows the order's amount in its currency, each line's, and amount_eur only for EUR", () => {
    const { order } = reviewFacts({ order: TV_AND_SHIRTS, others: [] }) as { order: Record<string, unknown> };
    expect(order).toMatchObject({
      amount: { value: "548.99", currency: "USD" },
      currency: "USD",
      category: "electronics, clothing",
      shipping: "9.99",
      lines: [
        {
          line_id: "l1",
          sku: "TV-55",
          category: "electronics",
          quantity: 1,
          amount: { value: "499.00", currency: "USD" },
        },
        { line_id: "l2", sku: "TEE-M", category: "clothing", quantity: 2, amount: { value: "40.00", currency: "USD" } },
      ],
    });
    expect(order).not.toHaveProperty("amount_eur");
  });

  it("shows a one-line EUR order exactly as before lines", () => {
    const legacy: Order = {
      order_id: "o",
      purchase_date: "2026-11-01",
      category: "home",
      amount: 120,
      currency: "EUR",
    };
    expect(reviewFacts({ order: legacy, others: [] }).order).toEqual({
      order_id: "o",
      amount_eur: 120,
      currency: "EUR",
      purchase_date: "2026-11-01",
      category: "home",
    });
  });
});
