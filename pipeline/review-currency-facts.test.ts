// No EUR names on other currencies (docs/reviews.md#what-a-reviewer-sees): a review of a USD order lists what was
// refunded on it, its other claims, the customer's window and the approvals as `{ value, currency }` in USD, with
// no `_eur` figure; an EUR order keeps its `_eur` figures beside the new ones. The customer's window counts the
// order's currency only.
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { Order } from "../core/integrity/index.ts";
import { reviewListItem } from "../core/kernel/review.ts";
import { TV_AND_SHIRTS } from "../core/kernel/order-lines.test-kit.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { decideReview, listReviews } from "./review.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
const agent = {
  ...config.agent,
  contract: {
    ...config.agent.contract,
    customer_limits: { window_days: 30, max_automatic_refunds: 5, max_automatic_eur: 500 },
    currencies: { USD: { max_refund_without_escalation: 100, second_approval_above: 200 } },
  },
};
const USD_ORDER = {
  order_id: "ord_usd",
  purchase_date: "2026-05-29T10:00:00Z",
  currency: "USD",
  customer_id: "cus_us",
  lines: TV_AND_SHIRTS.map((line) => ({ ...line })),
} as Order;
// The same customer's EUR order: its refund must not show in the USD order's window.
const EUR_ORDER = {
  order_id: "ord_eur",
  purchase_date: "2026-05-29T10:00:00Z",
  currency: "EUR",
  customer_id: "cus_us",
  category: "electronics",
  amount: 80,
} as Order;

describe("a review's facts in the order's currency", () => {
  it("lists a USD order's refunds, other claims, customer window and approvals in USD, with no _eur figure", async () => {
    let now = NOW;
    const p = createInProcessPipeline({
      agent,
      orders: [...config.orders, USD_ORDER, EUR_ORDER],
      llm: createRulesModel({ contract: agent.contract, responsibility: agent.responsibility }),
      clock: { now: () => (now += 1000) },
    });
    const claim = (order_id: string, amount_eur: number, category: string) => ({
      claim: { order_id, amount_eur, category, reason: "Broken", customer_id: "cus_us" },
    });
    expect((await p.decide(claim("ord_eur", 50, "electronics"), { claimId: "clm_eur" })).record?.verdict).toBe(
      "ACCEPT",
    );
    expect((await p.decide(claim("ord_usd", 30, "clothing"), { claimId: "clm_shirt" })).record?.verdict).toBe("ACCEPT");
    expect((await p.decide(claim("ord_usd", 450, "electronics"), { claimId: "clm_tv" })).record?.verdict).toBe(
      "ESCALATE",
    );
    // A first approval above the USD four-eyes bound: it awaits a second reviewer.
    expect(await decideReview("clm_tv", { decision: "APPROVE", reviewer: "ann" }, p.deps)).toMatchObject({ ok: true });
    const { items } = await listReviews({}, p.deps);
    const item = items.find((i) => i.review.claim_id === "clm_tv")!;
    const view = reviewListItem(item.review, item.context);
    const usd = (value: string) => ({ value, currency: "USD" });
    expect(view).toMatchObject({
      amount: usd("450.00"),
      refunded: { automatic: usd("30.00"), approved: usd("0.00") },
      other_claims: [{ claim_id: "clm_shirt", amount: usd("30.00") }],
      // The customer's EUR refund (50.00 EUR) is not counted in the USD order's window, nor shown as USD; the policy
      // bounds no USD customer window, so the USD refund is not recorded there either.
      customer_window: { refunds: 0, refunded: usd("0.00") },
      approvals: [{ reviewer: "ann", amount: usd("450.00") }],
      awaiting: "SECOND_APPROVAL",
    });
    const json = JSON.stringify({ ...view, claim: undefined, proposal: undefined, checks: undefined });
    expect(json).not.toMatch(/_eur/);
  });

  it("keeps an EUR order's _eur figures beside its amounts", async () => {
    const p = createInProcessPipeline({
      agent,
      orders: [...config.orders, EUR_ORDER],
      llm: createRulesModel({ contract: agent.contract, responsibility: agent.responsibility }),
      clock: { now: () => NOW },
    });
    const body = { claim: { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Dead" } };
    expect((await p.decide(body, { claimId: "clm_big" })).record?.verdict).toBe("ESCALATE");
    const { items } = await listReviews({}, p.deps);
    const view = reviewListItem(items[0]!.review, items[0]!.context);
    expect(view).toMatchObject({
      amount_eur: 1200,
      amount: { value: "1200.00", currency: "EUR" },
      refunded: { automatic_eur: 0, automatic: { value: "0.00", currency: "EUR" } },
    });
  });
});
