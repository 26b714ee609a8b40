// Human review (docs/reviews.md): listing reviews and deciding one — APPROVE (the reject checks again, then the refund reserved exactly once through the same
// ledger as an ACCEPT), DENY, RESUBMIT (a corrected claim through the normal pipeline). A decision is
// claimed on the review first (an intent, conditional on its version), so a crash anywhere is repaired by
// repeating the same decision (or by the sweep) and a different decision is refused with 409.
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { isFinal } from "../core/kernel/claim-record.ts";
import {
  approvedAloneBy,
  checkDecision,
  normaliseDecision,
  ReviewDecisionSchema,
  reviewFacts,
  takenByRefusal,
} from "../core/kernel/review.ts";
import type {
  DecisionRules,
  ReviewContext,
  ReviewerIdentity,
  ReviewRecord,
  ReviewRefusal,
  ReviewStatus,
} from "../core/kernel/review.ts";
import { OrderDataError } from "../core/integrity/index.ts";
import { customerLimitsCents, windowTotals } from "../core/kernel/customer-window.ts";
import { ORDER_SOURCE_UNAVAILABLE } from "../core/kernel/reason-codes.ts";
import { proposalOutputOf } from "../core/claim/proposal-output.ts";
import { refundRetryBlocked } from "../core/kernel/settlement.ts";
import { OrderSourceUnavailableError } from "./errors.ts";
import type { PipelineDeps } from "./deps.ts";
import {
  approvalChecks,
  approvalReserved,
  decidedReview,
  firstApprovalEffects,
  firstApprovalRecorded,
  intentFor,
  invalidReviewDecision,
  notApprovable,
  recordedReviewEffects,
  resubmission,
  reviewAnswer,
  reviewDecidedEffects,
  reviewerMismatch,
  stripUndefined,
  withdrawn,
} from "./decide/review-decision.ts";
import type { ApprovalChecked, ApprovalRefusal, ReviewRequestOutcome } from "./decide/review-decision.ts";
import { submitClaim } from "./intake.ts";
import { refundReviewListItem, refundReviewRequest } from "./refund-review.ts";
import { performEffects } from "./perform.ts";
import { reviewListKey } from "./ports.ts";
import { pendingReviewKey } from "./payments.ts";
import { readOrdersBounded } from "./order-reads.ts";
import { reviewDesk } from "./review-desk.ts";
import type { OrderRead } from "./order-reads.ts";

/** The outcome of a review decision, as `POST /claims/{id}/review` answers it. */
export type ReviewResult =
  | ReviewRequestOutcome
  | ({ ok: false } & ReviewRefusal)
  | { ok: false; status: 409; code: string; message: string }
  /** The order source cannot answer now: nothing changed, the reviewer tries again later. */
  | { ok: false; status: 503; code: typeof ORDER_SOURCE_UNAVAILABLE; message: string };

type ReviewDeps = Pick<
  PipelineDeps,
  | "claims"
  | "reviews"
  | "verdicts"
  | "orders"
  | "ledger"
  | "audit"
  | "publisher"
  | "queues"
  | "clock"
  | "ids"
  | "agent"
  | "registry"
  | "settlements"
>;

/**
 * Decides the claim's review as `by` asked (docs/reviews.md); idempotent, and nothing is written for a refused
 * request. `by` is the authenticated reviewer; a body `reviewer` naming anyone else is refused (400). Callers
 * without a credential (a simulation's scripted review steps, tests) leave `by` out: the body's `reviewer` then
 * names the simulated person (default `reviewer`).
 */
