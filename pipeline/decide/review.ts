// Human review's process (docs/reviews.md), decided: one review request as one `decideReview(state, observation) →
// { effects, next }` its shell (pipeline/review.ts) loops over. A failed refund's review (RETRY / CLOSE) is the refund
// review's (decide/refund-review.ts, run first); otherwise APPROVE (the reject checks again, then the refund reserved
// exactly once through the same ledger as an ACCEPT), DENY, RESUBMIT (a corrected claim through intake's submission,
// decide/intake.ts). A decision is claimed on the review first (an intent, conditional on its version: a lost race
// is an answer, the review is read again, at most three times), so a crash anywhere is repaired by repeating the same
// decision (or by the sweep, `startReviewRepair`) and a different decision is refused with 409. Built from
// decide/review-decision.ts; its states in decide/review-state.ts.
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { isFinal } from "../../core/kernel/claim-record.ts";
import { checkDecision, normaliseDecision, ReviewDecisionSchema, takenByRefusal } from "../../core/kernel/review.ts";
import type { DecisionRules, ReviewerIdentity, ReviewRecord } from "../../core/kernel/review.ts";
import { ORDER_SOURCE_UNAVAILABLE } from "../../core/kernel/reason-codes.ts";
import type { Effect } from "../effects.ts";
import { decideSubmission, startSubmission } from "./intake.ts";
import type { SubmissionState, SubmitResult } from "./intake.ts";
import { decideRefundReview, startRefundReview } from "./refund-review.ts";
import type { RefundReviewState } from "./refund-review.ts";
import type { Observation } from "./requests.ts";
import {
  approvalReserved,
  decidedReview,
  firstApprovalEffects,
  firstApprovalRecorded,
  intentFor,
  invalidReviewDecision,
  recordedReviewEffects,
  resubmission,
  reviewAnswer,
  reviewDecidedEffects,
  reviewerMismatch,
  staleCarrier,
  stripUndefined,
  withdrawn,
} from "./review-decision.ts";
import type { ApprovalChecked, ApprovalRefusal } from "./review-decision.ts";
import { decideApprovalCheck, startApprovalCheck } from "./approval-check.ts";
import type { ApprovalCheckState } from "./approval-check.ts";
import { approvalCustomer, customerAlone, customerReservation, fourEyesCustomer } from "./approval-customer.ts";
import { orderReservation } from "./approval-reservation.ts";
import type { Order } from "../../core/integrity/index.ts";
import { inOrderCurrency, secondApprovalBounds } from "../../core/kernel/review-currency.ts";
import { ask, done, observedAs, within } from "./step.ts";
import type {
  Asked,
  Attempt,
  Carrying,
  Claimed,
  Outcome,
  ReviewPolicy,
  ReviewResult,
  ReviewState,
  ReviewStep,
} from "./review-state.ts";

export type { ReviewPolicy, ReviewResult, ReviewState } from "./review-state.ts";

/** Two lists of effects, each performed on its own (a list's audit events are one stored item). */
function seq<O, S>(effects: readonly Effect[], step: Outcome<O, S>): Outcome<O, S> {
  if (effects.length === 0) return step;
  if (step.effects.length === 0) return { effects, next: step.next };
  return { effects, next: { then: step } };
}

/**
 * Decides the claim's review as `by` asked; idempotent, and nothing is written for a refused request. `by` is the
 * authenticated reviewer; a body `reviewer` naming anyone else is refused (400). Callers without a credential (a
 * simulation's scripted review steps, tests) leave `by` out: the body's `reviewer` then names the simulated person
 * (default `reviewer`).
 */
export function startReview(
  claimId: string,
  body: unknown,
  by: ReviewerIdentity | undefined,
  policy: ReviewPolicy,
): ReviewStep {
  return refundFirst(startRefundReview(claimId, body, by, policy), { claimId, body, by });
}

/** The sweep's repair of a decision claimed but not finished (a crash between the intent and the record). */
export function startReviewRepair(review: ReviewRecord): ReviewStep {
  return ask({ kind: "claim", claimId: review.claim_id }, { at: "repair_claim", review });
}

