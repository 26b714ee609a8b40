// The refund review's process (origin REFUND_FAILED, docs/payments.md), decided: a review request about the claim's
// failed refund as one `decideRefundReview(state, observation) → { effects, next }` its shell
// (pipeline/refund-review.ts) loops over — the claim's settlement loaded, the decision checked (decide/refund-failed.ts),
// a failure not yet announced announced first, the decision recorded on the settlement with a conditional write (a
// version conflict is an answer: the settlement is read again, at most three times), then its effects performed and
// marked performed. Repeating the same decision performs them again (each is idempotent), so a crash after the record
// is repaired by the same request — or, if nobody repeats it, by the sweep (`startPerformed`); a different decision
// is refused with 409.
import { refundClaimView } from "../../core/kernel/settlement.ts";
import type { SettlementRecord } from "../../core/kernel/settlement.ts";
import { takenByRefusal } from "../../core/kernel/review.ts";
import type { ReviewerIdentity } from "../../core/kernel/review.ts";
import {
  asksRefundDecision,
  checkRefundDecision,
  decidedSettlement,
  otherDecisionRefused,
  RefundReviewRequestSchema,
  refundReviewEffects,
  settlementDfid,
} from "./refund-failed.ts";
import type { RefundReviewRequest } from "./refund-failed.ts";
import { invalidReviewDecision, reviewerMismatch } from "./review-decision.ts";
import type { ReviewAnswer, ReviewRequestOutcome } from "./review-decision.ts";
import type { Observation } from "./requests.ts";
import { ask, done, observedAs, within } from "./step.ts";
import type { Next, Step } from "./step.ts";

/** The outcome of a RETRY / CLOSE, as `POST /claims/{id}/review` answers it. */
export type RefundReviewResult =
  | ReviewRequestOutcome
  | { ok: false; status: 400; code: "NOTE_REQUIRED"; message: string }
  | { ok: false; status: 409; code: "DECISION_NOT_ALLOWED" | "REVIEW_ALREADY_DECIDED" | "TAKEN_BY"; message: string };

/** What the refund review decides with: whether anything pays refunds here (a settlements store exists). */
export type RefundReviewPolicy = { readonly settlements: boolean };

/** A RETRY / CLOSE request, parsed, by its reviewer. */
type Asked = { claimId: string; request: RefundReviewRequest; reviewer: string };

/** Where a refund review request stands. */
export type RefundReviewState =
  /** Another decision (APPROVE, DENY, RESUBMIT): refused while the refund's review is pending. */
  | { at: "other"; decision: string }
  | { at: "claim"; asked: Asked }
  | { at: "settlement"; asked: Asked; attempt: number }
  | { at: "announced"; asked: Asked; attempt: number }
  /** The instant the decision is taken at. */
  | { at: "decided_at"; asked: Asked; attempt: number; settlement: SettlementRecord }
  | { at: "recorded"; asked: Asked; attempt: number; decided: SettlementRecord }
  | { at: "performed"; performed: PerformedState; answer: RefundReviewResult | undefined };

/** Where performing a decided review stands: its settlement read again, then marked performed. */
export type PerformedState = { at: "fresh"; decided: SettlementRecord } | { at: "marked" };

type Outcome<O, S> = Step<Next<O, S>>;
type RefundReviewStep = Outcome<RefundReviewResult | undefined, RefundReviewState>;

/**
 * The answer to a review request when it concerns the claim's failed refund: RETRY / CLOSE decided here, any other
 * decision refused (409 DECISION_NOT_ALLOWED) while the refund's review is pending. Done `undefined`: not this
 * review's request — the claim's own review decides it.
 */
export function startRefundReview(
  claimId: string,
  body: unknown,
  by: ReviewerIdentity | undefined,
  policy: RefundReviewPolicy,
): RefundReviewStep {
  if (!asksRefundDecision(body)) {
    const decision = typeof body === "object" && body !== null ? (body as { decision?: unknown }).decision : undefined;
    if (typeof decision !== "string" || !policy.settlements) return done(undefined);
    return ask({ kind: "settlement", claimId }, { at: "other", decision });
  }
  const parsed = RefundReviewRequestSchema.safeParse(body);
  if (!parsed.success) return done(invalidReviewDecision(parsed.error));
  const mismatch = reviewerMismatch(parsed.data.reviewer, by);
  if (mismatch) return done(mismatch);
  const reviewer = by?.id ?? parsed.data.reviewer ?? "reviewer";
  return ask({ kind: "claim", claimId }, { at: "claim", asked: { claimId, request: parsed.data, reviewer } });
}