export async function decideReview(
  claimId: string,
  body: unknown,
  deps: ReviewDeps,
  by?: ReviewerIdentity,
): Promise<ReviewResult> {
  // A failed refund's review (RETRY / CLOSE) is decided on the claim's settlement (refund-review.ts).
  const refund = await refundReviewRequest(claimId, body, deps, by);
  if (refund) return refund;
  const parsed = ReviewDecisionSchema.safeParse(body);
  if (!parsed.success) return invalidReviewDecision(parsed.error);
  const named = parsed.data.reviewer;
  const mismatch = reviewerMismatch(named, by);
  if (mismatch) return mismatch;
  const reviewer = by?.id ?? named ?? "reviewer";
  const record = await deps.claims.getClaim(claimId);
  if (!record) return { ok: false, status: 404, code: "NOT_FOUND", message: `claim ${claimId} not found` };
  const base: DecisionRules = {
    reviewer,
    secondApprovalAboveEur: deps.agent.review?.secondApprovalAboveEur,
    ...(by?.maxApprovalEur !== undefined ? { maxApprovalEur: by.maxApprovalEur } : {}),
    ...(record.parent_claim_id && parsed.data.decision === "APPROVE"
      ? { resubmittedBy: (await deps.reviews.getReview(record.parent_claim_id))?.reviewer }
      : {}),
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    const review = await deps.reviews.getReview(claimId);
    if (!review)
      return {
        ok: false,
        status: 409,
        code: "NO_PENDING_REVIEW",
        message: `claim ${claimId} has no review${isFinal(record.status) ? "" : " (it is not final yet)"}`,
      };
    // Four eyes per order: what this reviewer alone approved on the order, and how many approvals it held then.
    const alone =
      parsed.data.decision === "APPROVE" && review.order_id
        ? await approvedAloneOnOrder(review.order_id, record, reviewer, deps)
        : undefined;
    const rules: DecisionRules = alone ? { ...base, approvedAloneCents: alone.cents } : base;
    // A first approval recorded earlier is audited again (identical, so dropped): repairs a crash before its audit.
    await performEffects(firstApprovalEffects(record, review), deps);
    // Taken at the desk by someone else: their decision to take (a repeat of a decision in progress goes on).
    if (review.status === "PENDING" && review.intent === undefined) {
      const taken = takenByRefusal(review, reviewer, deps.clock.now(), review.review_id);
      if (taken) return { ok: false, ...taken };
    }
    const check = checkDecision(parsed.data, review, rules);
    if (check !== undefined && check !== "REPEAT" && check !== "FIRST_APPROVAL") return { ok: false, ...check };
    if (check === "REPEAT" && review.status !== "PENDING") return finish(record, review, deps);
    const decision = normaliseDecision(parsed.data, review, reviewer);
    // An approval that cannot pass the reject checks now is refused before it claims anything, so another
    // reviewer's decision is not blocked by an approval that was going to fail.
    if (!review.intent && decision.decision === "APPROVE") {
      const precheck = await checkApproval(record, review, decision.amount_eur!, deps);
      if (!precheck.ok) return refusal(precheck);
    }
    if (check === "FIRST_APPROVAL") {
      const approval = { reviewer, amount_eur: decision.amount_eur!, at: new Date(deps.clock.now()).toISOString() };
      const update = await deps.reviews.updateReview(firstApprovalRecorded(review, approval));
      if (!update.changed) continue; // another decision got there first: look again
      await performEffects(firstApprovalEffects(record, update.review), deps);
      return { ok: true, body: reviewAnswer(record, update.review) };
    }
    // Claim the decision on the review (or go on with this same decision already claimed).
    let claimed = review;
    if (!review.intent) {
      const intent = intentFor(decision, deps.clock.now());
      const update = await deps.reviews.updateReview({ ...review, intent, version: review.version + 1 });
      if (!update.changed) continue; // another decision got there first: look again
      claimed = update.review;
    }
    const result = await carryOut(record, claimed, deps, alone?.approvedCount);
    // Another approval on the order landed since this one was decided: decide it again on the order as it is now.
    if (!result.ok && result.code === "APPROVALS_CHANGED" && attempt < 2) continue;
    return result;
  }
  return {
    ok: false,
    status: 409,
    code: "REVIEW_ALREADY_DECIDED",
    message: `review of claim ${claimId} is changing concurrently; try again`,
  };
}

