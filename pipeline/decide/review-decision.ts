// A reviewer's decision, apart from its I/O: the intent claimed on the review, whether an approval passes the
// reject checks against the order and the ledger as they stand, the review as recorded once decided, what a
// decided review announces and what is repeated once it is recorded, and the answer the API gives.
import { refundReleased, toMinor, type LedgerEntry, type ReserveResult } from "../../core/kernel/index.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { knownAmountFields, withoutAmountEur } from "../../core/kernel/public-amount.ts";
import { busEntry } from "../../core/kernel/events.ts";
import type { BusEntry } from "../../core/kernel/events.ts";
import { decideClaim } from "../../core/kernel/kernel.ts";
import { approvalExecutionIdFor, resubmittedClaimIdFor, reviewView } from "../../core/kernel/review.ts";
import type { normaliseDecision, ReviewApproval, ReviewerIdentity, ReviewRecord } from "../../core/kernel/review.ts";
import { KernelInputError } from "../../core/integrity/index.ts";
import { parseMoney, toMajor, type MoneyParse } from "../../core/kernel/money.ts";
import { readOrder } from "../../core/kernel/order-view.ts";
import { refundableOf } from "../../core/kernel/policy.ts";
import type { Order } from "../../core/integrity/index.ts";
import { claimAudit } from "./audit.ts";
import { inReturnFlow } from "./returns.ts";
import { bindingDecisionOf } from "./binding-decision.ts";
import type { PipelineDeps } from "../deps.ts";
import type { Effect } from "../effects.ts";
import type * as z from "zod";
import { toInputIssues } from "./intake.ts";
import type { InputIssue } from "./intake.ts";

/** What an approval's checks read beyond the claim and the review: the agent's contracts and the registry. */
export type ApprovalPolicy = Pick<PipelineDeps, "agent" | "registry">;

/** A decision claimed on a review, with the instant it was claimed. */
type Intent = NonNullable<ReviewRecord["intent"]>;

/** The refusal of a body `reviewer` naming someone other than the authenticated reviewer `by` (400), if it does. */
export function reviewerMismatch(
  named: string | undefined,
  by: ReviewerIdentity | undefined,
): { ok: false; status: 400; code: "REVIEWER_MISMATCH"; message: string } | undefined {
  if (!by || named === undefined || named === by.id || named === by.name) return undefined;
  return {
    ok: false,
    status: 400,
    code: "REVIEWER_MISMATCH",
    message: `the body names reviewer ${named}, but the credential is ${by.id}'s: the decision is recorded under the credential's reviewer (leave reviewer out)`,
  };
}

/** The decision claimed on the review at `now` (normalised, so a repeat compares equal). */
export function intentFor(
  decision: ReturnType<typeof normaliseDecision>,
  now: number,
  approvedCount?: number | undefined,
  customerApprovals?: number | undefined,
): Intent {
  const approve = decision.decision === "APPROVE";
  return {
    ...decision,
    decided_at: new Date(now).toISOString(),
    ...(approve && approvedCount !== undefined ? { approved_count: approvedCount } : {}),
    ...(approve && customerApprovals !== undefined ? { customer_approvals: customerApprovals } : {}),
  };
}

/** The review with its intent withdrawn: a decision that could not be carried out leaves it PENDING. */
export function withdrawn(review: ReviewRecord): ReviewRecord {
  return { ...review, intent: undefined, version: review.version + 1 };
}

/** A refusal of an approval, as the API answers it (409 with the code). */
export type ApprovalRefusal = { ok: false; code: string; message: string };

/** Why the review cannot be approved whatever the order says, or `undefined`: the order to check is `review.order_id`. */
export function notApprovable(record: ClaimRecord, review: ReviewRecord): ApprovalRefusal | undefined {
  if (!record.claim || review.proposal === undefined || !review.order_id)
    return { ok: false, code: "DECISION_NOT_ALLOWED", message: "this review carries no proposal to approve" };
  return undefined;
}

/** An approval that passed its checks: the refund to reserve on the order. */
export type ApprovalChecked = { ok: true; order: Order; cents: number; orderCents: number } | ApprovalRefusal;

