import * as z from "zod";
import { ClaimInputSchema, ClaimSchema } from "../claim/claim.ts";
import { AmountSchema, VerdictLineSchema } from "./public-amount.ts";
import { ClaimExtractionOutputSchema, RefundProposalOutputSchema } from "../claim/proposal-output.ts";
import { customerMessageFor } from "./reason-codes.ts";
import { reviewView } from "./review.ts";
import { refundClaimView } from "./settlement.ts";
import { ReturnRequestedDetailSchema, StoreCreditSchema } from "./events.ts";
import type { SettlementRecord } from "./settlement.ts";
import type { ReviewRecord } from "./review.ts";

/** Lifecycle of a claim (docs/http-api.md). */
export const ClaimStatusSchema = z.enum(["RECEIVED", "RUNNING", "DECIDED", "NEEDS_REVIEW", "AWAITING_RETURN"]);

/** A claim's status. */
export type ClaimStatus = z.infer<typeof ClaimStatusSchema>;

/** The dfid of a claim: one decision flow per claim. */
export function dfidOf(claimId: string): string {
  return `dfid_${claimId}`;
}

/**
 * The flow a claim's refund settlement is audited under (docs/payments.md#audit): its own, so the claim's decision
 * flow, and its replay, are the same whatever the payment provider answered.
 */
export function settlementDfid(claimId: string): string {
  return `dfid_pay_${claimId}`;
}

/**
 * The flow a claim's return is audited under (docs/returns.md): its own, like the settlement's, so the claim's
 * decision flow and its replay are the same whatever the warehouse posts.
 */
export function returnDfid(claimId: string): string {
  return `dfid_ret_${claimId}`;
}

/** Verdict values the kernel returns. */
export const VerdictValueSchema = z.enum(["ACCEPT", "ESCALATE", "REJECT"]);

/** The stored record of one claim: what was submitted, what the crew proposed and what the kernel decided. */
export const ClaimRecordSchema = z.object({
  claim_id: z.string().min(1),
  dfid: z.string().min(1),
  root_dfid: z.string().min(1),
  simulation_id: z.string().optional(),
  label: z.string().optional(),
  status: ClaimStatusSchema,
  input: ClaimInputSchema,
  claim: ClaimSchema.optional(),
  extracted: ClaimExtractionOutputSchema.optional(),
  received_at: z.string(),
  updated_at: z.string(),
  proposal: RefundProposalOutputSchema.optional(),
  verdict: VerdictValueSchema.optional(),
  verdict_id: z.string().optional(),
  reason_code: z.string().optional(),
  reason: z.string().optional(),
  executed: z.boolean().optional(),
  /** The verdict's amount in its currency (docs/http-api.md); null when the proposal carried no usable one. */
  amount: AmountSchema.nullable().optional(),
  /** The verdict per line, for a claim on an order with lines (docs/kernel.md "Orders with lines"). */
  lines: z.array(VerdictLineSchema).optional(),
  /**
   * The return an ACCEPT waits for (docs/returns.md): the `ReturnRequested` detail, and `closed` once the deadline
   * passed with no event (the reservation released, the claim DECIDED `RETURN_NOT_RECEIVED`) or `outcome` once the
   * recorded events decided it (PAID, REVIEW).
   */
  return: ReturnRequestedDetailSchema.extend({
    closed: z.literal("NOT_RECEIVED").optional(),
    outcome: z.enum(["PAID", "REVIEW", "NOT_RECEIVED"]).optional(),
    /** The event that decided it (PAID, REVIEW). */
    decided_by: z.string().optional(),
  }).optional(),
  /**
   * What an ACCEPT gave when it is not a refund to the original payment (docs/returns.md#outcomes): `STORE_CREDIT`
   * with its `credit` (the bonus), or `EXCHANGE` (no money moves). Absent: a refund, as every claim before outcomes.
   */
  outcome: z.enum(["STORE_CREDIT", "EXCHANGE"]).optional(),
  credit: StoreCreditSchema.optional(),
  /** The claim a reviewer's RESUBMIT corrected (docs/reviews.md). */
  parent_claim_id: z.string().optional(),
  /** What the sweep saw when it last nudged the claim (`seen`) and how many nudges in a row found it so (docs/local-stack.md: STALLED). */
  sweep: z.object({ nudges: z.number().int().min(1), seen: z.string() }).optional(),
  /**
   * Set while the claim waits for a model that could not be reached (docs/llm.md: the outage hold): since when, and
   * which work (a step's correlation id, or `extraction`) is next tried when, and until when it may wait (absent on
   * holds recorded before the batch mode: since + the outage hold).
   */
  llm_hold: z
    .object({
      since: z.string(),
      key: z.string().optional(),
      next_at: z.string().optional(),
      until: z.string().optional(),
      /** The last failure the claim waited on (at most 300 characters), named when the hold runs out. */
      problem: z.string().optional(),
    })
    .optional(),
  /**
   * Effects decided together with a status change and not yet confirmed performed (the pipeline's effect list):
   * an extraction's outcome is stored with the claim's move out of RECEIVED, so exactly one outcome is kept however
   * many deliveries race, and a redelivery or the sweep performs it after a crash. Never shown to API callers.
   */
  outbox: z.array(z.unknown()).optional(),
});

