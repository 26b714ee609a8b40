// A reviewer's decision, without ports: an approval checked against the order and the ledger as they stand,
// the review as recorded once decided, what it announces (first) and what is repeated once it is recorded.
import { type LedgerEntry, type ReserveResult } from "../../core/kernel/index.ts";
import { describe, expect, it } from "vitest";
import type { OutboundCrewEvent } from "../../core/crew/index.ts";
import { approvalExecutionIdFor, resubmittedClaimIdFor } from "../../core/kernel/review.ts";
import type { ReviewRecord } from "../../core/kernel/review.ts";
import { crewEffects } from "./crew-completion.ts";
import { audits, claimRecord, ESCALATED, NOW, order, policy, shape } from "./decide.test-kit.ts";
import { decideProposal } from "./kernel-decision.ts";
import { needsReview } from "./needs-review.ts";
import {
  approvalChecks,
  approvalReserved,
  decidedReview,
  intentFor,
  recordedReviewEffects,
  resubmission,
  reviewAnswer,
  reviewDecidedEffects,
} from "./review-decision.ts";

const record = claimRecord(ESCALATED, { simulation_id: "sim_1", label: "two" });
const escalated: ReviewRecord = (() => {
  const output = { action: "REFUND", ...ESCALATED, confidence: 0.9 };
  const sent = crewEffects(
    [{ type: "crew.completed", crewId: "clm_1", output } as OutboundCrewEvent],
    record,
    NOW,
    policy,
  ).find((e) => e.kind === "proposal");
  if (sent?.kind !== "proposal") throw new Error("no proposal");
  const at = { order: order("ord_002"), ledgerEntry: undefined, decidedAt: new Date(NOW).toISOString(), now: NOW };
  const review = decideProposal(record, sent.message.proposal, at, policy).review;
  if (!review) throw new Error("not escalated");
  return review;
})();
const needing = (() => {
  const open = needsReview(record, NOW, "CREW_FAILED", "gave up").find((e) => e.kind === "review_open");
  if (open?.kind !== "review_open") throw new Error("no review");
  return open.review;
})();
const CLAIMED = "2026-06-01T12:05:00.000Z";
const LATER = NOW + 3_600_000;

describe("approvalChecks", () => {
  const check = (amountEur: number, over: { ledgerEntry?: LedgerEntry; orderId?: string | null } = {}) =>
    approvalChecks(
      {
        record,
        review: over.orderId === null ? { ...escalated, proposal: undefined } : escalated,
        amountEur,
        order: over.orderId === undefined || over.orderId === null ? order("ord_002") : undefined,
        ledgerEntry: over.ledgerEntry,
      },
      policy,
    );

  it("passes the escalated amount with the escalation checks lifted: the refund to reserve", () => {
    expect(check(1200)).toEqual({ ok: true, order: order("ord_002"), cents: 120000, orderCents: 120000 });
    expect(check(100)).toMatchObject({ ok: true, cents: 10000 });
  });

  it.each([
    ["a review without a proposal", 1200, { orderId: null }, "DECISION_NOT_ALLOWED"],
    ["an order no longer in the store", 1200, { orderId: "gone" }, "ORDER_NOT_FOUND"],
    [
      "a corrupt ledger entry",
      1200,
      { ledgerEntry: { order_id: "ord_002", refunded_cents: 5, claims: {} } },
      "ORDER_DATA_INVALID",
    ],
  ])("refuses %s", (_name, amount, over, code) => {
    expect(check(amount, over as never)).toMatchObject({ ok: false, code });
  });

  it("refuses an amount the order's balance no longer has, with the kernel's reason", () => {
    const spent = {
      order_id: "ord_002",
      refunded_cents: 120000,
      claims: { clm_other: 120000 },
      approved: ["clm_other"],
    };
    const refused = check(1200, { ledgerEntry: spent });
    expect(refused.ok).toBe(false);
    expect(refused).toMatchObject({ code: expect.stringMatching(/^[A-Z_]+$/), message: expect.any(String) });
  });
});

describe("approvalReserved", () => {
  const entry = (claims: Record<string, number>) => ({ order_id: "ord_002", refunded_cents: 1, claims });
  it.each<[string, ReserveResult, object]>([
    ["reserved", { ok: true, entry: entry({ clm_1: 120000 }) }, { ok: true }],
    [
      "this claim's own reservation (a repeat)",
      { ok: false, code: "ALREADY_REFUNDED_FOR_CLAIM", message: "m", entry: entry({ clm_1: 120000 }) },
      { ok: true },
    ],
    [
      "another amount held by the claim",
      { ok: false, code: "ALREADY_REFUNDED_FOR_CLAIM", message: "m", entry: entry({ clm_1: 5 }) },
      { ok: false, code: "ALREADY_REFUNDED_FOR_CLAIM", message: "m" },
    ],
    [
      "the order's balance gone",
      { ok: false, code: "EXCEEDS_ORDER_AMOUNT", message: "m", entry: entry({}) },
      { ok: false, code: "EXCEEDS_REFUNDABLE_BALANCE", message: "m" },
    ],
  ])("%s", (_name, result, expected) => {
    expect(approvalReserved(result, "clm_1", 120000)).toEqual(expected);
  });
});

