// Opening a review: the review a claim gets when it escalates or needs review, the events that announce it,
// and the effects that end a claim in NEEDS_REVIEW. Pure: every input is given, so a repeat builds the same.
import { busEntry } from "../../core/kernel/events.ts";
import { knownAmountFields, withoutAmountEur } from "../../core/kernel/public-amount.ts";
import { isCurrencyCode } from "../../core/integrity/currency.ts";
import type { BusEntry } from "../../core/kernel/events.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { RefundProposalOutput } from "../../core/claim/proposal-output.ts";
import { reviewIdFor } from "../../core/kernel/review.ts";
import type { ReviewOrigin, ReviewRecord } from "../../core/kernel/review.ts";
import type { AuditEvent } from "../../core/integrity/index.ts";
import { claimAudit } from "./audit.ts";
import type { NeedsReviewDetails, ReviewCauseEvent } from "./audit.ts";
import type { Effect } from "../effects.ts";

/** What opening a review needs to know beyond the claim. */
interface ReviewOpening {
  origin: ReviewOrigin;
  reasonCode: string;
  reason: string;
  now: number;
  orderId?: string | undefined;
  amountEur?: number | undefined;
  /** The currency `amountEur` counts, when known. */
  currency?: string | undefined;
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
    ...(o.amountEur !== undefined && o.currency !== undefined ? { currency: o.currency } : {}),
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
    // The bus carries the amount in its currency (docs/events.md); the audit keeps the detail as recorded before.
    event: busEntry("ReviewRequested", {
      ...withoutAmountEur(detail),
      ...knownAmountFields(review.amount_eur, review.currency),
    }),
  };
}

/**
 * Effects that end a claim in NEEDS_REVIEW and open its review: the audit (with the failing step's event
 * first), the review (marked pending on the order's ledger when the claim names an order), the
 * `ReviewRequested` and `ClaimNeedsReview` events, and — last, so that a crash before it is repaired by the
 * redelivery doing it all again — the claim's record, with the crew's `proposal` when there is one (the claim keeps
 * it from its final update on).
 */
export function needsReview(
  record: ClaimRecord,
  now: number,
  reasonCode: string,
  reason: string,
  details: NeedsReviewDetails = {},
  cause?: ReviewCauseEvent,
  proposal?: RefundProposalOutput,
): Effect[] {
  const review = reviewFor(record, {
    origin: "NEEDS_REVIEW",
    reasonCode,
    reason,
    now,
    orderId: record.claim?.order_id,
    amountEur: record.claim?.amount_eur,
    // The order was not read: the claim's amount counts the currency the claim names, if it names one.
    currency: claimCurrency(record.claim?.currency),
  });
  const requested = reviewRequested(record, review);
  const entry = busEntry("ClaimNeedsReview", {
    claim_id: record.claim_id,
    dfid: record.dfid,
    reason_code: reasonCode,
    reason,
    review_id: review.review_id,
  });
  return [
    ...(cause
      ? [
          {
            kind: "audit" as const,
            event: claimAudit(
              record,
              cause.type,
              "NEEDS_REVIEW",
              now,
              { reason_code: reasonCode, reason, ...cause.details },
              "WARN",
            ),
          },
        ]
      : []),
    {
      kind: "audit",
      event: claimAudit(
        record,
        "CLAIM_NEEDS_REVIEW",
        "NEEDS_REVIEW",
        now,
        { reason_code: reasonCode, reason, review_id: review.review_id, ...details },
        "WARN",
      ),
    },
    { kind: "audit", event: requested.audit },
    { kind: "review_open", review },
    { kind: "publish", entries: [entry, requested.event] },
    {
      kind: "claim_update",
      claimId: record.claim_id,
      patch: {
        status: "NEEDS_REVIEW",
        reason_code: reasonCode,
        reason,
        ...(proposal ? { proposal } : {}),
        updated_at: new Date(now).toISOString(),
      },
    },
  ];
}

/**
 * A claim already moved to NEEDS_REVIEW by a conditional update of its own (the sweep's STALLED, an overdue
 * claim): the rest of `needsReview`'s effects, the claim's record left out.
 */
export function reviewOpenedFor(
  record: ClaimRecord,
  now: number,
  reasonCode: string,
  reason: string,
  details: NeedsReviewDetails,
): Effect[] {
  return needsReview(record, now, reasonCode, reason, details).filter((e) => e.kind !== "claim_update");
}

/** A claim's currency when it names an ISO 4217 one (any case), else undefined. */
function claimCurrency(currency: string | undefined): string | undefined {
  const code = currency?.toUpperCase();
  return isCurrencyCode(code) ? code : undefined;
}