/** Carries out the decision claimed on the review, then records it as decided. */
async function carryOut(
  record: ClaimRecord,
  review: ReviewRecord,
  deps: ReviewDeps,
  approvedCount?: number,
): Promise<ReviewResult> {
  const now = deps.clock.now();
  const intent = review.intent!;
  let next: ReviewRecord;
  if (intent.decision === "APPROVE") {
    const approved = await approve(record, review, intent.amount_eur!, deps, approvedCount);
    if (!approved.ok) {
      // The refund cannot be made: the review stays PENDING and nothing else changed.
      await deps.reviews.updateReview(withdrawn(review));
      return refusal(approved);
    }
    next = decidedReview(review, now);
  } else if (intent.decision === "RESUBMIT") {
    const { body, opts } = resubmission(record, review);
    const submitted = await submitClaim(body, opts, deps);
    if (!submitted.ok) {
      await deps.reviews.updateReview(withdrawn(review));
      return submitted.code === "INVALID_INPUT"
        ? {
            ok: false,
            status: 400,
            code: "INVALID_INPUT",
            message: submitted.message,
            issues: submitted.issues.map((i) => ({ ...i, path: `claim.${i.path}` })),
          }
        : { ok: false, status: 409, code: submitted.code, message: submitted.message };
    }
    next = decidedReview(review, now, submitted.claimId);
  } else {
    next = decidedReview(review, now);
  }
  // Announce first, then record: a crash in between is repaired by the same request (or the sweep) announcing again.
  await performEffects(reviewDecidedEffects(record, next), deps);
  const stored = await deps.reviews.updateReview(stripUndefined(next));
  await performEffects(recordedReviewEffects(record, next), deps);
  return { ok: true, body: reviewAnswer(record, stored.review ?? next) };
}

/**
 * What `reviewer` alone approved on the order so far (docs/reviews.md#four-eyes), in cents: each other claim holding
 * a reservation on it counts once when its review was approved by them alone or they RETRYed its failed refund;
 * with the number of approved reservations the order held, which the approval's reservation is conditional on.
 */
async function approvedAloneOnOrder(
  orderId: string,
  record: ClaimRecord,
  reviewer: string,
  deps: ReviewDeps,
): Promise<{ cents: number; approvedCount: number }> {
  const entry = await deps.ledger.get(orderId, record.simulation_id);
  if (!entry) return { cents: 0, approvedCount: 0 };
  const approved = new Set(entry.approved ?? []);
  const counted = await Promise.all(
    Object.entries(entry.claims)
      .filter(([id]) => id !== record.claim_id)
      .map(async ([id, cents]) => {
        const [review, settlement] = await Promise.all([
          approved.has(id) ? deps.reviews.getReview(id) : undefined,
          deps.settlements?.get(id),
        ]);
        const retried = settlement?.review?.decision === "RETRY" && settlement.review.reviewer === reviewer;
        return approvedAloneBy(review, reviewer) || retried ? cents : 0;
      }),
  );
  return { cents: counted.reduce((a, b) => a + b, 0), approvedCount: approved.size };
}

/** A refused approval as answered: 503 when the order source could not answer (try again), else 409 with the rule. */
function refusal(refused: ApprovalRefusal): ReviewResult {
  if (refused.code === ORDER_SOURCE_UNAVAILABLE)
    return { ok: false, status: 503, code: ORDER_SOURCE_UNAVAILABLE, message: refused.message };
  return { ok: false, status: 409, code: refused.code, message: refused.message };
}

/** A decided review answered again: its effects performed again (idempotent), then the stored result. */
async function finish(record: ClaimRecord, review: ReviewRecord, deps: ReviewDeps): Promise<ReviewResult> {
  await performEffects(reviewDecidedEffects(record, review), deps);
  return { ok: true, body: reviewAnswer(record, review) };
}

/**
 * The reject checks (layers 1–8b) run again on the escalated proposal against the ledger as it stands now,
 * with the escalation checks lifted; then the approved amount is reserved with the same single conditional
 * update as an ACCEPT — exactly once per claim, never above the order.
 */
async function approve(
  record: ClaimRecord,
  review: ReviewRecord,
  amountEur: number,
  deps: ReviewDeps,
  approvedCount?: number,
): Promise<{ ok: true } | ApprovalRefusal> {
  const checked = await checkApproval(record, review, amountEur, deps);
  if (!checked.ok) return checked;
  const { order, cents, orderCents } = checked;
  const result = await deps.ledger.reserve({
    orderId: order.order_id,
    claimId: record.claim_id,
    cents,
    orderCents,
    mode: { kind: "approved", ...(approvedCount !== undefined ? { approvedCount } : {}) },
    scope: record.simulation_id,
  });
  return approvalReserved(result, record.claim_id, cents);
}

