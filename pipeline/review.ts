// Human review (SPEC §4.6): opening a review when a claim escalates or needs review, listing reviews, and
// deciding one — APPROVE (the reject checks again, then the refund reserved exactly once through the same
// ledger as an ACCEPT), DENY, RESUBMIT (a corrected claim through the normal pipeline). A decision is
// claimed on the review first (an intent, conditional on its version), so a crash anywhere is repaired by
// repeating the same decision (or by the sweep) and a different decision is refused with 409.
import { busEntry } from "../core/claims/events.ts";
import type { BusEntry } from "../core/claims/events.ts";
import { decideClaim } from "../core/claims/kernel.ts";
import type { ClaimRecord } from "../core/claims/claim-record.ts";
import { isFinal } from "../core/claims/claim-record.ts";
import {
  approvalExecutionIdFor,
  checkDecision,
  normaliseDecision,
  resubmittedClaimIdFor,
  ReviewDecisionSchema,
  reviewIdFor,
  reviewView,
} from "../core/claims/review.ts";
import type { ReviewContext, ReviewOrigin, ReviewRecord, ReviewRefusal, ReviewStatus } from "../core/claims/review.ts";
import { centsToEur, KernelInputError, OrderDataError, parseCents, toCents } from "../core/integrity/index.ts";
import type { AuditEvent, Order } from "../core/integrity/index.ts";
import { claimAudit } from "./audit-events.ts";
import type { PipelineDeps } from "./deps.ts";
import type { Effect } from "./effects.ts";
import { submitClaim, toInputIssues } from "./intake.ts";
import type { InputIssue } from "./intake.ts";
import { performEffects } from "./perform.ts";
import type { ReviewPage } from "./ports.ts";

/** What opening a review needs to know beyond the claim. */
interface ReviewOpening {
  origin: ReviewOrigin;
  reasonCode: string;
  reason: string;
  now: number;
  orderId?: string | undefined;
  amountEur?: number | undefined;
  verdictId?: string;
  verdictDecidedAt?: string;
  proposal?: unknown;
}

/** The review a claim gets when it escalates or needs review (deterministic: a repeat builds the same record). */
export function reviewFor(record: ClaimRecord, o: ReviewOpening): ReviewRecord {
  return {
    review_id: reviewIdFor(record.claim_id),
    claim_id: record.claim_id,
    dfid: record.dfid,
    origin: o.origin,
    status: "PENDING",
    reason_code: o.reasonCode,
    reason: o.reason,
    ...(o.orderId ? { order_id: o.orderId } : {}),
    ...(o.amountEur !== undefined ? { amount_eur: o.amountEur } : {}),
    requested_at: new Date(o.now).toISOString(),
    ...(record.simulation_id ? { simulation_id: record.simulation_id } : {}),
    ...(o.verdictId ? { verdict_id: o.verdictId } : {}),
    ...(o.verdictDecidedAt ? { verdict_decided_at: o.verdictDecidedAt } : {}),
    ...(o.proposal !== undefined ? { proposal: o.proposal } : {}),
    version: 1,
  };
}

/** The audit event and bus event that announce a review (built with the review, so a repeat is identical). */
export function reviewRequested(record: ClaimRecord, review: ReviewRecord): { audit: AuditEvent; event: BusEntry } {
  const detail = {
    review_id: review.review_id,
    claim_id: review.claim_id,
    dfid: review.dfid,
    origin: review.origin,
    reason_code: review.reason_code,
    reason: review.reason,
    ...(review.order_id ? { order_id: review.order_id } : {}),
    ...(review.amount_eur !== undefined ? { amount_eur: review.amount_eur } : {}),
    requested_at: review.requested_at,
    ...(review.simulation_id ? { simulation_id: review.simulation_id } : {}),
  };
  return {
    audit: claimAudit(record, "REVIEW_REQUESTED", "NEEDS_REVIEW", Date.parse(review.requested_at), detail, "WARN"),
    event: busEntry("ReviewRequested", detail),
  };
}

/** The outcome of a review decision, as `POST /claims/{id}/review` answers it. */
export type ReviewResult =
  | {
      ok: true;
      body: {
        claim_id: string;
        review: Record<string, unknown>;
        executed: boolean;
        execution_id?: string;
        resubmitted_claim_id?: string;
      };
    }
  | { ok: false; status: 400; code: "INVALID_INPUT"; message: string; issues: InputIssue[] }
  | { ok: false; status: 404; code: "NOT_FOUND"; message: string }
  | ({ ok: false } & ReviewRefusal)
  | { ok: false; status: 409; code: string; message: string };

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
>;