/**
 * The reject checks (layers 1–8b) run again on the escalated proposal for `amountEur` against the order and its
 * ledger entry as they stand now, with the escalation checks lifted; validity (layer 2) as the kernel saw the
 * proposal: a person taking time to decide does not expire it.
 */
export function approvalChecks(
  a: {
    record: ClaimRecord;
    review: ReviewRecord;
    amountEur: number;
    order: Order | undefined;
    ledgerEntry: LedgerEntry | undefined;
  },
  policy: ApprovalPolicy,
): ApprovalChecked {
  const { record, review, order } = a;
  const refused = notApprovable(record, review);
  if (refused) return refused;
  if (!order)
    return {
      ok: false,
      code: "ORDER_NOT_FOUND",
      message: `the shop has no order ${review.order_id}: its order source does not know it`,
    };
  // Minor units of the order's currency (cents for EUR, as always); amount_eur is the amount's name from before currencies.
  const reading = readOrder(order);
  const currency = reading.ok ? reading.view.currency : "EUR";
  const cents = minorOf(parseMoney(a.amountEur, currency));
  if (!cents.ok)
    return {
      ok: false,
      code: "ORDER_NOT_FOUND",
      message: `the shop has no order ${review.order_id}: its order source does not know it`,
    };
  const orderCents = reading.ok
    ? { ok: true as const, cents: refundableOf(reading.view, policy.agent.contract).minor }
    : { ok: false as const, message: reading.problem };
  // Carried out before (a repair after a crash): the claim's reservation was made, then released by a CLOSE of its
  // failed refund. The checks are not run again on a ledger that no longer holds it; the ledger refuses to reserve
  // the claim again, and approvalReserved takes that refusal as the approval's own (issue 39).
  if (refundReleased(a.ledgerEntry, record.claim_id) && orderCents.ok)
    return { ok: true, order, cents: cents.cents, orderCents: orderCents.cents };
  let verdict;
  try {
    verdict = decideClaim({
      proposal: review.proposal,
      claim: record.claim!,
      contract: policy.agent.contract,
      responsibility: policy.agent.responsibility,
      registry: { agents: policy.registry.agents },
      order,
      ledgerEntry: a.ledgerEntry,
      receivedAt: record.received_at,
      decidedAt: review.verdict_decided_at ?? record.received_at,
      claimId: record.claim_id,
      dfid: record.dfid,
      approval: { amountEur: toMajor({ minor: cents.cents, currency }) },
    });
  } catch (error) {
    if (error instanceof KernelInputError) return { ok: false, code: "ORDER_DATA_INVALID", message: error.message };
    throw error;
  }
  if (verdict.verdict !== "ACCEPT") return { ok: false, code: verdict.reason_code, message: verdict.reason };
  if (!orderCents.ok)
    return { ok: false, code: "ORDER_DATA_INVALID", message: `order ${order.order_id}: ${orderCents.message}` };
  return { ok: true, order, cents: cents.cents, orderCents: orderCents.cents };
}

/**
 * What the ledger's answer to an approval's reservation means: reserved (or this claim's own, a repeat; or this
 * claim's released one — the approval was carried out before, its refund failed and was CLOSEd since) or refused.
 */
export function approvalReserved(
  result: ReserveResult,
  claimId: string,
  cents: number,
): { ok: true } | ApprovalRefusal {
  if (result.ok) return { ok: true };
  if (result.code === "ALREADY_REFUNDED_FOR_CLAIM" && result.entry.claims[claimId] === cents) return { ok: true };
  if (result.code === "ALREADY_REFUNDED_FOR_CLAIM" && refundReleased(result.entry, claimId)) return { ok: true };
  return {
    ok: false,
    code:
      result.code === "EXCEEDS_ORDER_AMOUNT" || result.code === "EXCEEDS_LINE_AMOUNT"
        ? "EXCEEDS_REFUNDABLE_BALANCE"
        : result.code,
    message: result.message,
  };
}

