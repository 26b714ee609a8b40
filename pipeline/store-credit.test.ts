// Store credit through the payment port (docs/returns.md#outcomes): a RefundExecuted carrying `credit` is issued as
// credit — base plus bonus, once per execution — settles like a refund (the settlement, RefundSettled, the claim's
// view), and a provider that issues no credit refuses it instead of paying cash.
import { describe, expect, it } from "vitest";
import { createSimulatedPaymentProvider } from "../adapters/payments/simulated.ts";
import type { RefundExecutedDetail } from "../core/kernel/events.ts";
import { refundView } from "../core/kernel/settlement.ts";
import {
  createInMemoryAuditLog,
  createInMemoryContextStore,
  createInMemorySettlementRepository,
  createRecordingPublisher,
} from "./in-memory.ts";
import { payRefund } from "./payments.ts";
import type { PaymentDeps, PaymentProvider, ProviderRefundRequest } from "./payments.ts";
import { checkMoneyInvariants } from "./testing/money-invariants.ts";

const ORDERS = [
  { order_id: "ord_1", purchase_date: "2026-11-01", category: "home", amount: 80, payment_ref: "pi_1" },
  {
    order_id: "ord_jp",
    purchase_date: "2026-11-01",
    currency: "JPY",
    category: "home",
    amount: 8000,
    payment_ref: "pi_jp",
  },
];

const credited = (over: Partial<RefundExecutedDetail> = {}): RefundExecutedDetail => ({
  execution_id: "exe_1",
  claim_id: "clm_1",
  dfid: "dfid_clm_1",
  order_id: "ord_1",
  amount_eur: 80,
  amount: { value: "80.00", currency: "EUR" },
  verdict_id: "vrd_1",
  credit: { bonus: { value: "8.00", currency: "EUR" }, bonus_pct: 10 },
  ...over,
});

function deps(provider: PaymentProvider) {
  const publisher = createRecordingPublisher();
  const settlements = createInMemorySettlementRepository();
  let now = Date.parse("2026-11-27T10:00:00Z");
  const d: PaymentDeps = {
    settlements,
    provider,
    orders: createInMemoryContextStore(ORDERS),
    publisher,
    audit: createInMemoryAuditLog(),
    clock: { now: () => (now += 1000) },
  };
  return { d, publisher, settlements };
}

/** A provider recording what it was asked, by operation. */
function recording(withCredit = true) {
  const asked: { op: "refund" | "credit"; request: ProviderRefundRequest }[] = [];
  const provider: PaymentProvider = {
    name: "stripe",
    needsPaymentRef: true,
    refund: async (request) => {
      asked.push({ op: "refund", request });
      return { status: "SETTLED", providerRef: "re_1" };
    },
    ...(withCredit
      ? {
          issueCredit: async (request: ProviderRefundRequest) => {
            asked.push({ op: "credit", request });
            return { status: "SETTLED" as const, providerRef: "cbtxn_1" };
          },
        }
      : {}),
  };
  return { provider, asked };
}

