// The claims the pipeline benches send: one order each, and free text the rules extractor reads back.
import { describe, expect, it } from "vitest";
import { extractClaimFromText } from "../../core/extraction/extraction.ts";
import { benchOrders, claimBody, CLAIM_EUR } from "./claims.ts";
import { orderTotalMajor } from "../../core/kernel/order-view.ts";

describe("bench claims", () => {
  it("gives each claim its own electronics order worth more than the claim", () => {
    const orders = benchOrders("structured", 3, Date.parse("2026-06-01T12:00:00Z"), 10);
    expect(orders.map((o) => o.order_id)).toEqual(["ord_bs000011", "ord_bs000012", "ord_bs000013"]);
    expect(
      orders.every(
        (o) =>
          o.category === "electronics" &&
          orderTotalMajor(o) > CLAIM_EUR &&
          o.purchase_date === "2026-05-29T12:00:00.000Z",
      ),
    ).toBe(true);
  });

  it("writes free text the rules extractor reads back to the same claim", () => {
    const [order] = benchOrders("free_text", 1, Date.parse("2026-06-01T12:00:00Z"));
    const text = (claimBody("free_text", order!.order_id) as { claim_text: string }).claim_text;
    const extracted = extractClaimFromText(text, Date.parse("2026-06-01T12:00:00Z"));
    expect(extracted).toMatchObject({
      claim: { order_id: order!.order_id, amount_eur: CLAIM_EUR, category: "electronics" },
    });
  });
});