/** The corrected claim a RESUBMIT submits, under ids derived from the review so a repeat submits it once. */
export function resubmission(
  record: ClaimRecord,
  review: ReviewRecord,
): { body: Record<string, unknown>; opts: { claimId: string; idempotencyKey: string; parentClaimId: string } } {
  return {
    body: {
      claim: review.intent?.claim,
      ...(record.simulation_id ? { simulation_id: record.simulation_id } : {}),
      ...(record.label ? { label: `${record.label} (resubmitted)` } : {}),
    },
    opts: {
      claimId: resubmittedClaimIdFor(review.review_id),
      idempotencyKey: `resubmit:${review.review_id}`,
      parentClaimId: record.claim_id,
    },
  };
}

/**
 * The review as recorded once its claimed decision is carried out, decided at the instant it was claimed (an
 * intent from before it carried one: `now`), so a repair announces the same events. `resubmittedClaimId` is
 * the corrected claim of a RESUBMIT.
 */
export function decidedReview(review: ReviewRecord, now: number, resubmittedClaimId?: string): ReviewRecord {
  const { decided_at: claimedAt, approved_count: _count, ...intent } = review.intent!;
  const decidedAt = claimedAt ?? new Date(now).toISOString();
  const base = {
    ...review,
    intent: undefined,
    awaiting: undefined,
    taken_by: undefined,
    taken_until: undefined,
    decision: intent.decision,
    decided_at: decidedAt,
    reviewer: intent.reviewer ?? "reviewer",
    ...(intent.note !== undefined ? { note: intent.note } : {}),
    version: review.version + 1,
  };
  if (intent.decision === "APPROVE")
    return {
      ...base,
      status: "APPROVED",
      approved_amount_eur: intent.amount_eur!,
      execution_id: approvalExecutionIdFor(review.review_id),
      approvals: [
        ...(review.approvals ?? []),
        { reviewer: base.reviewer, amount_eur: intent.amount_eur!, at: decidedAt },
      ],
    };
  if (intent.decision === "RESUBMIT")
    return { ...base, status: "RESUBMITTED", resubmitted_claim_id: resubmittedClaimId };
  return { ...base, status: "DENIED" };
}

/** What a decided review announces: the audit, ReviewDecided (and RefundExecuted for an approval), the ledger's review mark cleared, the claim's record. */
export function reviewDecidedEffects(record: ClaimRecord, review: ReviewRecord): Effect[] {
  const at = Date.parse(review.decided_at!);
  const decided = {
    review_id: review.review_id,
    claim_id: review.claim_id,
    dfid: review.dfid,
    decision: review.decision!,
    reviewer: review.reviewer ?? "reviewer",
    ...(review.note !== undefined ? { note: review.note } : {}),
    ...(review.approved_amount_eur !== undefined ? { amount_eur: review.approved_amount_eur } : {}),
    ...(review.execution_id ? { execution_id: review.execution_id } : {}),
    ...(review.resubmitted_claim_id ? { resubmitted_claim_id: review.resubmitted_claim_id } : {}),
    ...(review.status === "APPROVED" && review.approvals?.length ? { approvals: review.approvals } : {}),
    decided_at: review.decided_at!,
    ...(review.simulation_id ? { simulation_id: review.simulation_id } : {}),
  };
  // A four-eyes approval's first approval is audited again (identical, so dropped): a crash after it was recorded
  // on the review and before its audit is repaired here.
  const effects: Effect[] = firstApprovalEffects(record, review);
  const events: BusEntry[] = [];
  if (review.status === "APPROVED") {
    const refund = {
      execution_id: review.execution_id!,
      claim_id: review.claim_id,
      dfid: review.dfid,
      order_id: review.order_id!,
      amount_eur: review.approved_amount_eur!,
      verdict_id: review.verdict_id!,
      approved_by: review.reviewer ?? "reviewer",
      ...(review.simulation_id ? { simulation_id: review.simulation_id } : {}),
    };
    // The approved amount was checked in the order's minor units when the review was decided (its currency kept on
    // the review then: EUR's cents, whole yen, fils).
    effects.push({
      kind: "audit",
      event: claimAudit(record, "CLAIM_REFUND_EXECUTED", "DECIDED", at, {
        ...refund,
        amount_cents: toMinor(refund.amount_eur, review.currency ?? "EUR"),
      }),
    });
    events.push(
      busEntry("RefundExecuted", {
        ...withoutAmountEur(refund),
        ...knownAmountFields(refund.amount_eur, review.currency),
      }),
    );
  }
  // The state is the claim's final one, known from the origin: the claim's record may still be on its way there
  // (read while the kernel or the extraction had not yet recorded it), and a repeat must audit the same event.
  effects.push({
    kind: "audit",
    event: claimAudit(record, "REVIEW_DECIDED", review.origin === "ESCALATE" ? "DECIDED" : "NEEDS_REVIEW", at, decided),
  });
  // The bus carries the amounts in their currency (docs/events.md); the audit keeps the details as recorded before.
  events.push(
    busEntry("ReviewDecided", {
      ...withoutAmountEur(decided),
      ...knownAmountFields(review.approved_amount_eur, review.currency),
    }),
  );
  if (review.order_id) effects.push(reviewClosed(review, review.order_id));
  // A claim whose return went to a person (docs/returns.md) still holds its reserved refund: a DENY or a RESUBMIT
  // (the corrected claim reserves its own) releases it, so the order's balance is free again.
  if (record.return && (review.status === "DENIED" || review.status === "RESUBMITTED"))
    effects.push({
      kind: "refund_released",
      orderId: record.return.order_id,
      claimId: record.claim_id,
      ...(record.simulation_id ? { scope: record.simulation_id } : {}),
    });
  effects.push({ kind: "publish", entries: events });
  // A return's review (docs/returns.md) is audited under the return's flow, where it was opened.
  if (record.return?.outcome === "REVIEW") return finishWith(inReturnFlow(record.claim_id, effects), record, review);
  return finishWith(effects, record, review);
}

