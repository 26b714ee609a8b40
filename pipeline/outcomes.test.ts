// What an ACCEPT gives, through the real pipeline (in memory, docs/returns.md#outcomes): store credit with its bonus
// on the refund's events (at once, or on pay_on for a return), an exchange announced with no money moving, a claim
// asking what the policy does not allow refunded, and a claim asking nothing refunded exactly as before outcomes.
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { ClaimsContract } from "../core/integrity/index.ts";
import { claimView, returnDfid } from "../core/kernel/claim-record.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";
import { postReturnEvent } from "./returns.ts";
import { checkMoneyInvariants } from "./testing/money-invariants.ts";
import { recordedReturnEvents } from "./decide/returns.ts";

const START = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(START);
const OUTCOMES: ClaimsContract["outcomes"] = {
  categories: { electronics: { allows: ["STORE_CREDIT", "EXCHANGE"], store_credit_bonus_pct: 10 } },
};

function pipeline(over: Partial<Pick<ClaimsContract, "returns" | "outcomes">>) {
  let now = START;
  const contract = { ...config.agent.contract, ...over };
  const p = createInProcessPipeline({
    agent: { ...config.agent, contract },
    orders: config.orders,
    llm: createRulesModel({ contract, responsibility: config.agent.responsibility }),
    clock: { now: () => now },
  });
  const published = (type: string) => p.publisher.published.filter((e) => e.detailType === type);
  const invariants = async () => {
    const ledger = await p.deps.ledger.get("ord_001");
    const recorded = recordedReturnEvents(await p.deps.audit.byDfid(returnDfid("clm_o")));
    return checkMoneyInvariants(p.publisher.published as never, {
      orderAmountEur: (id) => config.orders.find((o) => o.order_id === id)?.amount as number | undefined,
      limitEur: contract.max_refund_without_escalation,
      ...(ledger ? { ledgers: [{ orderId: "ord_001", claims: ledger.claims }] } : {}),
      returnEvents: (claimId) => (claimId === "clm_o" ? recorded : undefined),
    }).violations;
  };
  return { p, published, invariants, later: (ms: number) => (now += ms) };
}

// ord_001: electronics, 299.99 EUR, bought 3 days before START.
const claim = (outcome?: "REFUND" | "STORE_CREDIT" | "EXCHANGE") => ({
  claim: {
    order_id: "ord_001",
    amount_eur: 299.99,
    category: "electronics",
    reason: "Arrived broken",
    ...(outcome ? { outcome } : {}),
  },
});
const CREDIT = { bonus: { value: "29.99", currency: "EUR" }, bonus_pct: 10 };

describe("an ACCEPT's outcome", () => {
  it("store credit: the reservation is the base, RefundExecuted carries the 10% bonus, the view says so", async () => {
    const t = pipeline({ outcomes: OUTCOMES });
    const { record } = await t.p.decide(claim("STORE_CREDIT"), { claimId: "clm_o" });
    expect(record).toMatchObject({ status: "DECIDED", executed: true, outcome: "STORE_CREDIT", credit: CREDIT });
    expect(t.published("RefundExecuted").map((e) => e.detail)).toEqual([
      expect.objectContaining({ amount: { value: "299.99", currency: "EUR" }, credit: CREDIT }),
    ]);
    expect((await t.p.deps.ledger.get("ord_001"))?.claims).toEqual({ clm_o: 29_999 });
    expect(claimView(record!)).toMatchObject({
      outcome: "STORE_CREDIT",
      customer_message: "Your claim is accepted: you receive store credit instead of a refund, with a 10% bonus.",
    });
    expect(await t.invariants()).toEqual([]);
    expect(replayClaim("clm_o", t.p.auditEvents()).status).toBe("IDENTICAL");
  });

  it("replay finds a recorded credit the recorded policy does not give", async () => {
    const t = pipeline({ outcomes: OUTCOMES });
    await t.p.decide(claim("STORE_CREDIT"), { claimId: "clm_o" });
    const forged = t.p
      .auditEvents()
      .map((e) =>
        e.event_type === "CLAIM_REFUND_EXECUTED"
          ? { ...e, details: { ...e.details, credit: { ...CREDIT, bonus_pct: 50 } } }
          : e,
      );
    expect(replayClaim("clm_o", forged).steps.find((s) => s.step === "execution")).toMatchObject({
      status: "DIFFERENT",
    });
  });

  it("store credit on a return: ReturnRequested reserves the credit, pay_on issues that credit once", async () => {
    const t = pipeline({ outcomes: OUTCOMES, returns: { return_required: true, pay_on: "delivered" } });
    const { record } = await t.p.decide(claim("STORE_CREDIT"), { claimId: "clm_o" });
    expect(record).toMatchObject({ status: "AWAITING_RETURN", outcome: "STORE_CREDIT" });
    expect(t.published("ReturnRequested")[0]?.detail).toMatchObject({ credit: CREDIT });
    expect(t.published("RefundExecuted")).toHaveLength(0);
    const at = new Date(START).toISOString();
    await postReturnEvent("clm_o", { event_id: "ev1", event: "delivered", at }, t.p.deps);
    await postReturnEvent("clm_o", { event_id: "ev1", event: "delivered", at }, t.p.deps);
    expect(t.published("RefundExecuted").map((e) => e.detail)).toEqual([expect.objectContaining({ credit: CREDIT })]);
    expect(await t.invariants()).toEqual([]);
    expect(replayClaim("clm_o", t.p.auditEvents()).status).toBe("IDENTICAL");
  });

  it("an exchange: ExchangeRequested names the line, nothing is paid, the line stays reserved", async () => {
    const t = pipeline({ outcomes: OUTCOMES, returns: { return_required: true } });
    const { record } = await t.p.decide(claim("EXCHANGE"), { claimId: "clm_o" });
    expect(record).toMatchObject({ status: "DECIDED", verdict: "ACCEPT", executed: false, outcome: "EXCHANGE" });
    expect(t.published("ExchangeRequested").map((e) => e.detail)).toEqual([
      expect.objectContaining({ claim_id: "clm_o", lines: [{ line_id: "1", quantity: 1 }] }),
    ]);
    expect(t.published("RefundExecuted")).toHaveLength(0);
    expect(t.published("ReturnRequested")).toHaveLength(0);
    expect((await t.p.deps.ledger.get("ord_001"))?.claims).toEqual({ clm_o: 29_999 });
    expect(claimView(record!).customer_message).toMatch(/sends you a replacement/);
    expect(await t.invariants()).toEqual([]);
    expect(replayClaim("clm_o", t.p.auditEvents()).status).toBe("IDENTICAL");
  });

  it.each([
    ["a claim asking nothing", undefined, { outcomes: OUTCOMES }],
    ["an ask the policy does not allow", "STORE_CREDIT" as const, {}],
  ])("%s is refunded as before: no credit on any event, no outcome on the claim", async (_, outcome, over) => {
    const t = pipeline(over);
    const { record } = await t.p.decide(claim(outcome), { claimId: "clm_o" });
    expect(record).toMatchObject({ status: "DECIDED", executed: true });
    expect(record).not.toHaveProperty("outcome");
    expect(t.published("RefundExecuted")[0]?.detail).not.toHaveProperty("credit");
    expect(await t.invariants()).toEqual([]);
  });
});