describe("store credit through the payment port", () => {
  it("issues the base plus the bonus as credit, never as a refund, and once per execution", async () => {
    const { provider, asked } = recording();
    const { d } = deps(provider);
    expect(await payRefund(d, credited())).toBe("SETTLED");
    expect(await payRefund(d, credited())).toBe("already recorded");
    expect(asked).toEqual([
      { op: "credit", request: expect.objectContaining({ executionId: "exe_1", amountMinor: 8800, currency: "EUR" }) },
    ]);
  });

  it("counts a currency without decimals in its own units (8000 JPY + 10%: 8800 yen)", async () => {
    const { provider, asked } = recording();
    const { d } = deps(provider);
    const detail = credited({
      order_id: "ord_jp",
      amount_eur: 8000,
      amount: { value: "8000", currency: "JPY" },
      credit: { bonus: { value: "800", currency: "JPY" }, bonus_pct: 10 },
    });
    await payRefund(d, detail);
    expect(asked.map((a) => [a.op, a.request.amountMinor, a.request.currency])).toEqual([["credit", 8800, "JPY"]]);
  });

  it("settles like a refund: the settlement and RefundSettled name the credit, the view says when it settled", async () => {
    const { provider } = recording();
    const { d, publisher, settlements } = deps(provider);
    await payRefund(d, credited());
    const record = await settlements.get("clm_1");
    expect(record).toMatchObject({ status: "SETTLED", outcome: "STORE_CREDIT", bonus_minor: 800, amount_eur: 80 });
    expect(publisher.published.map((e) => e.detailType)).toEqual(["RefundSettled"]);
    expect(publisher.published[0]!.detail).toMatchObject({
      provider_ref: "cbtxn_1",
      credit: { bonus: { value: "8.00", currency: "EUR" }, bonus_pct: 10 },
    });
    expect(refundView(record!)).toMatchObject({
      status: "SETTLED",
      outcome: "STORE_CREDIT",
      bonus: { value: "8.00", currency: "EUR" },
      settled_at: record!.updated_at,
    });
  });

  it("a provider that issues no credit refuses it (FAILED, its review opens) instead of refunding cash", async () => {
    const { provider, asked } = recording(false);
    const { d, settlements } = deps(provider);
    expect(await payRefund(d, credited())).toBe("FAILED");
    expect(asked).toEqual([]);
    expect((await settlements.get("clm_1"))?.failure_reason).toBe(
      "payment provider stripe does not issue store credit",
    );
  });

  it("the simulated provider credits at once under sim_cr_<execution>", async () => {
    const { d, settlements } = deps(createSimulatedPaymentProvider());
    expect(await payRefund(d, credited())).toBe("SETTLED");
    expect((await settlements.get("clm_1"))?.provider_ref).toBe("sim_cr_exe_1");
  });

  it("a plain refund still refunds, and its settlement names no credit", async () => {
    const { provider, asked } = recording();
    const { d, publisher, settlements } = deps(provider);
    const { credit: _none, ...refund } = credited();
    await payRefund(d, refund);
    expect(asked.map((a) => [a.op, a.request.amountMinor])).toEqual([["refund", 8000]]);
    expect(await settlements.get("clm_1")).not.toHaveProperty("outcome");
    expect(publisher.published[0]!.detail).not.toHaveProperty("credit");
  });
});

describe("store credit's money invariants", () => {
  const verdict = {
    detailType: "ClaimVerdict",
    detail: { verdict_id: "vrd_1", claim_id: "clm_1", verdict: "ACCEPT", order_id: "ord_1", amount_eur: 80 },
  };
  const facts = { orderAmountEur: () => 80, limitEur: 500 };
  const run = (...events: { detailType: string; detail: Record<string, unknown> }[]) =>
    checkMoneyInvariants([verdict, ...events], facts).violations;

  it("hold for a credit whose bonus is its percentage of the base", () => {
    expect(run({ detailType: "RefundExecuted", detail: credited() })).toEqual([]);
  });

  it("flag a bonus that is not the policy's percentage of the base", () => {
    const detail = credited({ credit: { bonus: { value: "9.00", currency: "EUR" }, bonus_pct: 10 } });
    expect(run({ detailType: "RefundExecuted", detail })).toEqual([
      expect.stringMatching(/store credit exe_1 of claim clm_1: a bonus of 9.00 is not 10% of the base \(800/),
    ]);
  });

  it("flag a credit settled as a refund, and a return that reserved a refund but paid credit", () => {
    const { credit: _none, ...refund } = credited();
    expect(
      run(
        { detailType: "RefundExecuted", detail: credited() },
        { detailType: "RefundSettled", detail: { ...refund, provider: "stripe" } },
      ),
    ).toEqual([expect.stringMatching(/RefundSettled exe_1 of claim clm_1 settles a refund, but store credit/)]);
    expect(
      run(
        { detailType: "ReturnRequested", detail: { ...refund, pay_on: "delivered" } },
        { detailType: "RefundExecuted", detail: credited() },
      ),
    ).toContainEqual(expect.stringMatching(/claim clm_1: its return reserved a refund but store credit was paid/));
  });

  it("count credit against the order like cash: a credit beyond the order is flagged", () => {
    const detail = credited({
      amount_eur: 90,
      amount: { value: "90.00", currency: "EUR" },
      credit: { bonus: { value: "9.00", currency: "EUR" }, bonus_pct: 10 },
    });
    expect(run({ detailType: "RefundExecuted", detail })).toContainEqual(expect.stringMatching(/more than its 8000/));
  });
});