/** The review request's next step on the answer to what it asked. */
export function decideReview(state: ReviewState, observed: Observation, policy: ReviewPolicy): ReviewStep {
  switch (state.at) {
    case "refund": {
      const { refund, ...request } = state;
      return refundFirst(decideRefundReview(refund, observed), request);
    }
    case "claim": {
      const { asked } = state;
      const record = observedAs(observed, "claim").claim;
      if (!record)
        return done({ ok: false, status: 404, code: "NOT_FOUND", message: `claim ${asked.claimId} not found` });
      if (record.parent_claim_id && asked.body.decision === "APPROVE")
        return ask({ kind: "review", claimId: record.parent_claim_id }, { at: "parent", asked, record });
      return attempt(claimedBy(asked, record, policy, {}), 0);
    }
    case "parent": {
      const resubmittedBy = observedAs(observed, "review").review?.reviewer;
      return attempt(claimedBy(state.asked, state.record, policy, { resubmittedBy }), 0);
    }
    case "review": {
      const { review } = observedAs(observed, "review");
      const { claimed } = state;
      // An approval's four-eyes total: what this reviewer alone approved on the order, read as it stands now.
      if (review?.order_id && review.status === "PENDING" && !review.intent && claimed.body.decision === "APPROVE")
        return ask(
          {
            kind: "approved_alone",
            orderId: review.order_id,
            scope: claimed.record.simulation_id,
            reviewer: claimed.reviewer,
            exceptClaimId: claimed.claimId,
          },
          { at: "alone", claimed, attempt: state.attempt, review },
        );
      return reviewRead(claimed, state.attempt, review, policy);
    }
    case "alone": {
      const alone = observedAs(observed, "approved_alone");
      const claimed: Claimed = {
        ...state.claimed,
        rules: { ...state.claimed.rules, approvedAloneCents: alone.cents },
        approvedCount: alone.approvedCount,
      };
      return reviewRead(claimed, state.attempt, state.review, policy);
    }
    case "precheck":
      return checking(
        decideApprovalCheck(state.check, observed, policy),
        (check) => ({ ...state, check }),
        (checked) => (checked.ok ? perCustomer(state.attempt, checked.order, policy) : done(refusal(checked))),
      );
    case "customer_now": {
      const { attempt: a, customerId } = state;
      const now = observedAs(observed, "now").now;
      const read = { kind: "customer_window", customerId, scope: a.record.simulation_id } as const;
      return ask(read, { at: "customer_alone", attempt: a, now });
    }
    case "customer_alone": {
      const { attempt: a } = state;
      const window = observedAs(observed, "customer_window").window;
      const { rules, approvals } = customerAlone(policy, window, a.rules, state.now, a.claimId);
      const check = checkDecision(a.body, a.review, rules);
      if (check !== undefined && check !== "FIRST_APPROVAL" && check !== "REPEAT") return done({ ok: false, ...check });
      return claim({ ...a, rules, customerApprovals: approvals, first: check === "FIRST_APPROVAL" });
    }
    case "first_at": {
      const { attempt: a } = state;
      const now = observedAs(observed, "now").now;
      const taken = takenByRefusal(a.review, a.reviewer, now, a.review.review_id);
      if (taken) return done({ ok: false, ...taken });
      const approval = { reviewer: a.reviewer, amount_eur: a.decision.amount_eur!, at: new Date(now).toISOString() };
      const update = { kind: "review_update", review: firstApprovalRecorded(a.review, approval) } as const;
      return ask(update, { at: "first_recorded", attempt: a });
    }
    case "first_recorded": {
      const update = observedAs(observed, "review_update");
      const { attempt: a } = state;
      // Another decision got there first: look again.
      if (!update.changed) return attempt(a, a.attempt + 1);
      return done(
        { ok: true, body: reviewAnswer(a.record, update.review!) },
        firstApprovalEffects(a.record, update.review!),
      );
    }
    case "intent_at": {
      const { attempt: a } = state;
      const now = observedAs(observed, "now").now;
      // Taken at the desk by someone else: their decision to take (a repeat of a decision in progress goes on).
      const taken = takenByRefusal(a.review, a.reviewer, now, a.review.review_id);
      if (taken) return done({ ok: false, ...taken });
      const intent = intentFor(a.decision, now, a.approvedCount, a.customerApprovals);
      const update = { kind: "review_update", review: { ...a.review, intent, version: a.review.version + 1 } } as const;
      return ask(update, { at: "intent_claimed", attempt: a });
    }
    case "intent_claimed": {
      const update = observedAs(observed, "review_update");
      const { attempt: a } = state;
      if (!update.changed) return attempt(a, a.attempt + 1);
      return carryOut(a.record, update.review!, a);
    }
    case "repair_claim": {
      const record = observedAs(observed, "claim").claim;
      if (!record) return done(undefined);
      return carryOut(record, state.review);
    }
    case "carry_time":
      return carrying(
        { record: state.record, review: state.review, now: observedAs(observed, "now").now, again: state.again },
        policy,
      );
    case "approval":
      return approvalChecked(state.carrying, decideApprovalCheck(state.check, observed, policy), policy);
    case "customer_reserved": {
      const { carrying: c, cents, order, orderCents, customerId } = state;
      const { result } = observedAs(observed, "reserve_customer");
      if (!result.ok)
        return withdraw(
          c.review,
          refusal({ ok: false, code: result.code, message: result.message }),
          result.code === "APPROVALS_CHANGED" ? c.again : undefined,
        );
      return reserveOnOrder(c, { order, cents, orderCents }, policy, customerId);
    }
    case "reserved": {
      const { carrying: c } = state;
      const reserved = approvalReserved(observedAs(observed, "reserve").result, c.record.claim_id, state.cents);
      // The refund cannot be made: the review stays PENDING and nothing else changed (the customer's window, when
      // the refund was recorded on it first, is released).
      if (!reserved.ok && state.customerId !== undefined) {
        const release = {
          kind: "release_customer",
          customerId: state.customerId,
          claimId: c.record.claim_id,
          scope: c.record.simulation_id,
        } as const;
        const raced = reserved.code === "APPROVALS_CHANGED";
        return ask(release, { at: "customer_released", carrying: c, result: refusal(reserved), raced });
      }
      if (!reserved.ok)
        return withdraw(c.review, refusal(reserved), reserved.code === "APPROVALS_CHANGED" ? c.again : undefined);
      return decided(c.record, decidedReview(c.review, c.now));
    }
    case "customer_released":
      observedAs(observed, "release_customer");
      return withdraw(state.carrying.review, state.result, state.raced ? state.carrying.again : undefined);
    case "resubmitted":
      return resubmitting(state.carrying, decideSubmission(state.submission, observed));
    case "withdrawn":
      observedAs(observed, "review_update");
      // Another approval on the order landed since this one was decided: decided again on the order as it is now.
      if (state.again) return attempt(state.again, state.again.attempt + 1);
      return done(state.result);
    case "announcing": {
      const stale = staleCarrier(state.record, state.next, observedAs(observed, "review").review);
      return stale ? done(stale[0], stale[1]) : announceThenRecord(state.record, state.next);
    }
    case "recorded": {
      const stored = observedAs(observed, "review_update");
      const { record, next } = state;
      return done({ ok: true, body: reviewAnswer(record, stored.review ?? next) }, recordedReviewEffects(record, next));
    }
  }
}

