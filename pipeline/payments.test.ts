// Paying an authorised refund and recording the provider's word: redelivery, a crash between the provider call
// and its record, webhooks twice and out of order, failures that open the refund's own review.
import { describe, expect, it } from "vitest";
import { createSimulatedDecline, createSimulatedPaymentProvider } from "../adapters/payments/simulated.ts";
import { createStripePaymentProvider } from "../adapters/payments/stripe.ts";
import { startStripeWireMock } from "../adapters/payments/stripe-wire.test-kit.ts";
import type { RefundExecutedDetail } from "../core/kernel/events.ts";
import { refundReviewId } from "../core/kernel/settlement.ts";
import {
  createInMemoryAuditLog,
  createInMemoryContextStore,
  createInMemorySettlementRepository,
  createRecordingPublisher,
} from "./in-memory.ts";
import { payRefund, recordProviderUpdate, rehearsePayment } from "./payments.ts";
import type { PaymentDeps, PaymentProvider } from "./payments.ts";
import type { SettlementRepository } from "./ports.ts";

const ORDERS = [
  { order_id: "ord_1", purchase_date: "2026-11-01", category: "electronics", amount: 299.99, payment_ref: "pi_1" },
  { order_id: "ord_2", purchase_date: "2026-11-01", category: "electronics", amount: 50 },
  {
    order_id: "ord_3",
    purchase_date: "2026-11-01",
    category: "electronics",
    amount: 80,
    payment_ref: "sim_decline_expired_card",
  },
  {
    order_id: "ord_jp",
    purchase_date: "2026-11-01",
    currency: "JPY",
    category: "home",
    amount: 8000,
    payment_ref: "pi_jp",
  },
  {
    order_id: "ord_kw",
    purchase_date: "2026-11-01",
    currency: "KWD",
    category: "home",
    amount: "20.500",
    payment_ref: "pi_kw",
  },
];

const executed = (over: Partial<RefundExecutedDetail> = {}): RefundExecutedDetail => ({
  execution_id: "exe_1",
  claim_id: "clm_1",
  dfid: "dfid_clm_1",
  order_id: "ord_1",
  amount_eur: 299.99,
  verdict_id: "vrd_1",
  ...over,
});

function deps(provider: PaymentProvider, settlements: SettlementRepository = createInMemorySettlementRepository()) {
  const publisher = createRecordingPublisher();
  const audit = createInMemoryAuditLog();
  let now = Date.parse("2026-11-27T10:00:00Z");
  const d: PaymentDeps = {
    settlements,
    provider,
    orders: createInMemoryContextStore(ORDERS),
    publisher,
    audit,
    clock: { now: () => (now += 1000) },
  };
  return { d, publisher, audit, settlements };
}

/** A provider that answers what it is told and counts its calls. */
function scripted(answer: Awaited<ReturnType<PaymentProvider["refund"]>>) {
  const calls: string[] = [];
  const provider: PaymentProvider = {
    name: "stripe",
    needsPaymentRef: true,
    refund: async (r) => {
      calls.push(r.executionId);
      return answer;
    },
  };
  return { provider, calls };
}

