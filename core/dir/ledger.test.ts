import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LedgerInvariantError } from "./errors.ts";
import { createInMemoryRefundLedger, emptyLedgerEntry, reserveRefund, type LedgerEntry } from "./ledger.ts";

describe("reserveRefund", () => {
  it("reserves on an empty entry and leaves the input untouched", () => {
    const entry = emptyLedgerEntry("ord_001");
    const result = reserveRefund(entry, "claim_A", 29999, 29999);
    expect(result).toEqual({ ok: true, entry: { order_id: "ord_001", refunded_cents: 29999, claims: { claim_A: 29999 } } });
    expect(entry).toEqual(emptyLedgerEntry("ord_001"));
  });
  it("refuses the same claim twice, whatever the amount", () => {
    const first = reserveRefund(emptyLedgerEntry("ord_001"), "claim_A", 100, 29999);
    if (!first.ok) throw new Error("setup");
    expect(reserveRefund(first.entry, "claim_A", 100, 29999)).toMatchObject({ ok: false, code: "ALREADY_REFUNDED_FOR_CLAIM", entry: first.entry });
    expect(reserveRefund(first.entry, "claim_A", 5, 29999)).toMatchObject({ ok: false, code: "ALREADY_REFUNDED_FOR_CLAIM" });
  });
  it("allows exactly the order amount and refuses one cent more", () => {
    const first = reserveRefund(emptyLedgerEntry("ord_001"), "claim_A", 20000, 29999);
    if (!first.ok) throw new Error("setup");
    expect(reserveRefund(first.entry, "claim_B", 10000, 29999)).toMatchObject({ ok: false, code: "EXCEEDS_ORDER_AMOUNT" });
    expect(reserveRefund(first.entry, "claim_B", 9999, 29999)).toMatchObject({ ok: true, entry: { refunded_cents: 29999 } });
  });
  it("treats a claim id named __proto__ as an ordinary claim", () => {
    const r = reserveRefund(emptyLedgerEntry("o"), "__proto__", 5, 10);
    if (!r.ok) throw new Error("setup");
    expect(Object.keys(r.entry.claims)).toEqual(["__proto__"]);
    expect(reserveRefund(r.entry, "__proto__", 5, 10)).toMatchObject({ ok: false, code: "ALREADY_REFUNDED_FOR_CLAIM" });
    expect(JSON.parse(JSON.stringify(r.entry))).toEqual(r.entry);
  });
  it.each([
    ["zero cents", emptyLedgerEntry("o"), 0, 100],
    ["fractional cents", emptyLedgerEntry("o"), 1.5, 100],
    ["a non-positive order amount", emptyLedgerEntry("o"), 1, 0],
    ["an entry whose total is not the sum of its claims", { order_id: "o", refunded_cents: 7, claims: { a: 5 } }, 1, 100],
  ] as const)("throws LedgerInvariantError for %s", (_name, entry, cents, orderCents) => {
    expect(() => reserveRefund(entry as LedgerEntry, "c", cents, orderCents)).toThrow(LedgerInvariantError);
  });
});

describe("in-memory refund ledger", () => {
  const ops = fc.array(fc.record({ claim: fc.constantFrom("c1", "c2", "c3", "c4", "c5"), cents: fc.integer({ min: 1, max: 40_000 }) }), { maxLength: 40 });

  it("never refunds more than the order, and never the same claim twice, over any sequence", async () => {
    await fc.assert(fc.asyncProperty(ops, fc.integer({ min: 1, max: 60_000 }), async (sequence, orderCents) => {
      const ledger = createInMemoryRefundLedger();
      const granted = new Map<string, number>();
      // Reservations race: all are issued before any is awaited.
      const results = await Promise.all(sequence.map((op) => ledger.reserve("ord", op.claim, op.cents, orderCents)));
      results.forEach((r, i) => {
        const op = sequence[i]!;
        if (r.ok) {
          expect(granted.has(op.claim)).toBe(false);
          granted.set(op.claim, op.cents);
        }
      });
      const total = [...granted.values()].reduce((a, b) => a + b, 0);
      expect(total).toBeLessThanOrEqual(orderCents);
      const entry = await ledger.get("ord");
      if (sequence.length === 0 || granted.size === 0) expect(entry?.refunded_cents ?? 0).toBe(0);
      else expect(entry).toEqual({ order_id: "ord", refunded_cents: total, claims: Object.fromEntries(granted) });
    }), { numRuns: 300 });
  });

  it("hands out copies: mutating a returned entry changes nothing", async () => {
    const ledger = createInMemoryRefundLedger([{ order_id: "o", refunded_cents: 5, claims: { a: 5 } }]);
    const got = await ledger.get("o");
    got!.refunded_cents = 0;
    expect((await ledger.get("o"))?.refunded_cents).toBe(5);
    expect(await ledger.get("unknown")).toBeUndefined();
  });

  it("refuses inconsistent or duplicate initial entries", () => {
    expect(() => createInMemoryRefundLedger([{ order_id: "o", refunded_cents: 1, claims: {} }])).toThrow(LedgerInvariantError);
    expect(() => createInMemoryRefundLedger([emptyLedgerEntry("o"), emptyLedgerEntry("o")])).toThrow(/duplicate/);
  });
});
