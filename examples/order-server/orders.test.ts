// The example server's orders are the contract's (docs/orders.md): each parses as an order and reads as lines in its
// currency — multi-line orders in USD and JPY, a KWD amount in fils — never garbled.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OrderSchema } from "../../core/integrity/contracts.ts";
import { readOrder } from "../../core/kernel/order-view.ts";

const { orders } = JSON.parse(readFileSync(new URL("./orders.json", import.meta.url), "utf8")) as {
  orders: Record<string, unknown>[];
};

describe("examples/order-server/orders.json", () => {
  it.each(orders.map((o) => [o.order_id, o] as const))("serves %s as a readable order", (_id, order) => {
    const parsed = OrderSchema.parse({ ...order, purchase_date: "2026-11-24T09:30:00Z" });
    const reading = readOrder(parsed);
    expect(reading.ok ? "" : reading.problem).toBe("");
  });

  it("serves multi-line orders in several currencies, with 0, 2 and 3 decimals", () => {
    const views = orders.map((o) => readOrder(OrderSchema.parse({ ...o, purchase_date: "2026-11-24T09:30:00Z" })));
    const read = views.flatMap((v) => (v.ok ? [v.view] : []));
    expect(new Set(read.map((v) => v.currency))).toEqual(new Set(["EUR", "USD", "JPY", "KWD"]));
    expect(read.filter((v) => v.lines.length > 1).map((v) => v.order_id)).toEqual(["ord_100", "ord_101"]);
    expect(read.find((v) => v.order_id === "ord_100")).toMatchObject({ total: { minor: 54_899, currency: "USD" } });
    expect(read.find((v) => v.order_id === "ord_101")).toMatchObject({ total: { minor: 10_400, currency: "JPY" } });
    expect(read.find((v) => v.order_id === "ord_102")).toMatchObject({ total: { minor: 20_500, currency: "KWD" } });
    // Each line of a multi-line order has its title: what a free-text claim's items are matched to (docs/llm.md).
    expect(read.filter((v) => v.lines.length > 1).flatMap((v) => v.lines.map((l) => l.title))).toEqual([
      "55-inch TV",
      "Cotton T-Shirt, medium",
      "Electric kettle",
      "Stoneware mug",
    ]);
  });
});
