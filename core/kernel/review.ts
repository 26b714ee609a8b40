// Human review (docs/reviews.md): the record a review keeps, its id, its public view, and the pure rules of a
// decision — which decisions an origin allows, what an APPROVE may grant, when a repeated request is the
// same decision. The kernel decides what it can; a person decides the rest, through the same ledger,
// audit and events.
import * as z from "zod";
import { knownAmountFields, type Amount } from "./public-amount.ts";
import { approvalFields } from "./review-approvals.ts";
import { canonicalize } from "../crew/canonical.ts";
import { hashHex } from "../crew/hash.ts";
import { formatEur } from "./money.ts";
import { fourEyesBound, minorIn } from "./review-currency.ts";
import { deskFields } from "./review-desk.ts";
import type { ReviewDesk } from "./review-desk.ts";
import { ClaimSchema, oneLineText } from "../claim/claim.ts";

/** What opened a review: an ESCALATE verdict, or a claim that ended in NEEDS_REVIEW. */
export const ReviewOriginSchema = z.enum(["ESCALATE", "NEEDS_REVIEW"]);

/** A review's origin. */
export type ReviewOrigin = z.infer<typeof ReviewOriginSchema>;

/** A review's status: PENDING until decided once. */
export const ReviewStatusSchema = z.enum(["PENDING", "APPROVED", "DENIED", "RESUBMITTED"]);

/** A review's status. */
export type ReviewStatus = z.infer<typeof ReviewStatusSchema>;

/** A reviewer's decision. */
export const ReviewDecisionKindSchema = z.enum(["APPROVE", "DENY", "RESUBMIT"]);

/** The body of `POST /claims/{id}/review` (docs/http-api.md). */
export const ReviewDecisionSchema = z
  .object({
    decision: ReviewDecisionKindSchema,
    note: oneLineText().max(2000).optional(),
    reviewer: oneLineText().trim().min(1).max(128).optional(),
    amount_eur: z.number().refine(Number.isFinite, "amount_eur must be a finite number").optional(),
    claim: ClaimSchema.optional(),
  })
  .strict()
  .superRefine((d, ctx) => {
    if (d.amount_eur !== undefined && d.decision !== "APPROVE")
      ctx.addIssue({ code: "custom", path: ["amount_eur"], message: "amount_eur is only for APPROVE" });
    if (d.claim !== undefined && d.decision !== "RESUBMIT")
      ctx.addIssue({ code: "custom", path: ["claim"], message: "claim is only for RESUBMIT" });
    if (d.claim === undefined && d.decision === "RESUBMIT")
      ctx.addIssue({ code: "custom", path: ["claim"], message: "RESUBMIT needs the corrected claim" });
  });

/** A reviewer's decision as submitted. */
type ReviewDecision = z.infer<typeof ReviewDecisionSchema>;

/** Who decides: the identity the reviewer's credential belongs to (never a name typed into the request). */
export interface ReviewerIdentity {
  /** The reviewer's stable id (locally the reviewers file's `id`; on AWS the token's `sub`). */
  id: string;
  /** A display name, when the identity has one. */
  name?: string | undefined;
  /**
   * The most this reviewer approves alone, in EUR (the reviewers file's `max_approval`; on AWS a `claims/approve:N`
   * group or scope, or a `claims_max_approval` claim); absent: no limit of their own (docs/reviews.md#reviewer-limits).
   */
  maxApprovalEur?: number | undefined;
}

/** One reviewer's approval of a review: who, for how much, when. */
export const ReviewApprovalSchema = z
  .object({ reviewer: z.string().min(1), amount_eur: z.number().positive(), at: z.string() })
  .strict();

/** One approval recorded on a review. */
export type ReviewApproval = z.infer<typeof ReviewApprovalSchema>;

/** What a PENDING review waits for beyond a first decision: a second reviewer's approval (four eyes). */
export const ReviewAwaitingSchema = z.enum(["SECOND_APPROVAL"]);