/** Decides the claim's review as a reviewer asked (SPEC §4.6); idempotent, and nothing is written for a refused request. */
export async function decideReview(claimId: string, body: unknown, deps: ReviewDeps): Promise<ReviewResult> {
  const parsed = ReviewDecisionSchema.safeParse(body);
  if (!parsed.success)
    return {
      ok: false,
      status: 400,
      code: "INVALID_INPUT",
      message: "the review decision is invalid",
      issues: toInputIssues(parsed.error),
    };
  const record = await deps.claims.getClaim(claimId);
  if (!record) return { ok: false, status: 404, code: "NOT_FOUND", message: `claim ${claimId} not found` };
  for (let attempt = 0; attempt < 3; attempt++) {
    const review = await deps.reviews.getReview(claimId);
    if (!review)
      return {
        ok: false,
        status: 409,
        code: "NO_PENDING_REVIEW",
        message: `claim ${claimId} has no review${isFinal(record.status) ? "" : " (it is not final yet)"}`,
      };
    const check = checkDecision(parsed.data, review);
    if (check !== undefined && check !== "REPEAT") return { ok: false, ...check };
    if (check === "REPEAT" && review.status !== "PENDING") return finish(record, review, deps);
    // An approval that cannot pass the reject checks now is refused before it claims anything, so another
    // reviewer's decision is not blocked by an approval that was going to fail.
    if (!review.intent && parsed.data.decision === "APPROVE") {
      const amount = normaliseDecision(parsed.data, review).amount_eur!;
      const precheck = await approvalChecks(record, review, amount, deps);
      if (!precheck.ok) return { ok: false, status: 409, code: precheck.code, message: precheck.message };
    }
    // Claim the decision on the review (or go on with this same decision already claimed).
    let claimed = review;
    if (!review.intent) {
      const intent = {
        ...normaliseDecision(parsed.data, review),
        decided_at: new Date(deps.clock.now()).toISOString(),
      };
      const update = await deps.reviews.updateReview({ ...review, intent, version: review.version + 1 });
      if (!update.changed) continue; // another decision got there first: look again
      claimed = update.review;
    }
    return carryOut(record, claimed, deps);
  }
  return {
    ok: false,
    status: 409,
    code: "REVIEW_ALREADY_DECIDED",
    message: `review of claim ${claimId} is changing concurrently; try again`,
  };
}

