// Deciding a failed refund's review (origin REFUND_FAILED, docs/payments.md) through `POST /claims/{id}/review`: the
// shell of pipeline/decide/refund-review.ts (load the claim's settlement -> decide -> record the decision on the
// settlement with a conditional write -> perform its effects), and the sweep's repair of a decision a crash cut short.
import { settlementCredit } from "../core/kernel/settlement.ts";
import type { SettlementRecord } from "../core/kernel/settlement.ts";
import { deskFields } from "../core/kernel/review.ts";
import type { ReviewDesk, ReviewerIdentity } from "../core/kernel/review.ts";
import type { EffectPorts, PipelineDeps } from "./deps.ts";
import { decidePerformed, decideRefundReview, startPerformed, startRefundReview } from "./decide/refund-review.ts";
import type { RefundReviewResult } from "./decide/refund-review.ts";
import { runDecider } from "./perform.ts";

export type { RefundReviewResult } from "./decide/refund-review.ts";

type RefundReviewDeps = Pick<PipelineDeps, "claims" | "settlements" | "clock"> & EffectPorts;

/**
 * The answer to a review request when it concerns the claim's failed refund: RETRY / CLOSE decided here, any other
 * decision refused (409 DECISION_NOT_ALLOWED) while the refund's review is pending. `undefined`: not this
 * review's request — the claim's own review decides it.
 */
export async function refundReviewRequest(
  claimId: string,
  body: unknown,
  deps: RefundReviewDeps,
  by?: ReviewerIdentity,
): Promise<RefundReviewResult | undefined> {
  const first = startRefundReview(claimId, body, by, { settlements: deps.settlements !== undefined });
  return runDecider(first, decideRefundReview, deps);
}

/**
 * Completes refund-review decisions whose effects a crash interrupted and nobody repeated (found by the chaos
 * flows: a CLOSE that released the reservation but never announced ReviewDecided, a RETRY whose RefundExecuted
 * was never published): every decided review not marked performed is performed again (each effect is
 * idempotent). The sweep calls this; returns how many it completed.
 */
export async function repairRefundReviews(deps: RefundReviewDeps): Promise<number> {
  if (!deps.settlements) return 0;
  let repaired = 0;
  for (const s of await deps.settlements.listUnperformedReviews()) {
    await runDecider(startPerformed(s), decidePerformed, deps);
    repaired++;
  }
  return repaired;
}

/**
 * A failed refund's pending review as `GET /reviews` lists it: the claim, its order and the amount, the failed
 * execution, the provider, its reference for the refund (when it gave one) and its reason.
 */
export function refundReviewListItem(
  s: SettlementRecord,
  desk?: ReviewDesk,
  retryBlocked?: string,
): Record<string, unknown> {
  const review = s.review!;
  return {
    review_id: review.review_id,
    claim_id: s.claim_id,
    dfid: s.dfid,
    origin: review.origin,
    status: review.status,
    reason_code: review.reason_code,
    reason: review.reason,
    order_id: s.order_id,
    amount_eur: s.amount_eur,
    requested_at: review.requested_at,
    ...deskFields(review, desk),
    execution_id: review.execution_id,
    // Store credit that failed: the outcome and its bonus (docs/returns.md#outcomes); absent for a cash refund.
    ...(s.outcome === "STORE_CREDIT" ? { outcome: s.outcome, ...settlementCredit(s) } : {}),
    provider: s.provider,
    ...(s.provider_ref !== undefined ? { provider_ref: s.provider_ref } : {}),
    ...(s.failure_reason !== undefined ? { failure_reason: s.failure_reason } : {}),
    // Whether a RETRY can succeed with the order as the shop has it now (the page offers Retry only then).
    retry: retryBlocked === undefined ? { possible: true } : { possible: false, reason: retryBlocked },
    approvals: [],
  };
}