/** The refund review answers first; `undefined` from it: the claim's own review decides the request. */
function refundFirst(
  step: Outcome<ReviewResult | undefined, RefundReviewState>,
  request: { claimId: string; body: unknown; by: ReviewerIdentity | undefined },
): ReviewStep {
  return within(
    step,
    (refund): ReviewState => ({ at: "refund", refund, ...request }),
    (answer): ReviewStep => (answer !== undefined ? done(answer) : claimReview(request)),
  );
}

function claimReview({ claimId, body, by }: { claimId: string; body: unknown; by: ReviewerIdentity | undefined }) {
  const parsed = ReviewDecisionSchema.safeParse(body);
  if (!parsed.success) return done(invalidReviewDecision(parsed.error));
  const named = parsed.data.reviewer;
  const mismatch = reviewerMismatch(named, by);
  if (mismatch) return done(mismatch);
  const asked: Asked = {
    claimId,
    body: parsed.data,
    reviewer: by?.id ?? named ?? "reviewer",
    ...(by?.maxApprovalEur !== undefined ? { maxApprovalEur: by.maxApprovalEur } : {}),
  };
  return ask({ kind: "claim", claimId }, { at: "claim", asked } as ReviewState);
}

function claimedBy(
  asked: Asked,
  record: ClaimRecord,
  policy: ReviewPolicy,
  parent: { resubmittedBy?: string | undefined },
): Claimed {
  const others = secondApprovalBounds(policy.agent.contract);
  const rules: DecisionRules = {
    reviewer: asked.reviewer,
    secondApprovalAboveEur: policy.agent.review?.secondApprovalAboveEur,
    ...(Object.keys(others).length > 0 ? { secondApprovalAboveMinor: others } : {}),
    ...(asked.maxApprovalEur !== undefined ? { maxApprovalEur: asked.maxApprovalEur } : {}),
    ...("resubmittedBy" in parent ? { resubmittedBy: parent.resubmittedBy } : {}),
  };
  return { ...asked, record, rules };
}