describe("decidedReview", () => {
  const claimed = (intent: object, decidedAt: string | null = CLAIMED): ReviewRecord => ({
    ...escalated,
    version: 2,
    intent: { ...(intent as { decision: "APPROVE" }), ...(decidedAt ? { decided_at: decidedAt } : {}) },
  });

  it.each([
    [
      "an approval",
      claimed({ decision: "APPROVE", amount_eur: 1000, reviewer: "ann" }),
      undefined,
      {
        status: "APPROVED",
        approved_amount_eur: 1000,
        execution_id: approvalExecutionIdFor(escalated.review_id),
        reviewer: "ann",
        decided_at: CLAIMED,
      },
    ],
    [
      "a denial with a note",
      claimed({ decision: "DENY", note: "no" }),
      undefined,
      { status: "DENIED", note: "no", decided_at: CLAIMED },
    ],
    [
      "a resubmission",
      claimed({ decision: "RESUBMIT" }),
      "clm_new",
      { status: "RESUBMITTED", resubmitted_claim_id: "clm_new", decided_at: CLAIMED },
    ],
    [
      "an intent claimed before it carried its instant, decided now",
      claimed({ decision: "DENY" }, null),
      undefined,
      { status: "DENIED", decided_at: new Date(LATER).toISOString() },
    ],
  ])("records %s at the instant it was claimed, the intent gone", (_name, review, resubmitted, expected) => {
    const next = decidedReview(review, LATER, resubmitted);
    expect(next).toMatchObject({ ...expected, decision: review.intent?.decision, version: 3 });
    expect(next.intent).toBeUndefined();
  });

  it("claims the decision at the instant given", () => {
    expect(intentFor({ decision: "DENY", note: "n" }, NOW)).toEqual({
      decision: "DENY",
      note: "n",
      decided_at: new Date(NOW).toISOString(),
    });
  });
});

describe("what a decided review announces", () => {
  const approved = decidedReview(
    { ...escalated, intent: { decision: "APPROVE", amount_eur: 1200, decided_at: CLAIMED } },
    LATER,
  );
  const denied = decidedReview({ ...needing, intent: { decision: "DENY", decided_at: CLAIMED } }, LATER);

  it("an approval: the refund and the decision audited, the order's review mark cleared, published, the claim executed", () => {
    const effects = reviewDecidedEffects(record, approved);
    expect(shape(effects)).toEqual([
      "audit CLAIM_REFUND_EXECUTED",
      "audit REVIEW_DECIDED",
      "review_closed",
      "publish RefundExecuted,ReviewDecided",
      "claim_update",
    ]);
    expect(audits(effects).map((e) => [e.state, e.created_at])).toEqual([
      ["DECIDED", CLAIMED],
      ["DECIDED", CLAIMED],
    ]);
    expect(audits(effects)[0]?.details).toMatchObject({ amount_cents: 120000, verdict_id: escalated.verdict_id });
    expect(effects[2]).toEqual({ kind: "review_closed", orderId: "ord_002", claimId: "clm_1", scope: "sim_1" });
    expect(effects[4]).toMatchObject({ patch: { executed: true, updated_at: CLAIMED }, onlyFrom: ["DECIDED"] });
    expect(shape(recordedReviewEffects(record, approved))).toEqual(["review_closed", "claim_update"]);
  });

  it("a denial of a claim that needs review: the decision in the claim's final state, nothing executed", () => {
    const effects = reviewDecidedEffects(record, denied);
    expect(shape(effects)).toEqual(["audit REVIEW_DECIDED", "review_closed", "publish ReviewDecided"]);
    expect(audits(effects)[0]?.state).toBe("NEEDS_REVIEW");
    expect(shape(recordedReviewEffects(record, denied))).toEqual(["review_closed"]);
    const noOrder = { ...denied, order_id: undefined };
    expect(shape(reviewDecidedEffects(record, noOrder))).toEqual(["audit REVIEW_DECIDED", "publish ReviewDecided"]);
    expect(recordedReviewEffects(record, noOrder)).toEqual([]);
  });

  it("is the same when repeated, and answers whether the claim's refund was made", () => {
    expect(reviewDecidedEffects(record, approved)).toEqual(reviewDecidedEffects(record, approved));
    expect(reviewAnswer(record, approved)).toMatchObject({ executed: true, execution_id: approved.execution_id });
    expect(reviewAnswer(record, denied).executed).toBe(false);
    expect(reviewAnswer({ ...record, executed: true }, denied).executed).toBe(true);
  });
});

describe("resubmission", () => {
  it("submits the corrected claim under ids of the review, in the claim's simulation", () => {
    const corrected = { ...ESCALATED, amount_eur: 20 };
    const review = { ...needing, intent: { decision: "RESUBMIT" as const, claim: corrected } };
    expect(resubmission(record, review)).toEqual({
      body: { claim: corrected, simulation_id: "sim_1", label: "two (resubmitted)" },
      opts: {
        claimId: resubmittedClaimIdFor(needing.review_id),
        idempotencyKey: `resubmit:${needing.review_id}`,
        parentClaimId: "clm_1",
      },
    });
  });
});