describe("paying a RefundExecuted", () => {
  it.each([
    ["yen in whole yen", "ord_jp", 1200, 1200, "JPY"],
    ["dinars in fils", "ord_kw", 1.25, 1250, "KWD"],
    ["euros in cents", "ord_1", 299.99, 29999, "EUR"],
  ])("asks the provider for %s, in the order's currency", async (_, order_id, amount_eur, minor, currency) => {
    const asked: [number, string][] = [];
    const provider: PaymentProvider = {
      name: "stripe",
      needsPaymentRef: true,
      refund: async (r) => {
        asked.push([r.amountMinor, r.currency]);
        return { status: "SETTLED", providerRef: "re_1" };
      },
    };
    expect(await payRefund(deps(provider).d, executed({ order_id, amount_eur }))).toBe("SETTLED");
    expect(asked).toEqual([[minor, currency]]);
  });

  it("settles, announces RefundSettled once, and a redelivery neither pays nor announces again", async () => {
    const { provider, calls } = scripted({ status: "SETTLED", providerRef: "re_1" });
    const { d, publisher, audit } = deps(provider);
    expect(await payRefund(d, executed())).toBe("SETTLED");
    expect(await payRefund(d, executed())).toBe("already recorded");
    expect(calls).toEqual(["exe_1"]);
    expect(publisher.published.map((e) => e.detailType)).toEqual(["RefundSettled"]);
    expect(publisher.published[0]!.detail).toMatchObject({
      execution_id: "exe_1",
      provider: "stripe",
      provider_ref: "re_1",
    });
    expect(audit.all().map((e) => e.event_type)).toEqual(["REFUND_SETTLED"]);
    expect(audit.all()[0]!.dfid).not.toBe("dfid_clm_1");
  });

  it("never pays a simulation's refund", async () => {
    const { provider, calls } = scripted({ status: "SETTLED", providerRef: "re_1" });
    const { d, settlements } = deps(provider);
    expect(await payRefund(d, executed({ simulation_id: "sim_1" }))).toBe("simulation: never paid");
    expect(calls).toEqual([]);
    expect(await settlements.get("clm_1")).toBeUndefined();
  });

  it("a refusal is FAILED with the reason and opens the refund's own review (id from the execution)", async () => {
    const { provider } = scripted({ status: "FAILED", failureReason: "expired_card: The card has expired." });
    const { d, publisher, settlements } = deps(provider);
    expect(await payRefund(d, executed())).toBe("FAILED");
    const stored = await settlements.get("clm_1");
    expect(stored).toMatchObject({
      status: "FAILED",
      failure_reason: "expired_card: The card has expired.",
      review: { review_id: refundReviewId("exe_1"), origin: "REFUND_FAILED", status: "PENDING" },
    });
    expect(publisher.published.map((e) => e.detailType)).toEqual(["RefundFailed", "ReviewOpened"]);
  });

  it("the simulated provider settles at once, but refuses an order whose payment_ref is sim_decline_<reason>", async () => {
    const { d, settlements, publisher } = deps(createSimulatedPaymentProvider());
    expect(await payRefund(d, executed({ order_id: "ord_2", amount_eur: 50 }))).toBe("SETTLED");
    expect(await settlements.get("clm_1")).toMatchObject({ status: "SETTLED", provider_ref: "sim_re_exe_1" });
    const declined = deps(createSimulatedPaymentProvider());
    expect(await payRefund(declined.d, executed({ claim_id: "clm_3", order_id: "ord_3", amount_eur: 80 }))).toBe(
      "FAILED",
    );
    expect(await declined.settlements.get("clm_3")).toMatchObject({
      status: "FAILED",
      failure_reason: "expired_card (simulated)",
      review: { origin: "REFUND_FAILED", status: "PENDING" },
    });
    expect(publisher.published.map((e) => e.detailType)).toEqual(["RefundSettled"]);
  });

  it("an order without payment_ref fails without calling Stripe", async () => {
    const { provider, calls } = scripted({ status: "SETTLED" });
    const { d } = deps(provider);
    expect(await payRefund(d, executed({ order_id: "ord_2", amount_eur: 50 }))).toBe("FAILED");
    expect(calls).toEqual([]);
  });

  it("a crash between the provider call and its record: the retry reuses the idempotency key, Stripe pays once", async () => {
    const mock = await startStripeWireMock("sk_test_crash_0123456789");
    try {
      const inner = createInMemorySettlementRepository();
      let crashes = 1;
      const crashing: SettlementRepository = {
        ...inner,
        update: async (next) => {
          if (next.status !== "PENDING" && crashes-- > 0) throw new Error("process died before recording");
          return inner.update(next);
        },
      };
      const provider = createStripePaymentProvider({
        apiKey: "sk_test_crash_0123456789",
        apiBase: mock.base,
        maxNetworkRetries: 0,
      });
      const { d, publisher } = deps(provider, crashing);
      await expect(payRefund(d, executed())).rejects.toThrow(/process died/);
      expect((await inner.get("clm_1"))?.status).toBe("PENDING");
      expect(await payRefund(d, executed())).toBe("SETTLED");
      expect(mock.requests.map((r) => r.idempotencyKey)).toEqual(["exe_1", "exe_1"]);
      expect(mock.refunds).toHaveLength(1);
      expect(publisher.published.map((e) => e.detailType)).toEqual(["RefundSettled"]);
    } finally {
      await mock.close();
    }
  });
});