/** One more look at the review, at most three; then it is changing concurrently: 409 REVIEW_CHANGED, try again. */
function attempt(claimed: Claimed, n: number): ReviewStep {
  const { claimId, body, reviewer, record, maxApprovalEur } = claimed;
  // The four-eyes total is read again with the review (the "alone" step).
  const { approvedAloneCents: _alone, ...rules } = claimed.rules;
  if (n >= 3)
    return done({
      ok: false,
      status: 409,
      code: "REVIEW_CHANGED",
      message: `review of claim ${claimId} is changing concurrently; try again`,
    });
  return ask(
    { kind: "review", claimId },
    {
      at: "review",
      claimed: { claimId, body, reviewer, record, rules, ...(maxApprovalEur !== undefined ? { maxApprovalEur } : {}) },
      attempt: n,
    },
  );
}

/**
 * The review as read: a first approval recorded earlier is audited again (identical, so dropped: repairs a crash
 * before its audit), then the decision is checked against it; a decided review repeated is answered again (its
 * effects performed again, idempotent); an approval that cannot pass the reject checks now is refused before it
 * claims anything, so another reviewer's decision is not blocked by an approval that was going to fail.
 */
function reviewRead(claimed: Claimed, n: number, review: ReviewRecord | undefined, policy: ReviewPolicy): ReviewStep {
  const { record } = claimed;
  if (!review)
    return done({
      ok: false,
      status: 409,
      code: "NO_PENDING_REVIEW",
      message: `claim ${claimed.claimId} has no review${isFinal(record.status) ? "" : " (it is not final yet)"}`,
    });
  const repaired = firstApprovalEffects(record, review);
  const check = checkDecision(claimed.body, review, claimed.rules);
  if (check !== undefined && check !== "REPEAT" && check !== "FIRST_APPROVAL")
    return done({ ok: false, ...check }, repaired);
  if (check === "REPEAT" && review.status !== "PENDING")
    return seq(repaired, done({ ok: true, body: reviewAnswer(record, review) }, reviewDecidedEffects(record, review)));
  const decision = normaliseDecision(claimed.body, review, claimed.reviewer);
  const a: Attempt = { ...claimed, attempt: n, review, decision, first: check === "FIRST_APPROVAL" };
  if (!review.intent && decision.decision === "APPROVE")
    return seq(
      repaired,
      checking(
        startApprovalCheck(record, review, decision.amount_eur!),
        (check): ReviewState => ({ at: "precheck", attempt: a, check }),
        (checked) => (checked.ok ? perCustomer(a, checked.order, policy) : done(refusal(checked))),
      ),
    );
  return seq(repaired, claim(a));
}

/**
 * Four eyes per customer: a first approval under `second_approval_above_eur` on an order of a customer the customer
 * limits bind is checked again with what the reviewer alone approved for them in the window (read now).
 */
function perCustomer(a: Attempt, order: Order, policy: ReviewPolicy): ReviewStep {
  const customerId = a.first ? undefined : fourEyesCustomer(policy, order, a.review, a.rules);
  if (customerId === undefined) return claim(a);
  return ask({ kind: "now" }, { at: "customer_now", attempt: a, customerId });
}

/** A first approval under four eyes is recorded on the review; any other decision is claimed on it (or already is). */
function claim(a: Attempt): ReviewStep {
  if (a.first) return ask({ kind: "now" }, { at: "first_at", attempt: a });
  if (!a.review.intent) return ask({ kind: "now" }, { at: "intent_at", attempt: a });
  return carryOut(a.record, a.review);
}

/** Carries out the decision claimed on the review (from its instant), then records it as decided. */
function carryOut(record: ClaimRecord, review: ReviewRecord, again?: Attempt): ReviewStep {
  return ask({ kind: "now" }, { at: "carry_time", record, review, ...(again ? { again } : {}) });
}

function carrying(c: Carrying, policy: ReviewPolicy): ReviewStep {
  const intent = c.review.intent!;
  if (intent.decision === "APPROVE")
    return approvalChecked(c, startApprovalCheck(c.record, c.review, intent.amount_eur!), policy);
  if (intent.decision === "RESUBMIT") {
    const { body, opts } = resubmission(c.record, c.review);
    return resubmitting(c, startSubmission(body, opts));
  }
  return decided(c.record, decidedReview(c.review, c.now));
}

/**
 * The reject checks (layers 1–8b) run again on the escalated proposal against the ledger as it stands now, with
 * the escalation checks lifted; then the approved amount is reserved with the same single conditional update as an
 * ACCEPT — exactly once per claim, never above the order.
 */
