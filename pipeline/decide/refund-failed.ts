// A person's decision on a failed refund's review (origin REFUND_FAILED, docs/payments.md), apart from its I/O:
// which request is valid, whether it may be taken on the claim's settlement as it stands, the settlement once
// decided, and what a decided one performs. RETRY pays again under a new execution id (a new RefundExecuted that
// names the failed one in `retry_of`); CLOSE, with a note, says whether the refund was paid out of band (the
// reservation is kept: it counts as refunded) or not (released: not refunded) — either way it binds the order like a
// DENY (kernel layer 10c), so the next claim on it goes to a person.
import { toMinor } from "../../core/kernel/index.ts";
import * as z from "zod";
import { oneLineText } from "../../core/claim/claim.ts";
import { auditEvent } from "../../core/history/audit-events.ts";
import { settlementDfid } from "../../core/kernel/claim-record.ts";
import { knownAmountFields, withoutAmountEur } from "../../core/kernel/public-amount.ts";
import { busEntry } from "../../core/kernel/events.ts";
import type { BusEntry, ReviewDecidedDetail } from "../../core/kernel/events.ts";
import {
  closeReleasesReservation,
  RefundReviewDecisionSchema,
  retryExecutionId,
} from "../../core/kernel/settlement.ts";
import type { RefundReviewDecision, SettlementRecord } from "../../core/kernel/settlement.ts";
import { settlementCredit } from "../../core/kernel/settlement.ts";
import type { Effect } from "../effects.ts";

/** The decision flow a claim's refund settlement is audited under (defined in core/kernel/claim-record.ts). */
export { settlementDfid };

/** The body of `POST /claims/{id}/review` deciding a failed refund's review. */
export const RefundReviewRequestSchema = z
  .object({
    decision: RefundReviewDecisionSchema,
    note: oneLineText().max(2000).optional(),
    reviewer: oneLineText().trim().min(1).max(128).optional(),
    /** CLOSE (required): whether the refund was paid another way (a bank transfer) or is left unpaid. */
    paid_out_of_band: z.boolean().optional(),
    /** The review the reviewer saw (GET /reviews `review_id`): a decision meant for an earlier one is refused. */
    review_id: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,200}$/, "a review id from GET /reviews")
      .optional(),
  })
  .strict()
  .superRefine((d, ctx) => {
    if (d.decision === "CLOSE" && d.paid_out_of_band === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["paid_out_of_band"],
        message: "a CLOSE says whether the refund was paid out of band (true: it counts as refunded) or not (false)",
      });
    if (d.decision !== "CLOSE" && d.paid_out_of_band !== undefined)
      ctx.addIssue({ code: "custom", path: ["paid_out_of_band"], message: "paid_out_of_band is only for CLOSE" });
  });

/** A RETRY / CLOSE as submitted. */
export type RefundReviewRequest = z.infer<typeof RefundReviewRequestSchema>;

/** Whether a body asks for RETRY or CLOSE (the decisions of a failed refund's review only). */
export function asksRefundDecision(body: unknown): boolean {
  const decision = typeof body === "object" && body !== null ? (body as { decision?: unknown }).decision : undefined;
  return RefundReviewDecisionSchema.safeParse(decision).success;
}

/** Why a RETRY / CLOSE cannot be taken, as the API answers it. */
export type RefundDecisionRefusal =
  | { status: 409; code: "DECISION_NOT_ALLOWED" | "REVIEW_ALREADY_DECIDED"; message: string }
  | { status: 400; code: "NOTE_REQUIRED"; message: string };

/** What a RETRY / CLOSE comes to on the settlement: refused, a repeat of the stored decision, or to be taken. */
export type RefundDecisionCheck = { refused: RefundDecisionRefusal } | { repeat: true } | { take: true };

/**
 * Checks `request` by `reviewer` against the claim's settlement: only a failed refund's review takes RETRY /
 * CLOSE; a decided one answers the same decision again (same decision, reviewer and note) and refuses any other;
 * CLOSE needs a note.
 */
export function checkRefundDecision(
  settlement: SettlementRecord | undefined,
  request: RefundReviewRequest,
  reviewer: string,
): RefundDecisionCheck {
  const review = settlement?.review;
  if (!review)
    return {
      refused: {
        status: 409,
        code: "DECISION_NOT_ALLOWED",
        message: `${request.decision} decides a failed refund's review (origin REFUND_FAILED); this claim has none`,
      },
    };
  if (request.review_id !== undefined && request.review_id !== review.review_id)
    return {
      refused: {
        status: 409,
        code: "REVIEW_ALREADY_DECIDED",
        message: `review ${request.review_id} was decided earlier; the refund's review now is ${review.review_id} (${review.status}): read it before deciding`,
      },
    };
  if (review.status !== "PENDING") {
    const same =
      review.decision === request.decision &&
      review.reviewer === reviewer &&
      review.note === request.note &&
      review.paid_out_of_band === request.paid_out_of_band;
    return same
      ? { repeat: true }
      : {
          refused: {
            status: 409,
            code: "REVIEW_ALREADY_DECIDED",
            message: `review ${review.review_id} was already decided: ${review.decision}${review.reviewer ? ` by ${review.reviewer}` : ""}`,
          },
        };
  }
  if (request.decision === "CLOSE" && (request.note === undefined || request.note.trim() === ""))
    return {
      refused: {
        status: 400,
        code: "NOTE_REQUIRED",
        message: "a CLOSE needs a note saying why the refund is left unpaid",
      },
    };
  return { take: true };
}

