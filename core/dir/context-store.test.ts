import { describe, expect, it } from "vitest";
import { createInMemoryContextStore } from "./context-store.ts";
import { OrderDataError } from "./errors.ts";

const ord = { order_id: "ord_001", purchase_date: "2026-03-13T10:00:00Z", category: "electronics", amount: 299.99 };

describe("in-memory context store", () => {
  it("answers orders by id and a sorted snapshot, defaulting the currency", async () => {
    const store = createInMemoryContextStore([{ ...ord, order_id: "ord_b" }, ord]);
    expect(await store.getOrder("ord_001")).toEqual({ ...ord, currency: "EUR" });
    expect(await store.getOrder("ord_404")).toBeUndefined();
    expect(await store.getOrder("constructor")).toBeUndefined();
    expect(Object.keys((await store.snapshot()).orders)).toEqual(["ord_001", "ord_b"]);
  });
  it.each([
    ["a relative purchase date", { ...ord, purchase_date: "-3d" }],
    ["a sub-cent amount", { ...ord, amount: 1.234 }],
    ["a negative amount", { ...ord, amount: -1 }],
    ["another currency", { ...ord, currency: "USD" }],
  ])("refuses %s", (_name, bad) => {
    expect(() => createInMemoryContextStore([bad])).toThrow(OrderDataError);
  });
  it("refuses duplicate order ids", () => {
    expect(() => createInMemoryContextStore([ord, ord])).toThrow(/duplicate order ord_001/);
  });
});
