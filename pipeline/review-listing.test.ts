// The queue survives the shop (docs/reviews.md): GET /reviews reads each listed order once, bounded in count and in
// time; an order the shop cannot serve — down, garbled, slow — shows on its own item as `order: null` with why,
// and every other review is listed with its order.
import { describe, expect, it } from "vitest";
import type { Order } from "../core/integrity/index.ts";
import { OrderDataError } from "../core/integrity/index.ts";
import { OrderSourceUnavailableError } from "./errors.ts";
import { readOrdersBounded } from "./order-reads.ts";
import type { OrderSource } from "./ports.ts";
import { listReviews } from "./review.ts";
import { bundledConfig, bundledPipeline } from "./bundled-config.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
const claim = (order_id: string) => ({ order_id, amount_eur: 1200, category: "electronics", reason: "Does not boot" });

/** Three escalations, on ord_002, ord_003 and ord_016 (1200 EUR each, above the automatic limit). */
async function threeEscalations() {
  let now = NOW;
  const p = bundledPipeline(config, { now: () => (now += 1000) });
  for (const [i, order] of ["ord_002", "ord_003", "ord_016"].entries()) {
    const { record } = await p.decide({ claim: claim(order) }, { claimId: `clm_${i}` });
    expect(record?.verdict).toBe("ESCALATE");
  }
  return p;
}

/** An order source whose answer per order id the test chooses, counting the reads. */
function shop(answers: Record<string, () => Promise<Order | undefined>>, fallback: OrderSource) {
  const reads: string[] = [];
  const source: OrderSource = {
    getOrder: (id) => {
      reads.push(id);
      return answers[id]?.() ?? fallback.getOrder(id);
    },
  };
  return { source, reads };
}

const orderOf = (item: { context: { facts?: Record<string, unknown> } }) => item.context.facts?.order;

describe("GET /reviews while the shop cannot serve an order", () => {
  it.each([
    [
      "the order API is down (a 500, an HTML body)",
      async () => {
        throw new OrderSourceUnavailableError(
          "order API GET …/orders/ord_003 failed after 3 attempts: answered HTTP 500",
        );
      },
      "ORDER_SOURCE_UNAVAILABLE",
      /cannot be read now \(order API GET .* answered HTTP 500\)/,
    ],
    [
      "the order is unusable",
      async () => {
        throw new OrderDataError("order ord_003: amount 1.234 is not whole cents");
      },
      "ORDER_DATA_INVALID",
      /not whole cents/,
    ],
    ["the order is gone", async () => undefined, "ORDER_NOT_FOUND", /does not know order ord_003/],
  ])("%s: that item shows order null and why, every other review its order", async (_, answer, code, reason) => {
    const p = await threeEscalations();
    const s = shop({ ord_003: answer }, p.deps.orders);
    const { items } = await listReviews({}, { ...p.deps, orders: s.source });
    expect(items.map((i) => i.review.order_id)).toEqual(["ord_002", "ord_003", "ord_016"]);
    expect(orderOf(items[0]!)).toMatchObject({ order_id: "ord_002", amount_eur: 1200 });
    expect(orderOf(items[1]!)).toBeNull();
    expect(items[1]!.context.facts?.order_unread).toEqual({ code, reason: expect.stringMatching(reason) });
    expect(orderOf(items[2]!)).toMatchObject({ order_id: "ord_016" });
    // The ledger's facts do not need the shop.
    expect(items[1]!.context.facts?.refunded).toEqual({
      automatic_eur: 0,
      approved_eur: 0,
      automatic: { value: "0.00", currency: "EUR" },
      approved: { value: "0.00", currency: "EUR" },
    });
  });

  it("does not wait past its budget for an order that never comes", async () => {
    const p = await threeEscalations();
    let release!: () => void;
    const deadline = new Promise<void>((resolve) => (release = resolve));
    // The deadline passes once the two other orders have answered; the third never does.
    let answered = 0;
    const answer = (id: string) => async () => {
      const order = await p.deps.orders.getOrder(id);
      if (++answered === 2) setImmediate(release);
      return order;
    };
    const s = shop(
      { ord_002: answer("ord_002"), ord_003: answer("ord_003"), ord_016: () => new Promise(() => undefined) },
      p.deps.orders,
    );
    const { items } = await listReviews({ orderReads: { deadline } }, { ...p.deps, orders: s.source });
    expect(orderOf(items[2]!)).toBeNull();
    expect(items[2]!.context.facts?.order_unread).toEqual({
      code: "ORDER_SOURCE_UNAVAILABLE",
      reason: "the shop's order API did not answer within 3 s; the next listing reads it again",
    });
    expect(orderOf(items[0]!)).toMatchObject({ order_id: "ord_002" });
    expect(orderOf(items[1]!)).toMatchObject({ order_id: "ord_003" });
  });

  it("reads at most `max` distinct orders, each once; the rest show as not read", async () => {
    const p = await threeEscalations();
    await p.decide({ claim: { ...claim("ord_002"), amount_eur: 100 } }, { claimId: "clm_same_order" });
    const s = shop({}, p.deps.orders);
    const { items } = await listReviews({ orderReads: { max: 2 } }, { ...p.deps, orders: s.source });
    expect(s.reads.sort()).toEqual(["ord_002", "ord_003"]);
    const byOrder = Object.fromEntries(items.map((i) => [i.review.claim_id, orderOf(i)]));
    expect(byOrder.clm_same_order).toMatchObject({ order_id: "ord_002" });
    expect(byOrder.clm_2).toBeNull();
    expect(items.find((i) => i.review.claim_id === "clm_2")!.context.facts?.order_unread).toMatchObject({
      code: "ORDER_NOT_READ",
    });
  });
});

describe("readOrdersBounded", () => {
  it("lets an error that is not the source's own through (a bug is not an outage)", async () => {
    const broken: OrderSource = {
      getOrder: async () => {
        throw new TypeError("undefined is not a function");
      },
    };
    await expect(readOrdersBounded(broken, ["ord_1"])).rejects.toThrow(TypeError);
  });
});
