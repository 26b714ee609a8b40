import { describe, expect, it } from "vitest";
import { LedgerInvariantError } from "./errors.ts";
import { emptyLedgerEntry, reserveRefund, type LedgerEntry } from "./ledger.ts";

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