/** A stored claim. */
export type ClaimRecord = z.infer<typeof ClaimRecordSchema>;

/**
 * Whether a claim is final: decided by the kernel or handed to a person. A claim AWAITING_RETURN is decided (an
 * ACCEPT, its refund reserved) and waits only for return events, which no crew, timer or nudge moves.
 */
export function isFinal(status: ClaimStatus): boolean {
  return status === "DECIDED" || status === "NEEDS_REVIEW" || status === "AWAITING_RETURN";
}

/**
 * The public view of a claim returned by `GET /claims/{id}` (docs/http-api.md), with its review once one exists
 * and a customer-facing message once it is final (the rule, never an order fact).
 */
export function claimView(
  record: ClaimRecord,
  review?: ReviewRecord,
  settlement?: SettlementRecord,
): Record<string, unknown> {
  const final = isFinal(record.status);
  return {
    claim_id: record.claim_id,
    status: record.status,
    ...(record.verdict ? { verdict: record.verdict } : {}),
    ...(record.reason_code ? { reason_code: record.reason_code } : {}),
    ...(record.reason ? { reason: record.reason } : {}),
    ...(record.extracted ? { extracted: record.extracted } : {}),
    ...(record.proposal ? { proposal: record.proposal } : {}),
    ...(record.executed !== undefined ? { executed: record.executed } : {}),
    ...(record.amount !== undefined ? { amount: record.amount } : {}),
    ...(record.lines ? { lines: record.lines } : {}),
    ...(record.return ? { return: returnView(record.return) } : {}),
    ...(record.outcome ? { outcome: record.outcome } : {}),
    ...(record.credit ? { credit: record.credit } : {}),
    dfid: record.dfid,
    ...(record.simulation_id ? { simulation_id: record.simulation_id } : {}),
    ...(record.parent_claim_id ? { parent_claim_id: record.parent_claim_id } : {}),
    ...(review ? { review: reviewView(review) } : {}),
    // The refund's settlement with the payment provider, once the executor took it (docs/payments.md).
    ...(settlement ? { refund: refundClaimView(settlement) } : {}),
    ...(final ? { customer_message: customerMessage(record, review) } : {}),
  };
}

/** The return as `GET /claims/{id}` shows it: what to send back, by when, on which event it pays, and its outcome. */
function returnView(r: NonNullable<ClaimRecord["return"]>): Record<string, unknown> {
  return {
    lines: r.lines,
    pay_on: r.pay_on,
    return_by: r.return_by,
    ...(r.outcome ? { outcome: r.outcome } : {}),
  };
}

/** The bonus of a store credit, as the customer is told it (none: nothing). */
function bonusText(record: ClaimRecord): string {
  const pct = record.credit?.bonus_pct ?? 0;
  return pct > 0 ? `, with a ${pct}% bonus` : "";
}

/** What the customer may be told: the review's outcome once a person decided, else the rule that decided. */
function customerMessage(record: ClaimRecord, review: ReviewRecord | undefined): string {
  if (record.status === "AWAITING_RETURN" && record.return && record.outcome === "STORE_CREDIT")
    return `Your store credit is approved${bonusText(record)}. Please send the item back by ${record.return.return_by.slice(0, 10)}; the credit is issued once it is ${record.return.pay_on === "in_transit" ? "on its way" : record.return.pay_on === "delivered" ? "received" : "received and inspected"}.`;
  if (
    record.status === "DECIDED" &&
    record.verdict === "ACCEPT" &&
    record.outcome === "STORE_CREDIT" &&
    !record.reason_code?.startsWith("RETURN_")
  )
    return `Your claim is accepted: you receive store credit instead of a refund${bonusText(record)}.`;
  if (record.status === "DECIDED" && record.verdict === "ACCEPT" && record.outcome === "EXCHANGE")
    return "Your claim is accepted: the shop sends you a replacement; no refund is paid.";
  if (record.status === "AWAITING_RETURN" && record.return)
    return `Your refund is approved. Please send the item back by ${record.return.return_by.slice(0, 10)}; the refund is paid once it is ${record.return.pay_on === "in_transit" ? "on its way" : record.return.pay_on === "delivered" ? "received" : "received and inspected"}.`;
  if (review?.status === "APPROVED") return "Your refund has been approved.";
  if (review?.status === "DENIED") return "After review, your claim could not be granted.";
  if (review?.status === "RESUBMITTED")
    return "Your claim was corrected and submitted again; you will hear about the new claim.";
  return customerMessageFor(record.reason_code, record.status === "NEEDS_REVIEW" ? undefined : record.verdict);
}
