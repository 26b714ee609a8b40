// The decisions of a failed refund's review, apart from I/O: which RETRY / CLOSE may be taken, what the settlement
// becomes, and what each performs (CLOSE releases the reservation and binds nothing; RETRY pays again once).
import { describe, expect, it } from "vitest";
import { refundReviewId, retryExecutionId } from "../../core/kernel/settlement.ts";
import type { SettlementRecord } from "../../core/kernel/settlement.ts";
import {
  checkRefundDecision,
  decidedSettlement,
  otherDecisionRefused,
  RefundReviewRequestSchema,
  refundReviewEffects,
} from "./refund-failed.ts";
import { failedSettlement } from "./decide.test-kit.ts";

const AT = "2026-11-27T10:00:00.000Z";
const failed: SettlementRecord = failedSettlement(AT, { order_id: "ord_1", provider_ref: "re_1" });
const closed = decidedSettlement(failed, "CLOSE", "ana", "customer paid by bank transfer", AT, false);
const paidOutOfBand = decidedSettlement(failed, "CLOSE", "ana", "customer paid by bank transfer", AT, true);
const retried = decidedSettlement(failed, "RETRY", "ana", undefined, AT);
const settled: SettlementRecord = { ...failed, status: "SETTLED", review: undefined };

describe("which RETRY / CLOSE may be taken", () => {
  const cases: [
    string,
    SettlementRecord | undefined,
    { decision: "RETRY" | "CLOSE"; note?: string; review_id?: string; paid_out_of_band?: boolean },
    string,
    unknown,
  ][] = [
    ["RETRY on a pending refund review", failed, { decision: "RETRY" }, "ana", { take: true }],
    ["CLOSE with a note", failed, { decision: "CLOSE", note: "paid by hand" }, "ana", { take: true }],
    ["CLOSE without a note", failed, { decision: "CLOSE" }, "ana", "NOTE_REQUIRED"],
    ["CLOSE with a blank note", failed, { decision: "CLOSE", note: "  " }, "ana", "NOTE_REQUIRED"],
    ["no settlement", undefined, { decision: "RETRY" }, "ana", "DECISION_NOT_ALLOWED"],
    ["a settled refund (no review)", settled, { decision: "CLOSE", note: "x" }, "ana", "DECISION_NOT_ALLOWED"],
    ["the same RETRY again", retried, { decision: "RETRY" }, "ana", { repeat: true }],
    [
      "the same CLOSE again",
      closed,
      { decision: "CLOSE", paid_out_of_band: false, note: "customer paid by bank transfer" },
      "ana",
      { repeat: true },
    ],
    ["CLOSE after a RETRY", retried, { decision: "CLOSE", note: "x" }, "ana", "REVIEW_ALREADY_DECIDED"],
    ["RETRY after a CLOSE", closed, { decision: "RETRY" }, "ana", "REVIEW_ALREADY_DECIDED"],
    ["the same RETRY by another reviewer", retried, { decision: "RETRY" }, "bo", "REVIEW_ALREADY_DECIDED"],
    [
      "RETRY naming the pending review",
      failed,
      { decision: "RETRY", review_id: refundReviewId("exe_1") },
      "ana",
      { take: true },
    ],
    [
      "a repeated CLOSE naming the review it was meant for, after a RETRY failed again and opened another",
      {
        ...failed,
        execution_id: "exe_2",
        review: { ...failed.review!, review_id: refundReviewId("exe_2"), execution_id: "exe_2" },
      },
      { decision: "CLOSE", note: "x", review_id: refundReviewId("exe_1") },
      "ana",
      "REVIEW_ALREADY_DECIDED",
    ],
    [
      "the same RETRY again naming its review",
      retried,
      { decision: "RETRY", review_id: refundReviewId("exe_1") },
      "ana",
      { repeat: true },
    ],
  ];
  it.each(cases)("%s", (_name, settlement, request, reviewer, expected) => {
    const check = checkRefundDecision(settlement, request, reviewer);
    if (typeof expected === "string") expect(check).toMatchObject({ refused: { code: expected } });
    else expect(check).toEqual(expected);
  });

  it("the request takes RETRY / CLOSE only, with a note and a reviewer and nothing else", () => {
    expect(RefundReviewRequestSchema.safeParse({ decision: "RETRY" }).success).toBe(true);
    expect(RefundReviewRequestSchema.safeParse({ decision: "DENY" }).success).toBe(false);
    expect(RefundReviewRequestSchema.safeParse({ decision: "RETRY", amount_eur: 5 }).success).toBe(false);
    // A CLOSE says whether the refund was paid out of band; a RETRY does not.
    expect(RefundReviewRequestSchema.safeParse({ decision: "CLOSE", note: "x" }).success).toBe(false);
    expect(RefundReviewRequestSchema.safeParse({ decision: "CLOSE", note: "x", paid_out_of_band: true }).success).toBe(
      true,
    );
    expect(RefundReviewRequestSchema.safeParse({ decision: "RETRY", paid_out_of_band: false }).success).toBe(false);
  });

  it("any other decision is refused while the refund review is pending", () => {
    expect(otherDecisionRefused("DENY", failed)).toMatchObject({ status: 409, code: "DECISION_NOT_ALLOWED" });
  });
});