/** Carries out the decision claimed on the review, then records it as decided. */
async function carryOut(record: ClaimRecord, review: ReviewRecord, deps: ReviewDeps): Promise<ReviewResult> {
  const { decided_at: claimedAt, ...intent } = review.intent!;
  // The instant the decision was claimed (an intent from before it carried one: now): a repair announces the same events.
  const decidedAt = claimedAt ?? new Date(deps.clock.now()).toISOString();
  const base = {
    ...review,
    intent: undefined,
    decision: intent.decision,
    decided_at: decidedAt,
    ...(intent.reviewer ? { reviewer: intent.reviewer } : {}),
    ...(intent.note !== undefined ? { note: intent.note } : {}),
    version: review.version + 1,
  };
  let next: ReviewRecord;
  if (intent.decision === "APPROVE") {
    const approved = await approve(record, review, intent.amount_eur!, deps);
    if (!approved.ok) {
      // The refund cannot be made: the review stays PENDING and nothing else changed.
      await deps.reviews.updateReview({ ...review, intent: undefined, version: review.version + 1 });
      return { ok: false, status: 409, code: approved.code, message: approved.message };
    }
    next = {
      ...base,
      status: "APPROVED",
      approved_amount_eur: intent.amount_eur!,
      execution_id: approvalExecutionIdFor(review.review_id),
    };
  } else if (intent.decision === "RESUBMIT") {
    const body = {
      claim: intent.claim,
      ...(record.simulation_id ? { simulation_id: record.simulation_id } : {}),
      ...(record.label ? { label: `${record.label} (resubmitted)` } : {}),
    };
    const submitted = await submitClaim(
      body,
      {
        claimId: resubmittedClaimIdFor(review.review_id),
        idempotencyKey: `resubmit:${review.review_id}`,
        parentClaimId: record.claim_id,
      },
      deps,
    );
    if (!submitted.ok) {
      await deps.reviews.updateReview({ ...review, intent: undefined, version: review.version + 1 });
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
    next = { ...base, status: "RESUBMITTED", resubmitted_claim_id: submitted.claimId };
  } else {
    next = { ...base, status: "DENIED" };
  }
  // Announce first, then record: a crash in between is repaired by the same request (or the sweep) announcing again.
  await performEffects(decidedEffects(record, next), deps);
  const stored = await deps.reviews.updateReview(stripUndefined(next));
  // Once recorded, two effects are repeated for the kernel's sake: the review's ledger mark cleared (a review_open
  // repeated meanwhile may have set it again), and an approval's `executed` (the kernel may have recorded the claim
  // DECIDED only now; it sets `executed` itself when it sees the approval recorded, so one of the two always does).
  await performEffects(
    [
      ...(next.order_id
        ? [
            {
              kind: "review_closed" as const,
              orderId: next.order_id,
              claimId: next.claim_id,
              ...(next.simulation_id ? { scope: next.simulation_id } : {}),
            },
          ]
        : []),
      ...(next.status === "APPROVED"
        ? [
            {
              kind: "claim_update" as const,
              claimId: record.claim_id,
              patch: { executed: true },
              onlyFrom: ["DECIDED" as const],
            },
          ]
        : []),
    ],
    deps,
  );
  return respond(record, stored.review ?? next);
}

/** A decided review answered again: its effects performed again (idempotent), then the stored result. */
async function finish(record: ClaimRecord, review: ReviewRecord, deps: ReviewDeps): Promise<ReviewResult> {
  await performEffects(decidedEffects(record, review), deps);
  return respond(record, review);
}

function respond(record: ClaimRecord, review: ReviewRecord): ReviewResult {
  return {
    ok: true,
    body: {
      claim_id: record.claim_id,
      review: reviewView(review),
      executed: review.status === "APPROVED" || record.executed === true,
      ...(review.execution_id ? { execution_id: review.execution_id } : {}),
      ...(review.resubmitted_claim_id ? { resubmitted_claim_id: review.resubmitted_claim_id } : {}),
    },
  };
}

/** What a decided review announces: the audit, ReviewDecided (and RefundExecuted for an approval), the ledger's review mark cleared, the claim's record. */
function decidedEffects(record: ClaimRecord, review: ReviewRecord): Effect[] {
  const at = Date.parse(review.decided_at!);
  const decided = {
    review_id: review.review_id,
    claim_id: review.claim_id,
    dfid: review.dfid,
    decision: review.decision!,
    ...(review.reviewer ? { reviewer: review.reviewer } : {}),
    ...(review.note !== undefined ? { note: review.note } : {}),
    ...(review.approved_amount_eur !== undefined ? { amount_eur: review.approved_amount_eur } : {}),
    ...(review.execution_id ? { execution_id: review.execution_id } : {}),
    ...(review.resubmitted_claim_id ? { resubmitted_claim_id: review.resubmitted_claim_id } : {}),
    decided_at: review.decided_at!,
    ...(review.simulation_id ? { simulation_id: review.simulation_id } : {}),
  };
  const effects: Effect[] = [];
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
    // The approved amount was checked in cents when the review was decided.
    effects.push({
      kind: "audit",
      event: claimAudit(record, "CLAIM_REFUND_EXECUTED", "DECIDED", at, {
        ...refund,
        amount_cents: toCents(refund.amount_eur),
      }),
    });
    events.push(busEntry("RefundExecuted", refund));
  }
  // The state is the claim's final one, known from the origin: the claim's record may still be on its way there
  // (read while the kernel or the extraction had not yet recorded it), and a repeat must audit the same event.
  effects.push({
    kind: "audit",
    event: claimAudit(record, "REVIEW_DECIDED", review.origin === "ESCALATE" ? "DECIDED" : "NEEDS_REVIEW", at, decided),
  });
  events.push(busEntry("ReviewDecided", decided));
  if (review.order_id)
    effects.push({
      kind: "review_closed",
      orderId: review.order_id,
      claimId: review.claim_id,
      ...(review.simulation_id ? { scope: review.simulation_id } : {}),
    });
  effects.push({ kind: "publish", entries: events });
  if (review.status === "APPROVED")
    effects.push({
      kind: "claim_update",
      claimId: record.claim_id,
      patch: { executed: true, updated_at: review.decided_at! },
      onlyFrom: ["DECIDED"],
    });
  return effects;
}