/** A review as stored: one per claim, decided once. */
export const ReviewRecordSchema = z
  .object({
    review_id: z.string().min(1),
    claim_id: z.string().min(1),
    dfid: z.string().min(1),
    origin: ReviewOriginSchema,
    status: ReviewStatusSchema,
    reason_code: z.string().min(1),
    reason: z.string(),
    order_id: z.string().min(1).optional(),
    /** The amount under review (the proposal's), when there is one. */
    amount_eur: z.number().optional(),
    /** The currency of the review's amounts (`amount_eur` counts it); absent when it was not known (the claim named none and the order was not read) or before currencies. */
    currency: z.string().length(3).optional(),
    requested_at: z.string(),
    simulation_id: z.string().min(1).optional(),
    /** The kernel's verdict id, for an ESCALATE review. */
    verdict_id: z.string().min(1).optional(),
    /** When the kernel decided (an approval judges the proposal's validity as the kernel saw it). */
    verdict_decided_at: z.string().optional(),
    /** The escalated proposal, as the kernel judged it (an approval runs the reject checks on it again). */
    proposal: z.unknown().optional(),
    /** Version for conditional updates; 1 when opened. */
    version: z.number().int().positive(),
    /** A decision in progress: claimed before the refund is reserved, so a crash can be repaired and a different decision refused. */
    // `decided_at` is fixed when the decision is claimed, so a repair announces exactly what the first attempt did.
    intent: z
      .object({
        decision: ReviewDecisionKindSchema,
        amount_eur: z.number().optional(),
        reviewer: z.string().optional(),
        note: z.string().optional(),
        claim: ClaimSchema.optional(),
        decided_at: z.string().optional(),
        /**
         * An approval: the order's approved count its four-eyes check was decided on. Whoever carries the intent out
         * (the request, or the sweep's repair racing it) reserves on that count, so an approval decided on a stale
         * count is refused APPROVALS_CHANGED by every carrier, never reserved by one of them.
         */
        approved_count: z.number().int().nonnegative().optional(),
        /** An approval under four eyes per customer: the customer window's approved count it was decided on (the same way). */
        customer_approvals: z.number().int().nonnegative().optional(),
      })
      .strict()
      .optional(),
    /** Who took the review at the desk (`POST /claims/{id}/review/take`), until when: another reviewer's decision waits. */
    taken_by: z.string().min(1).optional(),
    taken_until: z.string().optional(),
    /** The first approval of a four-eyes review, recorded while it awaits a different reviewer's approval. */
    approvals: z.array(ReviewApprovalSchema).optional(),
    awaiting: ReviewAwaitingSchema.optional(),
    decided_at: z.string().optional(),
    decision: ReviewDecisionKindSchema.optional(),
    reviewer: z.string().optional(),
    note: z.string().optional(),
    approved_amount_eur: z.number().optional(),
    execution_id: z.string().optional(),
    resubmitted_claim_id: z.string().optional(),
  })
  .strict();

/** A stored review. */
export type ReviewRecord = z.infer<typeof ReviewRecordSchema>;

export {
  byDueThenAmount,
  DEFAULT_REVIEW_DUE_MS,
  deskFields,
  leaseHolder,
  REVIEW_LEASE_MS,
  reviewDueAt,
  takenByRefusal,
} from "./review-desk.ts";
export type { ReviewDesk, ReviewLease } from "./review-desk.ts";

/** A review's id, derived from its claim's id (one review per claim): `rev_` + 24 hex. */
export function reviewIdFor(claimId: string): string {
  return `rev_${hashHex(`review|${claimId}`).slice(0, 24)}`;
}

/** The execution id of an approved review's refund (stable: a repeat publishes the same id). */
export function approvalExecutionIdFor(reviewId: string): string {
  return `exe_${hashHex(`approval|${reviewId}`).slice(0, 32)}`;
}

/** The claim id a RESUBMIT creates, derived from the review, so a repeated request creates nothing new. */
export function resubmittedClaimIdFor(reviewId: string): string {
  return `clm_${hashHex(`resubmit|${reviewId}`).slice(0, 20)}`;
}

/** A decided review's decision (who, what, when, why); nothing while it is PENDING, even with a decision in progress. */
function decisionFields(r: ReviewRecord): Record<string, unknown> {
  if (r.status === "PENDING" || !r.decision) return {};
  return {
    decision: r.decision,
    ...(r.decided_at ? { decided_at: r.decided_at } : {}),
    ...(r.reviewer ? { reviewer: r.reviewer } : {}),
    ...(r.note ? { note: r.note } : {}),
  };
}

/**
 * A review as `GET /claims/{id}` shows it (docs/http-api.md): an in-progress decision still reads PENDING; with the
 * desk, when it is due and who holds it.
 */
export function reviewView(r: ReviewRecord, desk?: ReviewDesk): Record<string, unknown> {
  return {
    review_id: r.review_id,
    origin: r.origin,
    status: r.status,
    reason_code: r.reason_code,
    reason: r.reason,
    requested_at: r.requested_at,
    ...deskFields(r, desk),
    ...decisionFields(r),
    ...knownAmountFields(
      r.status === "APPROVED" && r.approved_amount_eur !== undefined ? r.approved_amount_eur : r.amount_eur,
      r.currency,
    ),
    ...(r.resubmitted_claim_id ? { resubmitted_claim_id: r.resubmitted_claim_id } : {}),
    ...approvalFields(r),
  };
}