describe("the settlement once decided", () => {
  it("CLOSE leaves the refund FAILED and records who closed it and why", () => {
    expect(closed).toMatchObject({
      execution_id: "exe_1",
      status: "FAILED",
      review: { status: "CLOSED", decision: "CLOSE", reviewer: "ana", note: "customer paid by bank transfer" },
      version: 4,
    });
  });

  it("RETRY moves to a new PENDING execution derived from the failed one, keeping the failed attempt", () => {
    expect(retried).toMatchObject({
      execution_id: retryExecutionId("exe_1"),
      status: "PENDING",
      attempts: [{ execution_id: "exe_1", status: "FAILED", provider_ref: "re_1", failure_reason: "expired_card" }],
      review: { status: "RETRIED", retry_execution_id: retryExecutionId("exe_1"), execution_id: "exe_1" },
    });
    expect(retried).not.toHaveProperty("provider_ref");
    expect(retried).not.toHaveProperty("failure_reason");
    expect(retried).not.toHaveProperty("announced");
  });
});

describe("what a decided refund review performs", () => {
  it("CLOSE unpaid releases the claim's reservation, binds the order, audits and publishes ReviewDecided", () => {
    const effects = refundReviewEffects(closed, "dfid_pay_clm_1");
    expect(effects.map((e) => e.kind)).toEqual(["refund_released", "review_closed", "audit", "publish"]);
    expect(effects[0]).toEqual({ kind: "refund_released", orderId: "ord_1", claimId: "clm_1" });
    expect(effects[1]).toEqual({
      kind: "review_closed",
      orderId: "ord_1",
      claimId: "clm_1",
      decision: { claim_id: "clm_1", decision: "CLOSE", paid_out_of_band: false },
    });
    const publish = effects.find((e) => e.kind === "publish");
    expect(publish?.kind === "publish" && publish.entries.map((e) => e.detailType)).toEqual(["ReviewDecided"]);
    expect(publish?.kind === "publish" && publish.entries[0]!.detail).toMatchObject({
      decision: "CLOSE",
      execution_id: "exe_1",
      reviewer: "ana",
    });
  });

  it("CLOSE paid out of band keeps the reservation and binds the order", () => {
    const effects = refundReviewEffects(paidOutOfBand, "dfid_pay_clm_1");
    expect(effects.map((e) => e.kind)).toEqual(["review_closed", "audit", "publish"]);
    expect(effects[0]).toMatchObject({ decision: { decision: "CLOSE", paid_out_of_band: true } });
    const publish = effects.find((e) => e.kind === "publish");
    expect(publish?.kind === "publish" && publish.entries[0]!.detail).toMatchObject({ paid_out_of_band: true });
  });

  it("RETRY publishes ReviewDecided and one RefundExecuted for the new execution naming the failed one", () => {
    const effects = refundReviewEffects(retried, "dfid_pay_clm_1");
    expect(effects.some((e) => e.kind === "refund_released" || e.kind === "review_closed")).toBe(false);
    const publish = effects.find((e) => e.kind === "publish");
    if (publish?.kind !== "publish") throw new Error("no publish");
    expect(publish.entries.map((e) => [e.detailType, e.detail])).toEqual([
      ["ReviewDecided", expect.objectContaining({ decision: "RETRY", retry_of: "exe_1" })],
      [
        "RefundExecuted",
        {
          execution_id: retryExecutionId("exe_1"),
          claim_id: "clm_1",
          dfid: "dfid_clm_1",
          order_id: "ord_1",
          amount_eur: 50,
          amount: { value: "50.00", currency: "EUR" },
          verdict_id: "vrd_1",
          retry_of: "exe_1",
        },
      ],
    ]);
    const audits = effects.flatMap((e) => (e.kind === "audit" ? [e.event.event_type] : []));
    expect(audits).toEqual(["REVIEW_DECIDED", "CLAIM_REFUND_EXECUTED"]);
  });

  describe("of a batch run's rehearsed refund (its settlement carries simulation_id)", () => {
    const scoped = (s: SettlementRecord): SettlementRecord => ({ ...s, simulation_id: "sim_1" });

    it("a RETRY's RefundExecuted is a simulation's again (the payments rule never delivers it to a provider)", () => {
      const publish = refundReviewEffects(scoped(retried), "dfid_pay_clm_1").find((e) => e.kind === "publish");
      if (publish?.kind !== "publish") throw new Error("no publish");
      expect(
        publish.entries.map((e) => [e.detailType, (e.detail as { simulation_id?: string }).simulation_id]),
      ).toEqual([
        ["ReviewDecided", "sim_1"],
        ["RefundExecuted", "sim_1"],
      ]);
    });

    it("a CLOSE releases and binds on the run's own ledger (its scope), never the live order's, and is audited as the run's", () => {
      const effects = refundReviewEffects(scoped(closed), "dfid_pay_clm_1");
      expect(effects.slice(0, 2)).toEqual([
        { kind: "refund_released", orderId: "ord_1", claimId: "clm_1", scope: "sim_1" },
        expect.objectContaining({ kind: "review_closed", orderId: "ord_1", claimId: "clm_1", scope: "sim_1" }),
      ]);
      const audit = effects.find((e) => e.kind === "audit");
      expect(audit?.kind === "audit" && audit.event.details.simulation_id).toBe("sim_1");
    });
  });
});
