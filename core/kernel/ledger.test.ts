import { describe, expect, it } from "vitest";
import { LedgerInvariantError } from "../integrity/errors.ts";
import {
  assertLedgerEntry,
  automaticRefundedCents,
  clearReviewPending,
  emptyLedgerEntry,
  markReviewPending,
  otherPendingReviews,
  refundReleased,
  releaseRefund,
  reserveRefund,
  type LedgerEntry,
  type ReserveMode,
} from "./ledger.ts";

const AUTO: ReserveMode = { kind: "automatic", limitCents: 1_000_000 };

describe("reserveRefund", () => {
  it("reserves on an empty entry and leaves the input untouched", () => {
    const entry = emptyLedgerEntry("ord_001");
    const result = reserveRefund(entry, "claim_A", 29999, 29999, AUTO);
    expect(result).toEqual({
      ok: true,
      entry: { order_id: "ord_001", refunded_cents: 29999, claims: { claim_A: 29999 }, automatic_cents: 29999 },
    });
    expect(entry).toEqual(emptyLedgerEntry("ord_001"));
  });
  it("refuses the same claim twice, whatever the amount", () => {
    const first = reserveRefund(emptyLedgerEntry("ord_001"), "claim_A", 100, 29999, AUTO);
    if (!first.ok) throw new Error("setup");
    expect(reserveRefund(first.entry, "claim_A", 100, 29999, AUTO)).toMatchObject({
      ok: false,
      code: "ALREADY_REFUNDED_FOR_CLAIM",
      entry: first.entry,
    });
    expect(reserveRefund(first.entry, "claim_A", 5, 29999, AUTO)).toMatchObject({
      ok: false,
      code: "ALREADY_REFUNDED_FOR_CLAIM",
    });
  });
  it("allows exactly the order amount and refuses one cent more", () => {
    const first = reserveRefund(emptyLedgerEntry("ord_001"), "claim_A", 20000, 29999, AUTO);
    if (!first.ok) throw new Error("setup");
    expect(reserveRefund(first.entry, "claim_B", 10000, 29999, AUTO)).toMatchObject({
      ok: false,
      code: "EXCEEDS_ORDER_AMOUNT",
    });
    expect(reserveRefund(first.entry, "claim_B", 9999, 29999, AUTO)).toMatchObject({
      ok: true,
      entry: { refunded_cents: 29999 },
    });
  });
  it("treats a claim id named __proto__ as an ordinary claim", () => {
    const r = reserveRefund(emptyLedgerEntry("o"), "__proto__", 5, 10, AUTO);
    if (!r.ok) throw new Error("setup");
    expect(Object.keys(r.entry.claims)).toEqual(["__proto__"]);
    expect(reserveRefund(r.entry, "__proto__", 5, 10, AUTO)).toMatchObject({
      ok: false,
      code: "ALREADY_REFUNDED_FOR_CLAIM",
    });
    expect(JSON.parse(JSON.stringify(r.entry))).toEqual(r.entry);
  });
  it.each([
    ["zero cents", emptyLedgerEntry("o"), 0, 100],
    ["fractional cents", emptyLedgerEntry("o"), 1.5, 100],
    ["a non-positive order amount", emptyLedgerEntry("o"), 1, 0],
    [
      "an entry whose total is not the sum of its claims",
      { order_id: "o", refunded_cents: 7, claims: { a: 5 } },
      1,
      100,
    ],
  ] as const)("throws LedgerInvariantError for %s", (_name, entry, cents, orderCents) => {
    expect(() => reserveRefund(entry as LedgerEntry, "c", cents, orderCents, AUTO)).toThrow(LedgerInvariantError);
  });
});

const ok = (r: ReturnType<typeof reserveRefund>) => {
  if (!r.ok) throw new Error(`setup: ${r.message}`);
  return r.entry;
};