/** What a reviewer needs beside the review itself: the claim as it stands, the crew's proposal and the kernel's checks. */
export interface ReviewContext {
  /** The structured claim (as submitted, or as extracted from free text). */
  claim?: z.infer<typeof ClaimSchema> | undefined;
  /** The customer's own words, when the claim came as free text. */
  claimText?: string | undefined;
  label?: string | undefined;
  /** The Decision Maker's proposal. */
  proposal?: unknown;
  /** The kernel's verdict on it: the deciding layer and the checks run up to it. */
  verdict?: { verdict: string; layer: number; checks: readonly unknown[] } | undefined;
  /** What the reviewer decides on beside the claim: the order, what was refunded on it, its other claims, the customer's window. */
  facts?: Record<string, unknown> | undefined;
}

/**
 * A review as `GET /reviews` lists it: the fields of docs/http-api.md, then what the review page shows beside them
 * (the claim, the proposal, the kernel's verdict id, deciding layer and checks) when the context has them.
 */
export function reviewListItem(
  r: ReviewRecord,
  context: ReviewContext = {},
  desk?: ReviewDesk,
): Record<string, unknown> {
  return {
    review_id: r.review_id,
    claim_id: r.claim_id,
    dfid: r.dfid,
    origin: r.origin,
    status: r.status,
    reason_code: r.reason_code,
    reason: r.reason,
    ...(r.order_id ? { order_id: r.order_id } : {}),
    ...knownAmountFields(r.amount_eur, r.currency),
    requested_at: r.requested_at,
    ...deskFields(r, desk),
    ...(r.simulation_id ? { simulation_id: r.simulation_id } : {}),
    ...(r.verdict_id ? { verdict_id: r.verdict_id } : {}),
    ...(context.label ? { label: context.label } : {}),
    ...(context.claim ? { claim: context.claim } : {}),
    ...(context.claimText !== undefined ? { claim_text: context.claimText } : {}),
    ...(context.proposal !== undefined ? { proposal: context.proposal } : {}),
    ...(context.verdict
      ? { verdict: context.verdict.verdict, layer: context.verdict.layer, checks: context.verdict.checks }
      : {}),
    ...decisionFields(r),
    ...(r.status === "APPROVED" && r.approved_amount_eur !== undefined ? approvedFields(r) : {}),
    ...(r.resubmitted_claim_id ? { resubmitted_claim_id: r.resubmitted_claim_id } : {}),
    ...approvalFields(r),
    ...(context.facts ?? {}),
  };
}

export { reviewFacts } from "./review-facts.ts";
export type { ReviewFactsInput } from "./review-facts.ts";

/** Why a decision cannot be taken, as the API answers it (409 or 400). */
export type ReviewRefusal =
  | {
      status: 409;
      code:
        | "NO_PENDING_REVIEW"
        | "REVIEW_ALREADY_DECIDED"
        | "REVIEW_CHANGED"
        | "DECISION_NOT_ALLOWED"
        | "SAME_REVIEWER"
        | "TAKEN_BY"
        | "APPROVAL_LIMIT";
      message: string;
    }
  | { status: 400; code: "INVALID_AMOUNT" | "NOTE_REQUIRED"; message: string };

/**
 * The decision a review records, normalised so a repeat compares equal: APPROVE without an amount grants the
 * proposal's (a second approval: the first approval's); the reviewer is the one who decides.
 */
export function normaliseDecision(d: ReviewDecision, review: ReviewRecord, reviewer: string): ReviewDecision {
  return {
    decision: d.decision,
    ...(d.note !== undefined ? { note: d.note } : {}),
    reviewer,
    ...(d.decision === "APPROVE"
      ? { amount_eur: d.amount_eur ?? review.approvals?.[0]?.amount_eur ?? review.amount_eur }
      : {}),
    ...(d.claim !== undefined ? { claim: d.claim } : {}),
  };
}

