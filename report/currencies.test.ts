// The report never adds two currencies (issue 32): a run holding an EUR and a USD refund shows each in its currency
// ("Refunds authorised 2 (299.99 EUR, 499.00 USD)"), and the money-at-stake chart counts the EUR claims only.
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { Order } from "../core/integrity/index.ts";
import { DAY_MS } from "../core/integrity/time.ts";
import { TV_AND_SHIRTS } from "../core/kernel/order-lines.test-kit.ts";
import { bundledConfig } from "../pipeline/bundled-config.test-kit.ts";
import { createInProcessPipeline } from "../pipeline/in-process.ts";
import { buildReportModel } from "./model.ts";
import { renderReport } from "./render.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
const agent = {
  ...config.agent,
  contract: { ...config.agent.contract, currencies: { USD: { max_refund_without_escalation: 600 } } },
};
const USD_ORDER = {
  order_id: "ord_usd",
  purchase_date: new Date(NOW - 2 * DAY_MS).toISOString(),
  currency: "USD",
  lines: TV_AND_SHIRTS.map((line) => ({ ...line })),
} as Order;

async function run() {
  return buildReportModel(await runEvents());
}

async function runEvents() {
  const p = createInProcessPipeline({
    agent,
    orders: [...config.orders, USD_ORDER],
    llm: createRulesModel({ contract: agent.contract, responsibility: agent.responsibility }),
    clock: { now: () => NOW },
  });
  const eur = { claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Dead" } };
  const usd = { claim: { order_id: "ord_usd", amount_eur: 499, category: "electronics", reason: "Dead" } };
  expect((await p.decide(eur, { claimId: "clm_eur" })).record?.verdict).toBe("ACCEPT");
  expect((await p.decide(usd, { claimId: "clm_usd" })).record?.verdict).toBe("ACCEPT");
  return p.auditEvents();
}

describe("a report of refunds in two currencies", () => {
  it("totals the refunds per currency, EUR first, and never adds the USD refund to the EUR one", async () => {
    const model = await run();
    expect(model.refunds).toEqual({
      count: 2,
      totalEur: 299.99,
      totals: [
        { value: "299.99", currency: "EUR" },
        { value: "499.00", currency: "USD" },
      ],
    });
    expect(model.claims.find((t) => t.claimId === "clm_usd")?.currency).toBe("USD");
    // The chart of money at stake is EUR's: the USD refund is not in it.
    expect(model.money.refundedAuto).toBe(299.99);
  });

  it("prints each total in its currency", async () => {
    const html = renderReport(await runEvents());
    expect(html).toMatch(/data-summary="refunds">2 <span class="muted">\(299\.99 EUR, 499\.00 USD;/);
  });
});