describe("the automatic limit, approvals and pending reviews", () => {
  const limit = (limitCents: number): ReserveMode => ({ kind: "automatic", limitCents });

  it("counts automatic refunds on the order against the limit, so a split claim reaches a human", () => {
    const e1 = ok(reserveRefund(emptyLedgerEntry("o"), "a", 50_000, 120_000, limit(50_000)));
    expect(reserveRefund(e1, "b", 1, 120_000, limit(50_000))).toMatchObject({
      ok: false,
      code: "EXCEEDS_AUTOMATIC_LIMIT",
    });
    const e2 = ok(reserveRefund(e1, "b", 70_000, 120_000, { kind: "approved" }));
    expect(e2).toEqual({
      order_id: "o",
      refunded_cents: 120_000,
      claims: { a: 50_000, b: 70_000 },
      automatic_cents: 50_000,
      approved: ["b"],
    });
    expect(automaticRefundedCents(e2)).toBe(50_000);
    expect(automaticRefundedCents(e2, "a")).toBe(0);
    expect(automaticRefundedCents(e2, "b")).toBe(50_000);
  });

  it("refuses an automatic refund while another claim awaits a review; an approval closes its own review", () => {
    const marked = markReviewPending(markReviewPending(emptyLedgerEntry("o"), "x"), "x");
    expect(marked.pending_reviews).toEqual(["x"]);
    expect(otherPendingReviews(marked, "x")).toEqual([]);
    expect(reserveRefund(marked, "y", 100, 1000, limit(500))).toMatchObject({
      ok: false,
      code: "REVIEW_PENDING_ON_ORDER",
    });
    const approved = ok(reserveRefund(marked, "x", 600, 1000, { kind: "approved" }));
    expect(approved.pending_reviews).toBeUndefined();
    expect(reserveRefund(approved, "y", 100, 1000, limit(500))).toMatchObject({ ok: true });
    expect(clearReviewPending(marked, "x")).toEqual(emptyLedgerEntry("o"));
    expect(markReviewPending(approved, "x")).toEqual(approved);
  });

  it.each([
    [
      "automatic_cents that is not the sum of unapproved claims",
      { order_id: "o", refunded_cents: 5, claims: { a: 5 }, automatic_cents: 4 },
    ],
    [
      "an approved claim with no reservation",
      { order_id: "o", refunded_cents: 5, claims: { a: 5 }, automatic_cents: 5, approved: ["b"] },
    ],
    [
      "a released claim that holds a reservation",
      { order_id: "o", refunded_cents: 5, claims: { a: 5 }, automatic_cents: 5, released: ["a"] },
    ],
  ])("rejects an entry with %s", (_name, entry) => {
    expect(() => assertLedgerEntry(entry)).toThrow(LedgerInvariantError);
  });
});

describe("releaseRefund (a failed refund CLOSEd unpaid)", () => {
  it("frees the claim's money for others and records the claim as released, so it never reserves on the order again", () => {
    const approved = ok(reserveRefund(emptyLedgerEntry("o"), "a", 600, 1000, { kind: "approved" }));
    const released = releaseRefund(approved, "a");
    expect(released).toEqual({ order_id: "o", refunded_cents: 0, claims: {}, released: ["a"] });
    expect(refundReleased(released, "a")).toBe(true);
    expect(releaseRefund(released, "a")).toEqual(released);
    // A repaired approval (or any redelivery) reserving the claim "again" is refused: the refund was made and closed.
    for (const mode of [{ kind: "approved" } as const, AUTO])
      expect(reserveRefund(released, "a", 600, 1000, mode)).toMatchObject({
        ok: false,
        code: "ALREADY_REFUNDED_FOR_CLAIM",
        entry: released,
      });
    expect(ok(reserveRefund(released, "b", 1000, 1000, AUTO))).toMatchObject({ claims: { b: 1000 }, released: ["a"] });
  });
});

describe("reserveRefund on an order with lines", () => {
  const lines = { paid: { l1: 1_000, l2: 500 }, shipping: 0 };

  it("refuses malformed line bounds as a caller bug (LedgerInvariantError)", () => {
    const entry = emptyLedgerEntry("ord_L");
    const auto = { kind: "automatic", limitCents: 1_000_000 } as const;
    expect(() => reserveRefund(entry, "c", 100, 1_500, auto, { ...lines, claimed: { l9: 100 } })).toThrow(
      /claimed line l9 is not a line of order ord_L/,
    );
    expect(() => reserveRefund(entry, "c", 100, 1_500, auto, { ...lines, claimed: { l1: 0 } })).toThrow(
      /must take a positive integer/,
    );
    expect(() => reserveRefund(entry, "c", 100, 1_500, auto, { ...lines, claimed: { l1: 200 } })).toThrow(
      /more than 100 reserved/,
    );
    expect(() => reserveRefund(entry, "c", 100, 1_500, auto, { paid: {}, shipping: 0 })).toThrow(/lines.paid/);
  });

  it("an entry whose line counts are not its claims' is malformed", () => {
    const auto = { kind: "automatic", limitCents: 1_000_000 } as const;
    const ok = reserveRefund(emptyLedgerEntry("ord_L"), "c", 100, 1_500, auto, { ...lines, claimed: { l1: 100 } });
    expect(ok.ok).toBe(true);
    const entry = ok.entry;
    expect(() => assertLedgerEntry({ ...entry, line_cents: { l1: 99 } })).toThrow(/line l1 counts 99/);
    expect(() => assertLedgerEntry({ ...entry, shipping_cents: 1 })).toThrow(/shipping_cents 1/);
    expect(() => assertLedgerEntry({ ...entry, claim_lines: { ...entry.claim_lines, ghost: { lines: {} } } })).toThrow(
      /claim ghost counts on lines without a reservation/,
    );
    // A one-line order's reservation (no lines) leaves the counts as they are.
    const plain = reserveRefund(entry, "d", 100, 1_500, auto);
    expect(plain.ok && plain.entry.line_cents).toEqual({ l1: 100 });
  });
});