/** The decided review's effects, with the claim's record marked executed after an approval. */
function finishWith(effects: Effect[], record: ClaimRecord, review: ReviewRecord): Effect[] {
  if (review.status === "APPROVED")
    effects.push({
      kind: "claim_update",
      claimId: record.claim_id,
      patch: { executed: true, updated_at: review.decided_at! },
      onlyFrom: ["DECIDED"],
    });
  return effects;
}

/** The review with `approval` recorded as the first of two: it stays PENDING awaiting a different reviewer's. */
export function firstApprovalRecorded(review: ReviewRecord, approval: ReviewApproval): ReviewRecord {
  // The first approver's lease ends with their approval: the second approval is another reviewer's to take.
  const { taken_by: _by, taken_until: _until, ...rest } = review;
  return { ...rest, approvals: [approval], awaiting: "SECOND_APPROVAL", version: review.version + 1 };
}

/** The audit of a review's first approval under four eyes (none when it has none); it publishes nothing. */
export function firstApprovalEffects(record: ClaimRecord, review: ReviewRecord): Effect[] {
  const first = review.approvals?.[0];
  if (!first || (review.status === "PENDING" && review.awaiting === undefined)) return [];
  if (review.status === "APPROVED" && (review.approvals?.length ?? 0) < 2) return [];
  return [
    {
      kind: "audit",
      event: claimAudit(record, "REVIEW_APPROVAL_RECORDED", "DECIDED", Date.parse(first.at), {
        review_id: review.review_id,
        reviewer: first.reviewer,
        amount_eur: first.amount_eur,
        at: first.at,
        awaiting: "SECOND_APPROVAL",
        ...(review.simulation_id ? { simulation_id: review.simulation_id } : {}),
      }),
    },
  ];
}

/**
 * Once the decided review is recorded, two effects are repeated for the kernel's sake: the review's ledger mark
 * cleared (a review_open repeated meanwhile may have set it again), and an approval's `executed` (the kernel may
 * have recorded the claim DECIDED only now; it sets `executed` itself when it sees the approval recorded, so one
 * of the two always does).
 */
export function recordedReviewEffects(record: ClaimRecord, review: ReviewRecord): Effect[] {
  return [
    ...(review.order_id ? [reviewClosed(review, review.order_id)] : []),
    ...(review.status === "APPROVED"
      ? [
          {
            kind: "claim_update" as const,
            claimId: record.claim_id,
            patch: { executed: true },
            onlyFrom: ["DECIDED" as const],
          },
        ]
      : []),
  ];
}