describe("rehearsing a batch run's refund (a payment step)", () => {
  const simulation = executed({ simulation_id: "sim_1", order_id: "ord_1" });

  it("declines through the same settlement, RefundFailed, ReviewOpened and review a real decline opens, all the run's", async () => {
    const { d, publisher, audit, settlements } = deps(createSimulatedDecline("card_declined"));
    expect(await rehearsePayment(d, simulation)).toBe("FAILED");
    const record = await settlements.get("clm_1");
    expect(record).toMatchObject({
      status: "FAILED",
      provider: "simulated",
      failure_reason: "card_declined (simulated)",
      simulation_id: "sim_1",
      review: { review_id: refundReviewId("exe_1"), status: "PENDING", origin: "REFUND_FAILED" },
    });
    expect(
      publisher.published.map((e) => [e.detailType, (e.detail as { simulation_id?: string }).simulation_id]),
    ).toEqual([
      ["RefundFailed", "sim_1"],
      ["ReviewOpened", "sim_1"],
    ]);
    expect(await audit.bySimulation("sim_1")).toEqual([
      expect.objectContaining({ event_type: "REFUND_FAILED", dfid: "dfid_pay_clm_1" }),
    ]);
    // The same step again records nothing new.
    expect(await rehearsePayment(d, simulation)).toBe("already recorded");
    expect(publisher.published).toHaveLength(2);
  });

  it("refuses a refund that is not a simulation's, and any provider but the simulated one, before anything is recorded", async () => {
    const simulated = deps(createSimulatedDecline("card_declined"));
    await expect(rehearsePayment(simulated.d, executed())).rejects.toThrow(
      /refund exe_1 of claim clm_1 is not a simulation's: only a batch run's refund is rehearsed/,
    );
    const { provider, calls } = scripted({ status: "SETTLED", providerRef: "re_1" });
    const stripe = deps(provider);
    await expect(rehearsePayment(stripe.d, simulation)).rejects.toThrow(
      /rehearsed with the simulated provider only, not "stripe"/,
    );
    expect(calls).toEqual([]);
    expect(await simulated.settlements.get("clm_1")).toBeUndefined();
    expect(await stripe.settlements.get("clm_1")).toBeUndefined();
  });
});

describe("the provider's later word (webhooks)", () => {
  it("settles a pending refund once; the same event twice and a late pending change nothing", async () => {
    const { provider } = scripted({ status: "PENDING", providerRef: "re_1" });
    const { d, publisher, settlements } = deps(provider);
    expect(await payRefund(d, executed())).toBe("PENDING");
    expect(publisher.published).toEqual([]);
    const settled = { execution_id: "exe_1", status: "SETTLED" as const, provider_ref: "re_1" };
    await recordProviderUpdate(d, "clm_1", settled);
    const after = await settlements.get("clm_1");
    await recordProviderUpdate(d, "clm_1", settled);
    await recordProviderUpdate(d, "clm_1", { execution_id: "exe_1", status: "PENDING", provider_ref: "re_1" });
    expect(await settlements.get("clm_1")).toEqual(after);
    expect(after?.status).toBe("SETTLED");
    expect(publisher.published.map((e) => e.detailType)).toEqual(["RefundSettled"]);
  });

  it("a refund Stripe reverses after success turns FAILED; a failed one never turns SETTLED", async () => {
    const { provider } = scripted({ status: "SETTLED", providerRef: "re_1" });
    const { d, settlements } = deps(provider);
    await payRefund(d, executed());
    await recordProviderUpdate(d, "clm_1", {
      execution_id: "exe_1",
      status: "FAILED",
      failure_reason: "lost_or_stolen_card",
    });
    await recordProviderUpdate(d, "clm_1", { execution_id: "exe_1", status: "SETTLED" });
    expect(await settlements.get("clm_1")).toMatchObject({ status: "FAILED", failure_reason: "lost_or_stolen_card" });
  });

  it("a webhook for a claim without a settlement changes nothing", async () => {
    const { provider } = scripted({ status: "SETTLED" });
    const { d, publisher } = deps(provider);
    expect(await recordProviderUpdate(d, "clm_x", { execution_id: "exe_x", status: "SETTLED" })).toBeUndefined();
    expect(publisher.published).toEqual([]);
  });
});