/** The refusal of any other decision (APPROVE, DENY, RESUBMIT) while the claim's refund review is pending. */
export function otherDecisionRefused(decision: string, settlement: SettlementRecord): RefundDecisionRefusal {
  return {
    status: 409,
    code: "DECISION_NOT_ALLOWED",
    message: `the claim's refund failed and its review ${settlement.review?.review_id} is pending: it takes RETRY or CLOSE, not ${decision}`,
  };
}

/**
 * The settlement once `decision` is taken at `at`: the review decided by `reviewer`; a RETRY also moves the
 * settlement to a new PENDING execution (the failed one kept among the attempts), a CLOSE leaves it FAILED.
 */
export function decidedSettlement(
  settlement: SettlementRecord,
  decision: RefundReviewDecision,
  reviewer: string,
  note: string | undefined,
  at: string,
  paidOutOfBand?: boolean,
): SettlementRecord {
  const { taken_by: _by, taken_until: _until, ...review } = settlement.review!;
  const decided = {
    ...review,
    decision,
    reviewer,
    decided_at: at,
    ...(note !== undefined ? { note } : {}),
    ...(decision === "CLOSE" && paidOutOfBand !== undefined ? { paid_out_of_band: paidOutOfBand } : {}),
  };
  if (decision === "CLOSE")
    return { ...settlement, review: { ...decided, status: "CLOSED" }, updated_at: at, version: settlement.version + 1 };
  const next = retryExecutionId(review.execution_id);
  const { provider_ref, failure_reason, announced: _announced, ...rest } = settlement;
  return {
    ...rest,
    execution_id: next,
    status: "PENDING",
    attempts: [
      ...settlement.attempts,
      {
        execution_id: settlement.execution_id,
        status: settlement.status,
        ...(provider_ref === undefined ? {} : { provider_ref }),
        ...(failure_reason === undefined ? {} : { failure_reason }),
      },
    ],
    review: { ...decided, status: "RETRIED", retry_execution_id: next },
    updated_at: at,
    version: settlement.version + 1,
  };
}

/** The ReviewDecided detail of a decided refund review. */
export function refundReviewDecided(settlement: SettlementRecord, simulationId?: string): ReviewDecidedDetail {
  const review = settlement.review!;
  return {
    review_id: review.review_id,
    claim_id: settlement.claim_id,
    dfid: settlement.dfid,
    decision: review.decision!,
    reviewer: review.reviewer ?? "reviewer",
    ...(review.note !== undefined ? { note: review.note } : {}),
    amount_eur: settlement.amount_eur,
    execution_id: review.retry_execution_id ?? review.execution_id,
    ...(review.retry_execution_id ? { retry_of: review.execution_id } : {}),
    ...(review.paid_out_of_band !== undefined ? { paid_out_of_band: review.paid_out_of_band } : {}),
    decided_at: review.decided_at!,
    ...(simulationId ? { simulation_id: simulationId } : {}),
  };
}

/**
 * What a decided refund review performs, each idempotent so a repeat (or a repair) performs it again safely:
 * CLOSE releases the claim's reservation on the order (no person's decision binds the order); both audit
 * REVIEW_DECIDED on the settlement's flow `auditDfid`, and publish ReviewDecided — a RETRY also RefundExecuted for
 * the new execution (the refund executor pays it; its idempotency key is the new execution id).
 */
export function refundReviewEffects(settlement: SettlementRecord, auditDfid: string): Effect[] {
  const review = settlement.review!;
  // A batch run's rehearsed refund (docs/payments.md): its decision is the run's, and a RETRY's refund a simulation's.
  const scope = settlement.simulation_id;
  const decided = refundReviewDecided(settlement, scope);
  const effects: Effect[] = [];
  if (review.decision === "CLOSE") {
    // Not paid: the reservation is released (not refunded). Paid out of band: kept (refunded). Either way the CLOSE
    // binds the order (a CLOSE recorded before paid_out_of_band existed released and binds as not paid).
    // A batch run's ledger is its own (the simulation's scope), never the live order's.
    const where = { orderId: settlement.order_id, claimId: settlement.claim_id, ...(scope ? { scope } : {}) };
    if (closeReleasesReservation(review)) effects.push({ kind: "refund_released", ...where });
    effects.push({
      kind: "review_closed",
      ...where,
      decision: {
        claim_id: settlement.claim_id,
        decision: "CLOSE",
        paid_out_of_band: review.paid_out_of_band === true,
      },
    });
  }
  effects.push({
    kind: "audit",
    event: auditEvent({
      dfid: auditDfid,
      type: "REVIEW_DECIDED",
      state: review.status,
      details: decided,
      at: decided.decided_at,
    }),
  });
  const entries: BusEntry[] = [busEntry("ReviewDecided", decided)];
  if (review.retry_execution_id) {
    const refund = {
      execution_id: review.retry_execution_id,
      claim_id: settlement.claim_id,
      dfid: settlement.dfid,
      order_id: settlement.order_id,
      amount_eur: settlement.amount_eur,
      verdict_id: settlement.verdict_id,
      retry_of: review.execution_id,
      ...(scope === undefined ? {} : { simulation_id: scope }),
      // A failed store credit is retried as store credit (docs/returns.md#outcomes).
      ...settlementCredit(settlement),
    };
    effects.push({
      kind: "audit",
      event: auditEvent({
        dfid: auditDfid,
        type: "CLAIM_REFUND_EXECUTED",
        state: review.status,
        details: { ...refund, amount_cents: toMinor(refund.amount_eur, settlement.currency ?? "EUR") },
        at: decided.decided_at,
      }),
    });
    entries.push(
      busEntry("RefundExecuted", {
        ...withoutAmountEur(refund),
        ...knownAmountFields(refund.amount_eur, settlement.currency ?? "EUR"),
      }),
    );
  }
  effects.push({ kind: "publish", entries });
  return effects;
}