function reviewClosed(review: ReviewRecord, orderId: string): Effect {
  const decision = bindingDecisionOf(review);
  return {
    kind: "review_closed",
    orderId,
    claimId: review.claim_id,
    ...(review.simulation_id ? { scope: review.simulation_id } : {}),
    ...(decision ? { decision } : {}),
  };
}

/** Whether `stored` (the review read again) still carries the intent `next` was decided from, at `next`'s base version. */
function stillClaimed(stored: ReviewRecord | undefined, next: ReviewRecord): boolean {
  const intent = stored?.intent;
  return (
    stored?.status === "PENDING" &&
    stored.version === next.version - 1 &&
    intent !== undefined &&
    (intent.decided_at === undefined || intent.decided_at === next.decided_at) &&
    intent.decision === next.decision &&
    (intent.reviewer ?? "reviewer") === next.reviewer
  );
}

/**
 * Before `next` is announced, the review read again (`stored`): `undefined` while it still carries the intent `next`
 * was decided from. Otherwise the carrier announces nothing of its own — its intent was withdrawn and claimed again
 * meanwhile (a stale repair, a repeat racing a request), and an approval's reservation it found may be the newer
 * decision's (the chaos runs on the emulators: `ReviewDecided` published twice with different details). It answers
 * the decision as another carrier of the same intent recorded it (announced again, identical), else 409 REVIEW_CHANGED.
 */
export function staleCarrier(
  record: ClaimRecord,
  next: ReviewRecord,
  stored: ReviewRecord | undefined,
):
  | undefined
  | readonly [
      { ok: true; body: ReviewAnswer } | { ok: false; status: 409; code: "REVIEW_CHANGED"; message: string },
      Effect[],
    ] {
  if (stillClaimed(stored, next)) return undefined;
  if (
    stored &&
    stored.status !== "PENDING" &&
    stored.decision === next.decision &&
    stored.decided_at === next.decided_at
  )
    return [{ ok: true, body: reviewAnswer(record, stored) }, reviewDecidedEffects(record, stored)];
  const message = `review of claim ${record.claim_id} changed while this decision was carried out; read it again`;
  return [{ ok: false, status: 409, code: "REVIEW_CHANGED", message }, []];
}

/** The answer to a review decision: the review as decided, and whether the claim's refund was made. */
export interface ReviewAnswer {
  claim_id: string;
  review: Record<string, unknown>;
  executed: boolean;
  execution_id?: string;
  resubmitted_claim_id?: string;
}

/**
 * The outcomes every review request can have, whichever review it decides (a claim's or a failed refund's): the
 * answer, a body that does not parse, an unknown claim, a body naming another reviewer than the authenticated one.
 */
export type ReviewRequestOutcome =
  | { ok: true; body: ReviewAnswer }
  | { ok: false; status: 400; code: "INVALID_INPUT"; message: string; issues: InputIssue[] }
  | { ok: false; status: 400; code: "REVIEWER_MISMATCH"; message: string }
  | { ok: false; status: 404; code: "NOT_FOUND"; message: string };

/** The answer to a review decision whose body does not parse: 400 naming every problem. */
export function invalidReviewDecision(error: z.ZodError): ReviewRequestOutcome {
  return {
    ok: false,
    status: 400,
    code: "INVALID_INPUT",
    message: "the review decision is invalid",
    issues: toInputIssues(error),
  };
}

/** The answer for the claim's decided review. */
export function reviewAnswer(record: ClaimRecord, review: ReviewRecord): ReviewAnswer {
  return {
    claim_id: record.claim_id,
    review: reviewView(review),
    executed: review.status === "APPROVED" || record.executed === true,
    ...(review.execution_id ? { execution_id: review.execution_id } : {}),
    ...(review.resubmitted_claim_id ? { resubmitted_claim_id: review.resubmitted_claim_id } : {}),
  };
}

/** The record without its undefined fields (what the repository stores). */
export function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** A parsed amount as minor units, the shape the approval's checks keep. */
function minorOf(parsed: MoneyParse): { ok: true; cents: number } | { ok: false } {
  return parsed.ok ? { ok: true, cents: parsed.money.minor } : { ok: false };
}