/** Loads the order and its ledger entry as they stand now, then checks the approval of `amountEur` on them. */
async function checkApproval(
  record: ClaimRecord,
  review: ReviewRecord,
  amountEur: number,
  deps: ReviewDeps,
): Promise<ApprovalChecked> {
  const refused = notApprovable(record, review);
  if (refused) return refused;
  let order;
  try {
    order = await deps.orders.getOrder(review.order_id!);
  } catch (error) {
    if (error instanceof OrderDataError) return { ok: false, code: "ORDER_DATA_INVALID", message: error.message };
    if (error instanceof OrderSourceUnavailableError)
      return {
        ok: false,
        code: ORDER_SOURCE_UNAVAILABLE,
        message: `the shop's orders cannot be read now, so the approval cannot be checked; nothing changed, try again later (${error.message})`,
      };
    throw error;
  }
  const ledgerEntry = order ? await deps.ledger.get(order.order_id, record.simulation_id) : undefined;
  return approvalChecks({ record, review, amountEur, order, ledgerEntry }, deps);
}

/** One listed review with what a reviewer decides on: the claim's stored record and the kernel's stored verdict. */
type ReviewListEntry = { review: ReviewRecord; context: ReviewContext };

/**
 * Lists reviews with `status` (PENDING by default), oldest first, each with its context: the claim as stored
 * (structured or extracted, the free text, the proposal) and, for an escalation, the kernel's deciding layer
 * and checks from the stored verdict. Two reads per review, in parallel. A PENDING page also holds the failed
 * refunds' pending reviews (origin REFUND_FAILED, `refundReviews`): both are read by their own key, oldest first
 * by reviewListKey, merged, and `limit` of them make the page, so one cursor pages through both.
 */
export async function listReviews(
  query: {
    status?: ReviewStatus;
    limit?: number;
    cursor?: string;
    /** The bounds of the page's order reads (default LISTING_ORDER_READS). */
    orderReads?: Parameters<typeof readOrdersBounded>[2];
  },
  deps: Pick<PipelineDeps, "reviews" | "claims" | "verdicts" | "orders" | "ledger" | "settlements" | "agent" | "clock">,
): Promise<{ items: ReviewListEntry[]; refundReviews: Record<string, unknown>[]; nextCursor?: string }> {
  const status = query.status ?? "PENDING";
  const limit = query.limit ?? 50;
  const cursor = query.cursor ? { cursor: query.cursor } : {};
  const [claimPage, refundPage] = await Promise.all([
    deps.reviews.listReviews({ status, limit, ...cursor }),
    status === "PENDING" && deps.settlements
      ? deps.settlements.listPendingReviews({ limit, ...cursor })
      : { items: [], nextCursor: undefined },
  ]);
  const merged = [
    ...claimPage.items.map((review) => ({ key: reviewListKey(review.requested_at, review.claim_id), review })),
    ...refundPage.items.map((settlement) => ({ key: pendingReviewKey(settlement)!, settlement })),
  ].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const page = merged.slice(0, limit);
  const more = merged.length > limit || claimPage.nextCursor !== undefined || refundPage.nextCursor !== undefined;
  const reviews = page.flatMap((x) => ("review" in x ? [x.review] : []));
  const settlements = page.flatMap((x) => ("settlement" in x ? [x.settlement] : []));
  // The page's orders, each read once, bounded in count and time: one the shop cannot serve shows on its own item.
  const orders = await readOrdersBounded(
    deps.orders,
    [...reviews.flatMap((r) => (r.order_id ? [r.order_id] : [])), ...settlements.map((s) => s.order_id)],
    query.orderReads ?? {},
  );
  const items = await Promise.all(
    reviews.map(async (review): Promise<ReviewListEntry> => {
      const key = proposalKey(review.proposal);
      const [record, verdict, facts] = await Promise.all([
        deps.claims.getClaim(review.claim_id),
        key ? deps.verdicts.getVerdict(key) : undefined,
        factsOf(review, review.order_id ? orders.get(review.order_id) : undefined, deps),
      ]);
      const context: ReviewContext = {
        ...(record?.claim ? { claim: record.claim } : {}),
        ...(record && "claim_text" in record.input ? { claimText: record.input.claim_text } : {}),
        ...(record?.label ? { label: record.label } : {}),
        // The claim keeps its proposal from its final update on; an escalation's review (opened just before that
        // update) carries the proposal it was decided on, so the listing shows it even in between.
        ...proposalOf(record, review),
        ...(verdict && verdict.claim_id === review.claim_id
          ? { verdict: { verdict: verdict.record.verdict, layer: verdict.layer, checks: verdict.checks } }
          : {}),
        facts,
      };
      return { review, context };
    }),
  );
  const refundReviews = settlements.map((settlement) => {
    const read = orders.get(settlement.order_id);
    const order = read && "order" in read ? read.order : undefined;
    return refundReviewListItem(settlement, reviewDesk(deps), refundRetryBlocked(settlement.provider, order));
  });
  return { items, refundReviews, ...(more && page.length > 0 ? { nextCursor: page.at(-1)!.key } : {}) };
}

