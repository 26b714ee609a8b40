// The settlement transitions (idempotent, out-of-order safe) and the reconciliation of authorised refunds.
import { describe, expect, it } from "vitest";
import { renderServedReport } from "../../report/served.ts";
import {
  applyProviderUpdate,
  reconcile,
  reconcileSettlements,
  refundClaimView,
  refundRetryBlocked,
  refundReviewId,
} from "./settlement.ts";
import type { SettlementRecord } from "./settlement.ts";

const AT = "2026-11-27T10:00:00.000Z";
const record = (over: Partial<SettlementRecord> = {}): SettlementRecord => ({
  claim_id: "clm_1",
  dfid: "dfid_clm_1",
  order_id: "ord_1",
  amount_eur: 10,
  verdict_id: "vrd_1",
  provider: "stripe",
  execution_id: "exe_1",
  status: "PENDING",
  requested_at: AT,
  updated_at: AT,
  attempts: [],
  version: 1,
  ...over,
});

describe("applyProviderUpdate", () => {
  it("moves PENDING to SETTLED once; the same update again and a late PENDING change nothing", () => {
    const first = applyProviderUpdate(record(), { execution_id: "exe_1", status: "SETTLED", provider_ref: "re_1" }, AT);
    expect(first).toMatchObject({ changed: true, became: "SETTLED", next: { status: "SETTLED", version: 2 } });
    if (!first.changed) throw new Error("unreachable");
    expect(applyProviderUpdate(first.next, { execution_id: "exe_1", status: "SETTLED" }, AT)).toEqual({
      changed: false,
    });
    expect(applyProviderUpdate(first.next, { execution_id: "exe_1", status: "PENDING" }, AT)).toEqual({
      changed: false,
    });
  });

  it("a FAILED refund opens its review once, and never turns SETTLED", () => {
    const failed = applyProviderUpdate(record(), { execution_id: "exe_1", status: "FAILED", failure_reason: "x" }, AT);
    if (!failed.changed) throw new Error("expected a change");
    expect(failed.next.review).toMatchObject({ review_id: refundReviewId("exe_1"), origin: "REFUND_FAILED" });
    expect(applyProviderUpdate(failed.next, { execution_id: "exe_1", status: "SETTLED" }, AT)).toEqual({
      changed: false,
    });
  });

  it("ignores an update for an execution the claim never had", () => {
    expect(applyProviderUpdate(record(), { execution_id: "exe_other", status: "SETTLED" }, AT)).toEqual({
      changed: false,
    });
  });
});

describe("reconcile", () => {
  it("sums settled, pending and failed in cents and keeps the provider's word", () => {
    const r = reconcile([
      { kind: "executed", execution_id: "a", claim_id: "c1", amount_eur: 0.1, at: AT },
      { kind: "executed", execution_id: "b", claim_id: "c2", amount_eur: 0.2, at: AT },
      { kind: "executed", execution_id: "c", claim_id: "c3", amount_eur: 5, at: AT },
      { kind: "settled", execution_id: "a", at: AT },
      { kind: "settled", execution_id: "b", at: AT },
      { kind: "failed", execution_id: "c", failure_reason: "expired_card", at: AT },
      { kind: "settled", execution_id: "c", at: AT },
    ]);
    expect(r.totals).toEqual({ settled_eur: 0.3, pending_eur: 0, failed_eur: 5 });
    expect(r.refunds.find((x) => x.execution_id === "c")).toMatchObject({
      status: "FAILED",
      failure_reason: "expired_card",
    });
  });

  it("a retried execution is replaced by its retry; a closed one is not refunded and not listed", () => {
    const r = reconcile([
      { kind: "executed", execution_id: "a", claim_id: "c1", amount_eur: 5, at: AT },
      { kind: "failed", execution_id: "a", at: AT },
      { kind: "executed", execution_id: "a2", claim_id: "c1", amount_eur: 5, at: AT, retry_of: "a" },
      { kind: "executed", execution_id: "b", claim_id: "c2", amount_eur: 7, at: AT },
      { kind: "failed", execution_id: "b", at: AT },
      { kind: "closed", execution_id: "b", at: AT },
    ]);
    expect(r.refunds.map((x) => [x.execution_id, x.status])).toEqual([["a2", "PENDING"]]);
    expect(r.totals).toEqual({ settled_eur: 0, pending_eur: 5, failed_eur: 0 });
  });

  it("the served report shows the reconciliation of stored settlements", () => {
    const reconciliation = reconcileSettlements([
      record({ status: "SETTLED", provider_ref: "re_1" }),
      record({ claim_id: "clm_2", execution_id: "exe_2", status: "FAILED", failure_reason: "expired_card" }),
    ]);
    expect(reconciliation.totals).toEqual({ settled_eur: 10, pending_eur: 0, failed_eur: 10 });
    const page = renderServedReport([], { reconciliation });
    expect(page).toContain('id="reconciliation"');
    expect(page).toMatch(/data-status="FAILED"[^]*clm_2[^]*expired_card/);
    expect(renderServedReport([])).not.toContain('id="reconciliation"');
  });
});

describe("whether a RETRY of a failed refund can succeed", () => {
  const order = { order_id: "ord_1", payment_ref: "pi_1" };
  it.each([
    ["a balance too low (topped up meanwhile)", "balance_insufficient: You have insufficient funds", undefined],
    ["a provider error", "refund failed: 500", undefined],
    ["no reason given", undefined, undefined],
    ["an expired card (the customer may replace it)", "expired_or_canceled_card", undefined],
    [
      "a payment refunded already",
      "charge_already_refunded: Charge ch_1 has already been refunded.",
      /refunded or disputed/,
    ],
  ])("%s", (_what, reason, blocked) => {
    const answer = refundRetryBlocked("stripe", order, reason);
    if (blocked === undefined) expect(answer).toBeUndefined();
    else expect(answer).toMatch(blocked);
  });

  it("is blocked by an order without a payment to refund, whatever the failure", () => {
    expect(refundRetryBlocked("stripe", { order_id: "ord_2" }, "balance_insufficient")).toMatch(/no payment_ref/);
  });
});

describe("refundClaimView", () => {
  it("says whether a CLOSEd refund was paid out of band, so the page and the API tell a kept reservation from a released one", () => {
    const update = applyProviderUpdate(record(), { execution_id: "exe_1", status: "FAILED", failure_reason: "x" }, AT);
    if (!update.changed) throw new Error("expected a change");
    const failed = update.next;
    const closed = (paid: boolean): SettlementRecord => ({
      ...failed,
      review: { ...failed.review!, status: "CLOSED", decision: "CLOSE", reviewer: "ana", paid_out_of_band: paid },
    });
    expect(refundClaimView(closed(true)).review).toMatchObject({ status: "CLOSED", paid_out_of_band: true });
    expect(refundClaimView(closed(false)).review).toMatchObject({ status: "CLOSED", paid_out_of_band: false });
    expect(refundClaimView(failed).review).not.toHaveProperty("paid_out_of_band");
  });
});
