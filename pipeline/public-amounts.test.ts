// The public shapes of issue 32 through the real pipeline (in memory): a claim on a USD order with lines publishes its
// verdict with `amount` in USD (no `amount_eur`) and a verdict per line, the claim's view says the same, and the
// refund is announced and paid in the order's currency.
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { Order } from "../core/integrity/index.ts";
import { DAY_MS } from "../core/integrity/time.ts";
import { claimView } from "../core/kernel/claim-record.ts";
import { parseBusEntry, type BusEntry } from "../core/kernel/events.ts";
import { TV_AND_SHIRTS } from "../core/kernel/order-lines.test-kit.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";
import { createInProcessPipeline } from "./in-process.ts";
import {
  createInMemoryAuditLog,
  createInMemoryContextStore,
  createInMemorySettlementRepository,
  createRecordingPublisher,
} from "./in-memory.ts";
import { payRefund, type PaymentProvider } from "./payments.ts";
import type { RefundExecutedDetail } from "../core/kernel/events.ts";
import { decideReview } from "./review.ts";
import { replayClaim } from "../core/history/replay/index.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
const agent = {
  ...config.agent,
  contract: {
    ...config.agent.contract,
    return_window_days: { default: 14, electronics: 30 },
    currencies: { USD: { max_refund_without_escalation: 600 }, KWD: { max_refund_without_escalation: 150 } },
  },
};

// Bought 20 days ago: the TV (electronics, 30 days) is within its window, the shirts (14 days) are not.
const USD_ORDER = {
  order_id: "ord_usd",
  purchase_date: new Date(NOW - 20 * DAY_MS).toISOString(),
  currency: "USD",
  shipping: "9.99",
  lines: TV_AND_SHIRTS.map((line) => ({ ...line })),
} as Order;

function pipeline(orders: Order[]) {
  return createInProcessPipeline({
    agent,
    orders: [...config.orders, ...orders],
    llm: createRulesModel({ contract: agent.contract, responsibility: agent.responsibility }),
    clock: { now: () => NOW },
  });
}

/** The details published of one detail-type, each checked against its bus schema. */
function published(entries: readonly BusEntry[], type: BusEntry["detailType"]): Record<string, unknown>[] {
  return entries
    .filter((e) => e.detailType === type)
    .map((e) => {
      const parsed = parseBusEntry(e);
      if (!parsed.ok) throw new Error(parsed.message);
      return parsed.entry.detail as Record<string, unknown>;
    });
}