function approvalChecked(
  carrying: Carrying,
  step: Outcome<ApprovalChecked, ApprovalCheckState>,
  policy: ReviewPolicy,
): ReviewStep {
  return checking(
    step,
    (check): ReviewState => ({ at: "approval", carrying, check }),
    (checked): ReviewStep => {
      if (!checked.ok) return withdraw(carrying.review, refusal(checked));
      const { order, cents, orderCents } = checked;
      // The review keeps its amounts' currency (the order's): the approval's refund is audited in its minor units.
      const c: Carrying = { ...carrying, review: inOrderCurrency(carrying.review, order) };
      const customerId = approvalCustomer(policy, order);
      if (customerId === undefined) return reserveOnOrder(c, checked, policy);
      // Recorded on the customer's window first (four eyes per customer), conditional on the approved count the
      // decision read in this request; then on the order.
      const request = customerReservation(policy, {
        customerId,
        review: c.review,
        orderId: order.order_id,
        cents,
        now: c.now,
        // The intent's count (kept with the decision claimed), so the sweep's repair records on it too.
        approvals: c.review.intent?.customer_approvals ?? c.again?.customerApprovals,
        scope: c.record.simulation_id,
      });
      return ask(
        { kind: "reserve_customer", request },
        { at: "customer_reserved", carrying: c, cents, order, orderCents, customerId },
      );
    },
  );
}

/** The approved refund reserved on the order's ledger (after the customer's window, when it was recorded there). */
function reserveOnOrder(
  c: Carrying,
  { order, cents, orderCents }: { order: Order; cents: number; orderCents: number },
  policy: ReviewPolicy,
  customerId?: string,
): ReviewStep {
  const request = orderReservation(c, { order, cents, orderCents }, policy);
  return ask(
    { kind: "reserve", request },
    { at: "reserved", carrying: c, cents, ...(customerId ? { customerId } : {}) },
  );
}

function resubmitting(c: Carrying, step: Outcome<SubmitResult, SubmissionState>): ReviewStep {
  return within(
    step,
    (submission): ReviewState => ({ at: "resubmitted", carrying: c, submission }),
    (submitted): ReviewStep => {
      if (submitted.ok) return decided(c.record, decidedReview(c.review, c.now, submitted.claimId));
      return withdraw(
        c.review,
        submitted.code === "INVALID_INPUT"
          ? {
              ok: false,
              status: 400,
              code: "INVALID_INPUT",
              message: submitted.message,
              issues: submitted.issues.map((i) => ({ ...i, path: `claim.${i.path}` })),
            }
          : submitted.code === "ORDER_SOURCE_UNAVAILABLE"
            ? { ok: false, status: 503, code: submitted.code, message: submitted.message }
            : { ok: false, status: 409, code: submitted.code, message: submitted.message },
      );
    },
  );
}

/** The decision could not be carried out: its intent withdrawn, the review stays PENDING. */
function withdraw(review: ReviewRecord, result: ReviewResult, again?: Attempt): ReviewStep {
  return ask(
    { kind: "review_update", review: withdrawn(review) },
    { at: "withdrawn", result, ...(again && again.attempt < 2 ? { again } : {}) },
  );
}

/** The decision carried out, once the review read again shows it still claimed (decide/review-decision.ts staleCarrier). */
function decided(record: ClaimRecord, next: ReviewRecord): ReviewStep {
  return ask({ kind: "review", claimId: record.claim_id }, { at: "announcing", record, next });
}

/** Announce first, then record: a crash in between is repaired by the same request (or the sweep) announcing again. */
function announceThenRecord(record: ClaimRecord, next: ReviewRecord): ReviewStep {
  return {
    effects: reviewDecidedEffects(record, next),
    next: {
      awaiting: { kind: "review_update", review: stripUndefined(next) },
      state: { at: "recorded", record, next },
    },
  };
}

/** A refused approval as answered: 503 when the order source could not answer (try again), else 409 with the rule. */
function refusal(refused: ApprovalRefusal): ReviewResult {
  if (refused.code === ORDER_SOURCE_UNAVAILABLE)
    return { ok: false, status: 503, code: ORDER_SOURCE_UNAVAILABLE, message: refused.message };
  return { ok: false, status: 409, code: refused.code, message: refused.message };
}

function checking(
  step: Outcome<ApprovalChecked, ApprovalCheckState>,
  wrap: (check: ApprovalCheckState) => ReviewState,
  after: (checked: ApprovalChecked) => ReviewStep,
): ReviewStep {
  return within(step, wrap, after);
}
