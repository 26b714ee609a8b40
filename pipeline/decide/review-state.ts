// Where a review request stands between its decider's steps (decide/review.ts): the request as parsed, claimed on
// the claim, attempted on the review as read, carried out; and the outcomes a review request can have.
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { ReviewDecisionSchema } from "../../core/kernel/review.ts";
import type { DecisionRules, ReviewerIdentity, ReviewRecord, ReviewRefusal } from "../../core/kernel/review.ts";
import type { ORDER_SOURCE_UNAVAILABLE } from "../../core/kernel/reason-codes.ts";
import type { Order } from "../../core/integrity/index.ts";
import type { PipelineDeps } from "../deps.ts";
import type { SubmissionState } from "./intake.ts";
import type { RefundReviewState } from "./refund-review.ts";
import type { ReviewRequestOutcome } from "./review-decision.ts";
import type { normaliseDecision } from "../../core/kernel/review.ts";
import type { ApprovalCheckState } from "./approval-check.ts";
import type { Next, Step } from "./step.ts";

/** The outcome of a review decision, as `POST /claims/{id}/review` answers it. */
export type ReviewResult =
  | ReviewRequestOutcome
  | ({ ok: false } & ReviewRefusal)
  | { ok: false; status: 409; code: string; message: string }
  /** The order source cannot answer now: nothing changed, the reviewer tries again later. */
  | { ok: false; status: 503; code: typeof ORDER_SOURCE_UNAVAILABLE; message: string };

/** What review decides with: the agent's contracts and review rules, the registry, whether refunds are paid here. */
export type ReviewPolicy = Pick<PipelineDeps, "agent" | "registry"> & { settlements: boolean };

export type Decision = ReturnType<typeof ReviewDecisionSchema.parse>;
/** The request, parsed, by its reviewer (and their approval limit, when they have one). */
export type Asked = { claimId: string; body: Decision; reviewer: string; maxApprovalEur?: number | undefined };
/**
 * The request with the claim it is about and the rules its decision is checked by; for an approval, the order's
 * approved count its four-eyes total was read with (the reservation is conditional on it).
 */
export type Claimed = Asked & {
  record: ClaimRecord;
  rules: DecisionRules;
  approvedCount?: number | undefined;
  /** Four eyes per customer: the customer window's approved count the total was read with. */
  customerApprovals?: number | undefined;
};
/** An attempt at the decision, on the review as read. */
export type Attempt = Claimed & {
  attempt: number;
  review: ReviewRecord;
  decision: ReturnType<typeof normaliseDecision>;
  /** A first approval under four eyes: recorded on the review, it awaits a second reviewer's. */
  first: boolean;
};
/**
 * Carrying out the decision claimed on the review, from the instant it is carried out; an approval decided in this
 * request carries the order's approved count and the attempt to decide again from if another approval landed.
 */
export type Carrying = { record: ClaimRecord; review: ReviewRecord; now: number; again?: Attempt | undefined };

/** Where a review request stands. */
export type ReviewState =
  | { at: "refund"; refund: RefundReviewState; claimId: string; body: unknown; by: ReviewerIdentity | undefined }
  | { at: "claim"; asked: Asked }
  /** The parent claim's review: who decided it (a resubmitted claim's approval is four-eyes with it). */
  | { at: "parent"; asked: Asked; record: ClaimRecord }
  | { at: "review"; claimed: Claimed; attempt: number }
  /** Four eyes per order: what the reviewer alone approved on the order, read before the decision is checked. */
  | { at: "alone"; claimed: Claimed; attempt: number; review: ReviewRecord }
  | { at: "precheck"; attempt: Attempt; check: ApprovalCheckState }
  /** Four eyes per customer: the instant, then the customer's window, read once the approval passed its checks. */
  | { at: "customer_now"; attempt: Attempt; customerId: string }
  | { at: "customer_alone"; attempt: Attempt; now: number }
  | { at: "first_at"; attempt: Attempt }
  | { at: "first_recorded"; attempt: Attempt }
  | { at: "intent_at"; attempt: Attempt }
  | { at: "intent_claimed"; attempt: Attempt }
  | { at: "repair_claim"; review: ReviewRecord }
  | { at: "carry_time"; record: ClaimRecord; review: ReviewRecord; again?: Attempt | undefined }
  | { at: "approval"; carrying: Carrying; check: ApprovalCheckState }
  /** The approved refund recorded on the customer's window first (when customer limits apply), then on the order. */
  | { at: "customer_reserved"; carrying: Carrying; cents: number; order: Order; orderCents: number; customerId: string }
  | { at: "reserved"; carrying: Carrying; cents: number; customerId?: string | undefined }
  | { at: "customer_released"; carrying: Carrying; result: ReviewResult; raced: boolean }
  | { at: "resubmitted"; carrying: Carrying; submission: SubmissionState }
  | { at: "withdrawn"; result: ReviewResult; again?: Attempt | undefined }
  /** The review read again before its decision is announced: still claimed by the intent this carrier carried out? */
  | { at: "announcing"; record: ClaimRecord; next: ReviewRecord }
  | { at: "recorded"; record: ClaimRecord; next: ReviewRecord };

export type Outcome<O, S> = Step<Next<O, S>>;
export type ReviewStep = Outcome<ReviewResult | undefined, ReviewState>;