/** Whether `d` repeats the decision the review already took (or is taking). */
function sameDecision(d: ReviewDecision, review: ReviewRecord, reviewer: string): boolean {
  const taken =
    review.intent ??
    (review.decision
      ? {
          decision: review.decision,
          note: review.note,
          reviewer: review.reviewer,
          amount_eur: review.approved_amount_eur,
        }
      : undefined);
  if (!taken) return false;
  const wanted = normaliseDecision(d, review, reviewer);
  const strip = (x: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(x).filter(
        ([k, v]) =>
          v !== undefined &&
          k !== "claim" &&
          k !== "decided_at" &&
          k !== "approved_count" &&
          k !== "customer_approvals",
      ),
    );
  return (
    canonicalize(strip(wanted)) === canonicalize(strip(taken)) &&
    (d.decision !== "RESUBMIT" ||
      review.intent === undefined ||
      canonicalize(d.claim) === canonicalize(review.intent.claim))
  );
}

/** Who decides, and the rules of four eyes that apply to the review (docs/reviews.md). */
export interface DecisionRules {
  /** The reviewer deciding (the authenticated identity's id). */
  reviewer: string;
  /** An APPROVE above this many EUR is a first approval awaiting a different reviewer's (`claims_bounds.second_approval_above_eur`). */
  secondApprovalAboveEur?: number | undefined;
  /** Each other currency's four-eyes bound in its minor units (`currencies.<C>.second_approval_above`): review-currency.ts. */
  secondApprovalAboveMinor?: Readonly<Record<string, number>> | undefined;
  /** The reviewer who RESUBMITted the claim under review, when it is a resubmitted claim: they cannot approve it. */
  resubmittedBy?: string | undefined;
  /**
   * What this reviewer alone already approved on the order, in cents: their approvals of its other claims that no
   * second reviewer approved, and their RETRYs of its failed refunds. Four eyes and the reviewer's limit are checked
   * on this plus the approval (docs/reviews.md#four-eyes).
   */
  approvedAloneCents?: number | undefined;
  /**
   * What this reviewer alone approved for the order's customer across their orders in the customer window, in cents
   * (when `claims_bounds.customer_limits` applies): four eyes is checked on this plus the approval too.
   */
  customerAloneCents?: number | undefined;
  /** The reviewer's own limit in EUR (`max_approval`, docs/reviews.md#reviewer-limits); absent: none. */
  maxApprovalEur?: number | undefined;
}

/**
 * Whether a review's refund was approved by `reviewer` alone: decided APPROVED with them as the only approver, or
 * their approval being carried out (an intent) with no first approval beside it.
 */
export function approvedAloneBy(review: ReviewRecord | undefined, reviewer: string): boolean {
  if (!review) return false;
  if (review.status === "APPROVED") {
    const approvers = new Set((review.approvals ?? []).map((a) => a.reviewer));
    if (review.reviewer) approvers.add(review.reviewer);
    return approvers.size === 1 && approvers.has(reviewer);
  }
  return (
    review.status === "PENDING" &&
    review.intent?.decision === "APPROVE" &&
    review.intent.reviewer === reviewer &&
    (review.approvals ?? []).every((a) => a.reviewer === reviewer)
  );
}

/** Whether a note is given (a blank one is none). */
function hasNote(d: ReviewDecision): boolean {
  return d.note !== undefined && d.note.trim() !== "";
}

/**
 * Checks a decision against the review before anything is written: decided reviews answer the stored
 * decision (a repeat) or 409; DENY, and APPROVE of less than proposed, need a note; APPROVE only on an
 * ESCALATE review, for more than 0 and at most the proposed amount (a second approval: at most the first's),
 * never by the reviewer who resubmitted the claim nor twice by one reviewer; RESUBMIT only on a NEEDS_REVIEW
 * review. Returns undefined when the decision may go ahead, FIRST_APPROVAL when an APPROVE above the four-eyes
 * bound is to be recorded as the first of two.
 */
export function checkDecision(
  d: ReviewDecision,
  review: ReviewRecord,
  rules: DecisionRules,
): ReviewRefusal | "REPEAT" | "FIRST_APPROVAL" | undefined {
  if (review.status !== "PENDING" || review.intent !== undefined) {
    if (sameDecision(d, review, rules.reviewer)) return "REPEAT";
    const stored = review.decision ?? review.intent?.decision;
    return review.status === "PENDING" && stored === undefined
      ? { status: 409, code: "NO_PENDING_REVIEW", message: `review ${review.review_id} is not pending` }
      : {
          status: 409,
          code: "REVIEW_ALREADY_DECIDED",
          message: `review ${review.review_id} was already decided: ${stored}${review.reviewer ? ` by ${review.reviewer}` : ""}`,
        };
  }
  if (d.decision === "DENY" && !hasNote(d))
    return { status: 400, code: "NOTE_REQUIRED", message: "a DENY needs a note saying why (the customer is told)" };
  if (d.decision === "APPROVE" && review.origin !== "ESCALATE") {
    return {
      status: 409,
      code: "DECISION_NOT_ALLOWED",
      message:
        "APPROVE is for escalated claims; a claim that needs review can be denied or resubmitted with a corrected claim",
    };
  }
  if (d.decision === "RESUBMIT" && review.origin !== "NEEDS_REVIEW") {
    return {
      status: 409,
      code: "DECISION_NOT_ALLOWED",
      message: "RESUBMIT is for claims that need review; an escalated claim can be approved or denied",
    };
  }
  if (d.decision !== "APPROVE") return undefined;
  return checkApproval(d, review, rules);
}