type Approval = { ok: true } | { ok: false; code: string; message: string };

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
): Promise<Approval> {
  const checked = await approvalChecks(record, review, amountEur, deps);
  if (!checked.ok) return checked;
  const { order, cents, orderCents } = checked;
  const result = await deps.ledger.reserve({
    orderId: order.order_id,
    claimId: record.claim_id,
    cents,
    orderCents,
    mode: { kind: "approved" },
    scope: record.simulation_id,
  });
  if (result.ok) return { ok: true };
  if (result.code === "ALREADY_REFUNDED_FOR_CLAIM" && result.entry.claims[record.claim_id] === cents)
    return { ok: true }; // our own reservation (a repeat)
  return {
    ok: false,
    code: result.code === "EXCEEDS_ORDER_AMOUNT" ? "EXCEEDS_REFUNDABLE_BALANCE" : result.code,
    message: result.message,
  };
}

type Checked =
  | { ok: true; order: Order; cents: number; orderCents: number }
  | { ok: false; code: string; message: string };

/** The reject checks (layers 1–8b) on the escalated proposal for `amountEur`, against the ledger as it stands now. */
async function approvalChecks(
  record: ClaimRecord,
  review: ReviewRecord,
  amountEur: number,
  deps: ReviewDeps,
): Promise<Checked> {
  if (!record.claim || review.proposal === undefined || !review.order_id)
    return { ok: false, code: "DECISION_NOT_ALLOWED", message: "this review carries no proposal to approve" };
  const scope = record.simulation_id;
  let order;
  try {
    order = await deps.orders.getOrder(review.order_id);
  } catch (error) {
    if (error instanceof OrderDataError) return { ok: false, code: "ORDER_DATA_INVALID", message: error.message };
    throw error;
  }
  const cents = parseCents(amountEur);
  if (!order || !cents.ok)
    return { ok: false, code: "ORDER_NOT_FOUND", message: `order ${review.order_id} is not in the context store` };
  const ledgerEntry = await deps.ledger.get(order.order_id, scope);
  let verdict;
  try {
    verdict = decideClaim({
      proposal: review.proposal,
      claim: record.claim,
      contract: deps.agent.contract,
      responsibility: deps.agent.responsibility,
      registry: { agents: deps.registry.agents },
      order,
      ledgerEntry,
      receivedAt: record.received_at,
      // Validity (layer 2) as the kernel saw the proposal: a person taking time to decide does not expire it.
      decidedAt: review.verdict_decided_at ?? record.received_at,
      claimId: record.claim_id,
      dfid: record.dfid,
      approval: { amountEur: centsToEur(cents.cents) },
    });
  } catch (error) {
    if (error instanceof KernelInputError) return { ok: false, code: "ORDER_DATA_INVALID", message: error.message };
    throw error;
  }
  if (verdict.verdict !== "ACCEPT") return { ok: false, code: verdict.reason_code, message: verdict.reason };
  const orderCents = parseCents(order.amount);
  if (!orderCents.ok)
    return { ok: false, code: "ORDER_DATA_INVALID", message: `order ${order.order_id}: ${orderCents.message}` };
  return { ok: true, order, cents: cents.cents, orderCents: orderCents.cents };
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** One listed review with what a reviewer decides on: the claim's stored record and the kernel's stored verdict. */
type ReviewListEntry = { review: ReviewRecord; context: ReviewContext };

/**
 * Lists reviews with `status` (PENDING by default), oldest first, each with its context: the claim as stored
 * (structured or extracted, the free text, the proposal) and, for an escalation, the kernel's deciding layer
 * and checks from the stored verdict. Two reads per review, in parallel.
 */
export async function listReviews(
  query: { status?: ReviewStatus; limit?: number; cursor?: string },
  deps: Pick<PipelineDeps, "reviews" | "claims" | "verdicts">,
): Promise<{ items: ReviewListEntry[]; nextCursor?: string }> {
  const page: ReviewPage = await deps.reviews.listReviews({
    status: query.status ?? "PENDING",
    limit: query.limit ?? 50,
    ...(query.cursor ? { cursor: query.cursor } : {}),
  });
  const items = await Promise.all(
    page.items.map(async (review): Promise<ReviewListEntry> => {
      const key = proposalKey(review.proposal);
      const [record, verdict] = await Promise.all([
        deps.claims.getClaim(review.claim_id),
        key ? deps.verdicts.getVerdict(key) : undefined,
      ]);
      const context: ReviewContext = {
        ...(record?.claim ? { claim: record.claim } : {}),
        ...(record && "claim_text" in record.input ? { claimText: record.input.claim_text } : {}),
        ...(record?.label ? { label: record.label } : {}),
        ...(record?.proposal ? { proposal: record.proposal } : {}),
        ...(verdict && verdict.claim_id === review.claim_id
          ? { verdict: { verdict: verdict.record.verdict, layer: verdict.layer, checks: verdict.checks } }
          : {}),
      };
      return { review, context };
    }),
  );
  return { items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
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