/** The refund review's next step on the answer to what it asked. */
export function decideRefundReview(state: RefundReviewState, observed: Observation): RefundReviewStep {
  switch (state.at) {
    case "other": {
      const { settlement } = observedAs(observed, "settlement");
      if (settlement?.review?.status !== "PENDING") return done(undefined);
      return done({ ok: false, ...otherDecisionRefused(state.decision, settlement) });
    }
    case "claim": {
      const { claimId } = state.asked;
      if (!observedAs(observed, "claim").claim)
        return done({ ok: false, status: 404, code: "NOT_FOUND", message: `claim ${claimId} not found` });
      return attempt(state.asked, 0);
    }
    case "settlement": {
      const { settlement } = observedAs(observed, "settlement");
      const { asked } = state;
      const check = checkRefundDecision(settlement, asked.request, asked.reviewer);
      if ("refused" in check) return done({ ok: false, ...check.refused });
      if ("repeat" in check) return performed(settlement!, answerFor(settlement!));
      // A failure not yet announced (its recorder crashed; the provider's webhook will come again, but for an
      // execution a RETRY has replaced) is announced first: RefundFailed before the decision on it (npm run chaos).
      if (settlement!.status === "FAILED" && settlement!.announced !== "FAILED")
        return ask({ kind: "announce", settlement: settlement! }, { ...state, at: "announced" });
      return ask({ kind: "now" }, { ...state, at: "decided_at", settlement: settlement! });
    }
    case "announced":
      observedAs(observed, "announce");
      return attempt(state.asked, state.attempt + 1);
    case "decided_at": {
      const { asked } = state;
      const nowMs = observedAs(observed, "now").now;
      // Taken at the desk by someone else: their decision to take.
      const review = state.settlement.review!;
      const taken = takenByRefusal(review, asked.reviewer, nowMs, review.review_id);
      if (taken) return done({ ok: false, ...taken });
      const at = new Date(nowMs).toISOString();
      const { decision, note, paid_out_of_band: paidOutOfBand } = asked.request;
      const decided = decidedSettlement(state.settlement, decision, asked.reviewer, note, at, paidOutOfBand);
      return ask({ kind: "settlement_update", settlement: decided }, { ...state, at: "recorded", decided });
    }
    case "recorded":
      // The provider or another reviewer got there first: look again.
      if (observedAs(observed, "settlement_update").conflict) return attempt(state.asked, state.attempt + 1);
      return performed(state.decided, answerFor(state.decided));
    case "performed":
      return asRequest(decidePerformed(state.performed, observed), state.answer);
  }
}

/** One more look at the settlement, at most three; then the review is changing concurrently. */
function attempt(asked: Asked, n: number): RefundReviewStep {
  if (n >= 3)
    return done({
      ok: false,
      status: 409,
      code: "REVIEW_ALREADY_DECIDED",
      message: `the refund review of claim ${asked.claimId} is changing concurrently; try again`,
    });
  return ask({ kind: "settlement", claimId: asked.claimId }, { at: "settlement", asked, attempt: n });
}

function performed(decided: SettlementRecord, answer: RefundReviewResult): RefundReviewStep {
  return asRequest(startPerformed(decided), answer);
}

function asRequest(step: Outcome<true, PerformedState>, answer: RefundReviewResult | undefined): RefundReviewStep {
  return within(
    step,
    (p): RefundReviewState => ({ at: "performed", performed: p, answer }),
    (): RefundReviewStep => done(answer),
  );
}

/**
 * A decided refund review's effects performed, then marked performed (a lost race leaves it to the sweep): what the
 * request does once the decision is recorded, and what the sweep does for a decision a crash cut short.
 */
export function startPerformed(decided: SettlementRecord): Outcome<true, PerformedState> {
  const effects = refundReviewEffects(decided, settlementDfid(decided.claim_id));
  if (decided.review?.performed) return { effects, next: { done: true } };
  return {
    effects,
    next: { awaiting: { kind: "settlement", claimId: decided.claim_id }, state: { at: "fresh", decided } },
  };
}

/** Performing a decided review's next step on the answer to what it asked. */
export function decidePerformed(state: PerformedState, observed: Observation): Outcome<true, PerformedState> {
  if (state.at === "marked") {
    observedAs(observed, "settlement_update");
    return done(true);
  }
  const fresh = observedAs(observed, "settlement").settlement;
  if (!fresh?.review || fresh.review.review_id !== state.decided.review!.review_id || fresh.review.performed)
    return done(true);
  const marked = { ...fresh, review: { ...fresh.review, performed: true as const }, version: fresh.version + 1 };
  return ask({ kind: "settlement_update", settlement: marked }, { at: "marked" });
}

/** The answer for a decided refund review: the review as the claim shows it, and the execution that pays (RETRY). */
function answerFor(settlement: SettlementRecord): RefundReviewResult {
  const view = refundClaimView(settlement);
  const review = settlement.review!;
  const body: ReviewAnswer = {
    claim_id: settlement.claim_id,
    review: view.review as Record<string, unknown>,
    executed: review.decision === "RETRY",
    execution_id: review.retry_execution_id ?? review.execution_id,
  };
  return { ok: true, body };
}