/** The Decision Maker's proposal a review is about: the claim's, else the one an escalation's review carries. */
function proposalOf(record: ClaimRecord | undefined, review: ReviewRecord): { proposal?: unknown } {
  const proposal = record?.proposal ?? proposalOutputOf(review.proposal);
  return proposal ? { proposal } : {};
}

/**
 * The order facts of a review (reviewFacts): the order as the listing read it, its ledger entry, and the other
 * claims the ledger knows on it (refunded or under review), each read as it stands. An order that could not be
 * read shows as `order: null` with why (`order_unread`).
 */
async function factsOf(
  review: ReviewRecord,
  read: OrderRead | undefined,
  deps: Pick<PipelineDeps, "claims" | "ledger" | "agent" | "clock">,
): Promise<Record<string, unknown>> {
  if (!review.order_id) return reviewFacts({ others: [] });
  const order = read && "order" in read ? read.order : undefined;
  const ledger = await deps.ledger.get(review.order_id, review.simulation_id);
  const ids = [...new Set([...Object.keys(ledger?.claims ?? {}), ...(ledger?.pending_reviews ?? [])])].filter(
    (id) => id !== review.claim_id,
  );
  const others = (await Promise.all(ids.slice(0, 50).map((id) => deps.claims.getClaim(id)))).flatMap((c) =>
    c
      ? [
          {
            claim_id: c.claim_id,
            status: c.status,
            verdict: c.verdict,
            reason_code: c.reason_code,
            amount_eur: c.claim?.amount_eur,
          },
        ]
      : [],
  );
  const customerWindow = order ? await customerWindowFacts(order.customer_id, review.simulation_id, deps) : undefined;
  return reviewFacts({
    ...(order ? { order } : {}),
    ...(read && "unread" in read ? { orderUnread: read.unread } : {}),
    ...(ledger ? { ledger } : {}),
    others,
    ...(customerWindow ? { customerWindow } : {}),
  });
}

/**
 * The customer's automatic refunds in the limit window now (made and in flight), when the contract has customer
 * limits and the order a customer; otherwise nothing (no such rule binds the order).
 */
async function customerWindowFacts(
  customerId: string | undefined,
  scope: string | undefined,
  deps: Pick<PipelineDeps, "ledger" | "agent" | "clock">,
): Promise<{ refunds: number; refunded_cents: number } | undefined> {
  const limits = deps.agent.contract.customer_limits;
  if (!limits || customerId === undefined) return undefined;
  const window = await deps.ledger.getCustomerWindow(customerId, scope);
  const totals = windowTotals(window, deps.clock.now(), customerLimitsCents(limits).windowMs);
  return { refunds: totals.count, refunded_cents: totals.cents };
}

/** The idempotency key of a stored proposal (the key its verdict is stored under), if it has one. */
function proposalKey(proposal: unknown): string | undefined {
  const key =
    typeof proposal === "object" && proposal !== null
      ? (proposal as { idempotency_key?: unknown }).idempotency_key
      : undefined;
  return typeof key === "string" && key !== "" ? key : undefined;
}

/**
 * Completes decisions that were claimed but not finished (a crash between the intent and the record): the
 * sweep calls this, so a refund reserved by an approval is always announced. Returns how many it finished.
 */
export async function repairReviews(deps: ReviewDeps, limit = 50): Promise<number> {
  let repaired = 0;
  let cursor: string | undefined;
  do {
    const page = await deps.reviews.listReviews({ status: "PENDING", limit, ...(cursor ? { cursor } : {}) });
    for (const review of page.items) {
      if (!review.intent) continue;
      const record = await deps.claims.getClaim(review.claim_id);
      if (!record) continue;
      await carryOut(record, review, deps);
      repaired++;
    }
    cursor = page.nextCursor;
  } while (cursor);
  return repaired;
}