describe("amounts in their currency and verdicts per line, on the bus and in the claim's view", () => {
  it("accepts a claim on the TV: the verdict and the refund carry 499.00 USD and no amount_eur", async () => {
    const p = pipeline([USD_ORDER]);
    const body = { claim: { order_id: "ord_usd", amount_eur: 499, category: "electronics", reason: "Dead screen" } };
    const { record } = await p.decide(body, { claimId: "clm_tv" });
    expect(record?.verdict).toBe("ACCEPT");
    const [verdict] = published(p.publisher.published, "ClaimVerdict");
    expect(verdict).toMatchObject({
      amount: { value: "499.00", currency: "USD" },
      lines: [
        {
          line_id: "l1",
          verdict: "ACCEPT",
          reason_code: "VALIDATION_PASSED",
          amount: { value: "499.00", currency: "USD" },
        },
      ],
    });
    expect(verdict).not.toHaveProperty("amount_eur");
    const [refund] = published(p.publisher.published, "RefundExecuted");
    expect(refund).toMatchObject({ amount: { value: "499.00", currency: "USD" } });
    expect(refund).not.toHaveProperty("amount_eur");
    expect(claimView(record!)).toMatchObject({ amount: { value: "499.00", currency: "USD" }, lines: verdict!.lines });
    // The audit keeps what it recorded before currencies: the verdict's amount_eur, no `amount`, no lines.
    const audited = p.auditEvents().find((e) => e.event_type === "KERNEL_VERDICT")!.details;
    expect(audited).toMatchObject({ amount_eur: 499 });
    expect(audited).not.toHaveProperty("amount");
    expect(audited).not.toHaveProperty("lines");
  });

  it("rejects a claim on both lines when the shirts are out of their window, saying which line failed", async () => {
    const p = pipeline([USD_ORDER]);
    const lines = [{ line_id: "l1" }, { line_id: "l2" }];
    const body = { claim: { order_id: "ord_usd", amount_eur: 539, category: "electronics", reason: "Both", lines } };
    const { record } = await p.decide(body, { claimId: "clm_both" });
    expect(record).toMatchObject({ verdict: "REJECT", reason_code: "OUTSIDE_RETURN_WINDOW" });
    const expected = [
      {
        line_id: "l1",
        verdict: "REJECT",
        reason_code: "OTHER_LINE_FAILED",
        amount: { value: "499.00", currency: "USD" },
      },
      {
        line_id: "l2",
        verdict: "REJECT",
        reason_code: "OUTSIDE_RETURN_WINDOW",
        amount: { value: "40.00", currency: "USD" },
      },
    ];
    expect(published(p.publisher.published, "ClaimVerdict")[0]?.lines).toEqual(expected);
    expect(claimView(record!)).toMatchObject({ amount: { value: "539.00", currency: "USD" }, lines: expected });
    expect(published(p.publisher.published, "RefundExecuted")).toEqual([]);
  });

  it("keeps amount_eur beside the amount for an EUR order, and gives a one-line order no lines", async () => {
    const p = pipeline([]);
    const body = { claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Dead" } };
    const { record } = await p.decide(body, { claimId: "clm_eur" });
    const [verdict] = published(p.publisher.published, "ClaimVerdict");
    expect(verdict).toMatchObject({ amount_eur: 299.99, amount: { value: "299.99", currency: "EUR" } });
    expect(verdict).not.toHaveProperty("lines");
    expect(claimView(record!)).not.toHaveProperty("lines");
  });

  it("announces an escalated USD claim's review with its amount in USD", async () => {
    const body = {
      claim: { order_id: "ord_usd", amount_eur: 499, category: "electronics", reason: "x", currency: "USD" },
    };
    const strict = createInProcessPipeline({
      agent: { ...agent, contract: { ...agent.contract, currencies: { USD: { max_refund_without_escalation: 100 } } } },
      orders: [...config.orders, USD_ORDER],
      llm: createRulesModel({ contract: agent.contract, responsibility: agent.responsibility }),
      clock: { now: () => NOW },
    });
    const { record } = await strict.decide(body, { claimId: "clm_big" });
    expect(record?.verdict).toBe("ESCALATE");
    for (const type of ["ReviewRequested", "ReviewOpened"] as const) {
      const [detail] = published(strict.publisher.published, type);
      expect(detail).toMatchObject({ amount: { value: "499.00", currency: "USD" } });
      expect(detail).not.toHaveProperty("amount_eur");
    }
  });

  it("refunds 12.345 KWD end to end: intake takes three decimals, the kernel reserves fils, the provider is asked 12345", async () => {
    const kwd = {
      order_id: "ord_kwd",
      purchase_date: new Date(NOW - 2 * DAY_MS).toISOString(),
      currency: "KWD",
      payment_ref: "pi_kwd",
      lines: [
        { line_id: "a", category: "electronics", quantity: 1, amount: "120.500" },
        { line_id: "b", category: "clothing", quantity: 1, amount: "12.345" },
      ],
    } as Order;
    const p = pipeline([kwd]);
    const body = {
      claim: { order_id: "ord_kwd", amount_eur: 12.345, category: "clothing", reason: "Torn" },
    };
    const { submit, record } = await p.decide(body, { claimId: "clm_kwd" });
    expect(submit.ok).toBe(true);
    expect(record).toMatchObject({ verdict: "ACCEPT", amount: { value: "12.345", currency: "KWD" } });
    expect(record?.lines).toEqual([
      {
        line_id: "b",
        verdict: "ACCEPT",
        reason_code: "VALIDATION_PASSED",
        amount: { value: "12.345", currency: "KWD" },
      },
    ]);
    expect((await p.deps.ledger.get("ord_kwd"))?.line_cents).toEqual({ b: 12_345 });
    const [refund] = published(p.publisher.published, "RefundExecuted");
    expect(refund).toMatchObject({ amount: { value: "12.345", currency: "KWD" } });
    // The refund executor asks the provider for the fils, in KWD (Stripe's three-decimal rule is the adapter's).
    const asked: [number, string][] = [];
    const provider: PaymentProvider = {
      name: "stripe",
      needsPaymentRef: true,
      refund: async (r) => {
        asked.push([r.amountMinor, r.currency]);
        return { status: "SETTLED", providerRef: "re_1" };
      },
    };
    const publisher = createRecordingPublisher();
    const settled = await payRefund(
      {
        settlements: createInMemorySettlementRepository(),
        provider,
        orders: createInMemoryContextStore([kwd]),
        publisher,
        audit: createInMemoryAuditLog(),
        clock: { now: () => NOW },
      },
      refund as RefundExecutedDetail,
    );
    expect(settled).toBe("SETTLED");
    expect(asked).toEqual([[12_345, "KWD"]]);
    expect(published(publisher.published, "RefundSettled")[0]).toMatchObject({
      amount: { value: "12.345", currency: "KWD" },
    });
  });

  it("rejects three decimals on an EUR order in the kernel (INVALID_AMOUNT), not at intake", async () => {
    const p = pipeline([]);
    const body = { claim: { order_id: "ord_001", amount_eur: 10.005, category: "electronics", reason: "x" } };
    const { record } = await p.decide(body, { claimId: "clm_sub" });
    expect(record).toMatchObject({ verdict: "REJECT", reason_code: "INVALID_AMOUNT" });
  });
  it("a person's approval of a JPY claim reserves, audits and announces whole yen, and replays IDENTICAL", async () => {
    const jpy = {
      order_id: "ord_jpy",
      purchase_date: new Date(NOW - 2 * DAY_MS).toISOString(),
      currency: "JPY",
      payment_ref: "pi_jpy",
      category: "electronics",
      amount: 50000,
    } as Order;
    const withJpy = (jpyBounds: { max_refund_without_escalation: number; second_approval_above?: number }) =>
      createInProcessPipeline({
        agent: { ...agent, contract: { ...agent.contract, currencies: { JPY: jpyBounds } } },
        orders: [...config.orders, jpy],
        llm: createRulesModel({ contract: agent.contract, responsibility: agent.responsibility }),
        clock: { now: () => NOW },
      });
    const body = { claim: { order_id: "ord_jpy", amount_eur: 12800, category: "electronics", reason: "Dead" } };
    // The policy has four eyes in EUR (second_approval_above_eur) but none in JPY: 12800 yen are never compared with
    // a bound in euros; every approval in yen takes two reviewers.
    expect(config.agent.review?.secondApprovalAboveEur).toBeDefined();
    const strict = withJpy({ max_refund_without_escalation: 10000 });
    expect((await strict.decide(body, { claimId: "clm_jpy" })).record?.verdict).toBe("ESCALATE");
    const first = await decideReview("clm_jpy", { decision: "APPROVE", reviewer: "alice" }, strict.deps);
    expect(first).toMatchObject({ ok: true, body: { review: { awaiting: "SECOND_APPROVAL" }, executed: false } });
    // With JPY's own bound (20000 yen), one reviewer approves 12800 yen.
    const p = withJpy({ max_refund_without_escalation: 10000, second_approval_above: 20000 });
    const { record } = await p.decide(body, { claimId: "clm_jpy" });
    expect(record?.verdict).toBe("ESCALATE");
    const approved = await decideReview("clm_jpy", { decision: "APPROVE", reviewer: "alice" }, p.deps);
    expect(approved).toMatchObject({ ok: true, body: { review: { status: "APPROVED" } } });
    // 12800 yen are 12800 minor units: on the ledger, in the audit of the approval's refund and on the bus.
    expect((await p.deps.ledger.get("ord_jpy"))?.refunded_cents).toBe(12_800);
    const executed = p.auditEvents().filter((e) => e.event_type === "CLAIM_REFUND_EXECUTED");
    expect(executed.map((e) => e.details.amount_cents)).toEqual([12_800]);
    const [refund] = published(p.publisher.published, "RefundExecuted");
    expect(refund).toMatchObject({ amount: { value: "12800", currency: "JPY" } });
    const replay = replayClaim("clm_jpy", p.auditEvents());
    expect(replay.steps.filter((s) => s.status !== "IDENTICAL")).toEqual([]);
    expect(replay.status).toBe("IDENTICAL");
    // An audit that records the approval in cents of a euro (100 times the yen) does not replay IDENTICAL.
    const forged = p
      .auditEvents()
      .map((e) =>
        e.event_type === "CLAIM_REFUND_EXECUTED" ? { ...e, details: { ...e.details, amount_cents: 1_280_000 } } : e,
      );
    expect(replayClaim("clm_jpy", forged).status).not.toBe("IDENTICAL");
  });
});
