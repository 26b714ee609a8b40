// Deciding a failed refund's review (origin REFUND_FAILED, docs/payments.md) through `POST /claims/{id}/review`:
// load the claim's settlement -> decide (decide/refund-failed.ts) -> record the decision on the settlement with a
// conditional write -> perform its effects. Repeating the same decision performs them again (each is idempotent),
// so a crash after the record is repaired by the same request — or, if nobody repeats it, by the sweep
// (repairRefundReviews: a decision whose effects were not all performed is performed again); a different decision
// is refused with 409.
import { refundClaimView } from "../core/kernel/settlement.ts";
import type { SettlementRecord } from "../core/kernel/settlement.ts";
import { deskFields, takenByRefusal } from "../core/kernel/review.ts";
import type { ReviewDesk, ReviewerIdentity } from "../core/kernel/review.ts";
import { VersionConflictError } from "../core/errors.ts";
import type { EffectPorts, PipelineDeps } from "./deps.ts";
import {
  asksRefundDecision,
  checkRefundDecision,
  decidedSettlement,
  otherDecisionRefused,
  RefundReviewRequestSchema,
  refundReviewEffects,
} from "./decide/refund-failed.ts";
import type { ReviewAnswer, ReviewRequestOutcome } from "./decide/review-decision.ts";
import { announce, settlementDfid } from "./payments.ts";
import { performEffects } from "./perform.ts";
import { invalidReviewDecision, reviewerMismatch } from "./decide/review-decision.ts";

/** The outcome of a RETRY / CLOSE, as `POST /claims/{id}/review` answers it. */
export type RefundReviewResult =
  | ReviewRequestOutcome
  | { ok: false; status: 400; code: "NOTE_REQUIRED"; message: string }
  | { ok: false; status: 409; code: "DECISION_NOT_ALLOWED" | "REVIEW_ALREADY_DECIDED" | "TAKEN_BY"; message: string };

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
  if (!asksRefundDecision(body)) {
    const decision = typeof body === "object" && body !== null ? (body as { decision?: unknown }).decision : undefined;
    if (typeof decision !== "string" || !deps.settlements) return undefined;
    const settlement = await deps.settlements.get(claimId);
    return settlement?.review?.status === "PENDING"
      ? { ok: false, ...otherDecisionRefused(decision, settlement) }
      : undefined;
  }
  const parsed = RefundReviewRequestSchema.safeParse(body);
  if (!parsed.success) return invalidReviewDecision(parsed.error);
  const mismatch = reviewerMismatch(parsed.data.reviewer, by);
  if (mismatch) return mismatch;
  const reviewer = by?.id ?? parsed.data.reviewer ?? "reviewer";
  const record = await deps.claims.getClaim(claimId);
  if (!record) return { ok: false, status: 404, code: "NOT_FOUND", message: `claim ${claimId} not found` };
  for (let attempt = 0; attempt < 3; attempt++) {
    const settlement = await deps.settlements?.get(claimId);
    const check = checkRefundDecision(settlement, parsed.data, reviewer);
    if ("refused" in check) return { ok: false, ...check.refused };
    // Taken at the desk by someone else: their decision to take.
    const taken =
      "take" in check
        ? takenByRefusal(settlement!.review!, reviewer, deps.clock.now(), settlement!.review!.review_id)
        : undefined;
    if (taken) return { ok: false, ...taken };
    let decided = settlement!;
    // A failure not yet announced (its recorder crashed; the provider's webhook will come again, but for an execution
    // a RETRY has replaced) is announced first: RefundFailed before the decision on it (found by npm run chaos).
    if ("take" in check && decided.status === "FAILED" && decided.announced !== "FAILED") {
      await announce({ ...deps, settlements: deps.settlements! }, decided);
      continue;
    }
    if ("take" in check) {
      const at = new Date(deps.clock.now()).toISOString();
      decided = decidedSettlement(
        decided,
        parsed.data.decision,
        reviewer,
        parsed.data.note,
        at,
        parsed.data.paid_out_of_band,
      );
      try {
        await deps.settlements!.update(decided);
      } catch (error) {
        if (error instanceof VersionConflictError) continue; // the provider or another reviewer got there first
        throw error;
      }
    }
    await performDecided(decided, deps);
    return { ok: true, body: refundReviewAnswer(decided) };
  }
  return {
    ok: false,
    status: 409,
    code: "REVIEW_ALREADY_DECIDED",
    message: `the refund review of claim ${claimId} is changing concurrently; try again`,
  };
}

/** Performs a decided refund review's effects, then marks them performed (a lost race leaves it to the sweep). */
async function performDecided(decided: SettlementRecord, deps: RefundReviewDeps): Promise<void> {
  await performEffects(refundReviewEffects(decided, settlementDfid(decided.claim_id)), deps);
  if (decided.review?.performed) return;
  const fresh = await deps.settlements!.get(decided.claim_id);
  if (!fresh?.review || fresh.review.review_id !== decided.review!.review_id || fresh.review.performed) return;
  try {
    await deps.settlements!.update({
      ...fresh,
      review: { ...fresh.review, performed: true },
      version: fresh.version + 1,
    });
  } catch (error) {
    if (!(error instanceof VersionConflictError)) throw error;
  }
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
    await performDecided(s, deps);
    repaired++;
  }
  return repaired;
}

/** The answer for a decided refund review: the review as the claim shows it, and the execution that pays (RETRY). */
function refundReviewAnswer(settlement: SettlementRecord): ReviewAnswer {
  const view = refundClaimView(settlement);
  const review = settlement.review!;
  return {
    claim_id: settlement.claim_id,
    review: view.review as Record<string, unknown>,
    executed: review.decision === "RETRY",
    execution_id: review.retry_execution_id ?? review.execution_id,
  };
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
    provider: s.provider,
    ...(s.provider_ref !== undefined ? { provider_ref: s.provider_ref } : {}),
    ...(s.failure_reason !== undefined ? { failure_reason: s.failure_reason } : {}),
    // Whether a RETRY can succeed with the order as the shop has it now (the page offers Retry only then).
    retry: retryBlocked === undefined ? { possible: true } : { possible: false, reason: retryBlocked },
    approvals: [],
  };
}