/** The APPROVE-only rules of `checkDecision`, on a PENDING escalation. */
function checkApproval(
  d: ReviewDecision,
  review: ReviewRecord,
  rules: DecisionRules,
): ReviewRefusal | "FIRST_APPROVAL" | undefined {
  // Every amount in the minor units of the review's currency (the order's; EUR before currencies): cents, yen, fils.
  const currency = review.currency ?? "EUR";
  const inMinor = (v: unknown) => minorIn(v, currency);
  const proposed = inMinor(review.amount_eur);
  if (!proposed.ok || proposed.cents <= 0)
    return {
      status: 409,
      code: "DECISION_NOT_ALLOWED",
      message: "this escalation carries no refundable amount to approve",
    };
  if (rules.resubmittedBy !== undefined && rules.resubmittedBy === rules.reviewer)
    return {
      status: 409,
      code: "SAME_REVIEWER",
      message: `${rules.reviewer} resubmitted this claim; a different reviewer must approve it`,
    };
  const first = review.approvals?.[0];
  if (first && first.reviewer === rules.reviewer)
    return {
      status: 409,
      code: "SAME_REVIEWER",
      message: `${rules.reviewer} already gave the first approval; a different reviewer must give the second`,
    };
  const ceiling = first ? inMinor(first.amount_eur) : proposed;
  const ceilingCents = ceiling.ok ? ceiling.cents : proposed.cents;
  const amount = d.amount_eur ?? first?.amount_eur ?? review.amount_eur;
  const granted = inMinor(amount);
  if (!granted.ok) return { status: 400, code: "INVALID_AMOUNT", message: `amount_eur: ${granted.message}` };
  if (granted.cents <= 0) return { status: 400, code: "INVALID_AMOUNT", message: "amount_eur must be more than 0" };
  if (granted.cents > ceilingCents)
    return {
      status: 400,
      code: "INVALID_AMOUNT",
      message: first
        ? `amount_eur may not exceed the first approval's ${first.amount_eur} EUR`
        : `amount_eur may not exceed the proposed ${review.amount_eur} EUR`,
    };
  if (granted.cents < proposed.cents && !hasNote(d))
    return {
      status: 400,
      code: "NOTE_REQUIRED",
      message: `approving less than the proposed ${review.amount_eur} EUR needs a note saying why (the customer is told)`,
    };
  // Four eyes per order: what this reviewer alone approved on it, plus this approval; max_approval is in EUR, so an
  // approval in another currency is over it (a reviewer without a limit decides it).
  const total = (rules.approvedAloneCents ?? 0) + granted.cents;
  const limit = minorIn(rules.maxApprovalEur, "EUR");
  const overLimit = limit.ok && (currency !== "EUR" || total > limit.cents);
  if (first)
    return overLimit
      ? {
          status: 409,
          code: "APPROVAL_LIMIT",
          message: `${rules.reviewer} approves up to ${rules.maxApprovalEur} EUR on an order; this approval would make it ${currency === "EUR" ? `${formatEur(total)} EUR` : `an amount in ${currency}`}: a reviewer whose limit covers it must approve`,
        }
      : undefined;
  const bound = fourEyesBound(rules, currency);
  // Four eyes per customer: what they alone approved for the order's customer in the window, plus this approval.
  const customerTotal = (rules.customerAloneCents ?? 0) + granted.cents;
  const aboveBound = bound !== undefined && (total > bound || customerTotal > bound);
  return aboveBound || overLimit ? "FIRST_APPROVAL" : undefined;
}

/** An approved review's amount in its currency (`approved_amount`), beside `approved_amount_eur` for EUR. */
function approvedFields(r: ReviewRecord): { approved_amount?: Amount; approved_amount_eur?: number } {
  const { amount, amount_eur } = knownAmountFields(r.approved_amount_eur, r.currency);
  return {
    ...(amount ? { approved_amount: amount } : {}),
    ...(amount_eur !== undefined ? { approved_amount_eur: amount_eur } : {}),
  };
}
