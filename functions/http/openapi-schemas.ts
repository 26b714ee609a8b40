// The bodies of the HTTP API as OpenAPI describes them (functions/http/openapi.ts): the error body, the views of a
// claim and its reviews, a review's decision and its answer, each a zod schema of what a handler writes or reads.
import { AmountSchema, VerdictLineSchema } from "../../core/kernel/public-amount.ts";
import * as z from "zod";
import { ClaimStatusSchema, VerdictValueSchema } from "../../core/kernel/claim-record.ts";
import { ClaimSchema } from "../../core/claim/claim.ts";
import { StoreCreditSchema } from "../../core/kernel/events.ts";
import { ClaimExtractionOutputSchema, RefundProposalOutputSchema } from "../../core/claim/proposal-output.ts";
import {
  ReviewAwaitingSchema,
  ReviewDecisionKindSchema,
  ReviewDecisionSchema,
  ReviewOriginSchema,
  ReviewStatusSchema,
} from "../../core/kernel/review.ts";
import { RefundReviewRequestSchema } from "../../pipeline/decide/refund-failed.ts";

/** `4xx`/`5xx` bodies (docs/http-api.md). */
/** One approval as a review's views show it: its amount in the review's currency, `amount_eur` only in EUR. */
const ReviewApprovalViewSchema = z
  .object({
    reviewer: z.string(),
    amount: AmountSchema.optional().describe("The amount approved, in the review's currency, when it is known."),
    amount_eur: z
      .number()
      .optional()
      .describe("The same amount, kept for compatibility only in EUR (or when the currency is not known)."),
    at: z.string(),
  })
  .strict();

export const ApiErrorSchema = z.object({
  error: z.object({
    code: z
      .string()
      .describe("A stable code, e.g. INVALID_INPUT, NOT_FOUND, IDEMPOTENCY_CONFLICT, REVIEW_ALREADY_DECIDED."),
    message: z.string(),
    issues: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .describe("What is wrong with the input, field by field (400)."),
  }),
});

/** A review as GET /claims/{id} shows it (core/kernel/review.ts `reviewView`). */
export const ReviewViewSchema = z
  .object({
    review_id: z.string(),
    origin: ReviewOriginSchema,
    status: ReviewStatusSchema,
    reason_code: z.string(),
    reason: z.string(),
    requested_at: z.string(),
    due_at: z
      .string()
      .optional()
      .describe("When the review is due: requested_at + the policy's review_due_days / review_due_hours."),
    taken_by: z
      .string()
      .optional()
      .describe("The reviewer who took the review at the desk (POST …/review/take), while the lease lasts."),
    taken_until: z
      .string()
      .optional()
      .describe("When that lease runs out (another reviewer's decision is 409 TAKEN_BY until then)."),
    decided_at: z.string().optional(),
    decision: ReviewDecisionKindSchema.optional(),
    reviewer: z.string().optional(),
    note: z.string().optional(),
    amount: AmountSchema.optional().describe(
      "The amount under review (once APPROVED, the amount approved) in its currency, when the currency is known.",
    ),
    amount_eur: z
      .number()
      .optional()
      .describe("The same amount, kept for compatibility only in EUR (or when the currency is not known)."),
    resubmitted_claim_id: z.string().optional(),
    approvals: z.array(ReviewApprovalViewSchema).describe("The approvals given, first to last (two under four eyes)."),
    awaiting: ReviewAwaitingSchema.optional().describe(
      "A PENDING review with a first approval awaits a different reviewer's.",
    ),
  })
  .strict();

/** A failed refund's own review (origin REFUND_FAILED), decided with RETRY or CLOSE. */
export const RefundReviewViewSchema = z
  .object({
    review_id: z.string(),
    origin: z.literal("REFUND_FAILED"),
    status: z.enum(["PENDING", "RETRIED", "CLOSED"]),
    reason_code: z.literal("REFUND_FAILED"),
    reason: z.string(),
    requested_at: z.string(),
    due_at: z
      .string()
      .optional()
      .describe("When the review is due: requested_at + the policy's review_due_days / review_due_hours."),
    taken_by: z
      .string()
      .optional()
      .describe("The reviewer who took the review at the desk (POST …/review/take), while the lease lasts."),
    taken_until: z
      .string()
      .optional()
      .describe("When that lease runs out (another reviewer's decision is 409 TAKEN_BY until then)."),
    decided_at: z.string().optional(),
    decision: z.enum(["RETRY", "CLOSE"]).optional(),
    reviewer: z.string().optional(),
    note: z.string().optional(),
    retry_execution_id: z.string().optional().describe("RETRY: the new execution that pays again."),
    paid_out_of_band: z
      .boolean()
      .optional()
      .describe("CLOSE: paid another way (counted as refunded) or not (the reservation released)."),
  })
  .strict();

/** The public view of a claim (core/kernel/claim-record.ts `claimView`). */
export const ClaimViewSchema = z
  .object({
    claim_id: z.string(),
    status: ClaimStatusSchema,
    verdict: VerdictValueSchema.optional().describe("Once DECIDED."),
    reason_code: z.string().optional(),
    reason: z.string().optional(),
    extracted: ClaimExtractionOutputSchema.optional().describe("What the LLM read from claim_text (free-text claims)."),
    proposal: RefundProposalOutputSchema.optional().describe(
      "The crew's proposal: a claim, not a fact; the verdict is the kernel's.",
    ),
    executed: z.boolean().optional().describe("Whether a refund was reserved (RefundExecuted announced it)."),
    amount: AmountSchema.nullable()
      .optional()
      .describe("The verdict's amount in the order's currency (null: the proposal carried no usable amount)."),
    lines: z
      .array(VerdictLineSchema)
      .optional()
      .describe(
        "A claim on an order with lines: the verdict per line (the claim's verdict; OTHER_LINE_FAILED on a line that passed in a claim another line failed).",
      ),
    return: z
      .object({
        lines: z.array(z.object({ line_id: z.string(), quantity: z.number().int() })),
        pay_on: z.enum(["in_transit", "delivered", "inspected"]),
        return_by: z.string(),
        outcome: z.enum(["PAID", "REVIEW", "NOT_RECEIVED"]).optional(),
      })
      .strict()
      .optional()
      .describe(
        "The return a return-required ACCEPT waits for: what to send back, by when, on which event it pays (docs/returns.md).",
      ),
    outcome: z
      .enum(["STORE_CREDIT", "EXCHANGE"])
      .optional()
      .describe("What the ACCEPT gave when not a refund: store credit or an exchange (docs/returns.md#outcomes)."),
    credit: StoreCreditSchema.optional().describe("Store credit's bonus on top of the amount, and its percentage."),
    dfid: z.string().describe("The decision-flow id every audit event of the claim carries."),
    simulation_id: z.string().optional(),
    parent_claim_id: z.string().optional().describe("The claim a reviewer's RESUBMIT corrected."),
    review: ReviewViewSchema.optional(),
    refund: z
      .object({
        status: z.enum(["PENDING", "SETTLED", "FAILED"]),
        provider_ref: z.string().optional().describe("The payment provider's refund id (Stripe re_…)."),
        failure_reason: z.string().optional().describe("Why the provider refused it."),
        outcome: z.literal("STORE_CREDIT").optional().describe("The execution issues store credit (docs/payments.md)."),
        bonus: AmountSchema.optional().describe("Store credit's bonus, credited on top of the amount."),
        settled_at: z.string().optional().describe("When the store credit settled."),
        review: RefundReviewViewSchema.optional().describe("A failed refund's own review."),
      })
      .strict()
      .optional()
      .describe(
        "The refund's settlement with the payment provider, once the refund executor took it (docs/payments.md).",
      ),
    customer_message: z
      .string()
      .optional()
      .describe("What the customer may be told, once the claim is final: the rule, never order facts."),
  })
  .strict();

/** The body of POST /claims/{id}/review: a claim review's decision, or a failed refund review's RETRY / CLOSE. */
export const ReviewRequestSchema = z
  .object({
    ...ReviewDecisionSchema.shape,
    decision: z
      .enum([...ReviewDecisionKindSchema.options, ...RefundReviewRequestSchema.shape.decision.options])
      .describe("RETRY / CLOSE (CLOSE with a note) decide a failed refund's review (origin REFUND_FAILED) only."),
    review_id: RefundReviewRequestSchema.shape.review_id.describe(
      "RETRY / CLOSE: the review decided (GET /reviews review_id); a decision meant for an earlier one is 409.",
    ),
    paid_out_of_band: RefundReviewRequestSchema.shape.paid_out_of_band.describe(
      "CLOSE (required): true when the refund was paid another way (the reservation kept: refunded), false when not (released).",
    ),
  })
  .strict();

/** One item of GET /reviews (core/kernel/review.ts `reviewListItem`). */
export const ReviewListItemSchema = z
  .object({
    review_id: z.string(),
    claim_id: z.string(),
    dfid: z.string(),
    origin: z
      .union([ReviewOriginSchema, z.literal("REFUND_FAILED")])
      .describe("REFUND_FAILED: a failed refund's own review, decided with RETRY or CLOSE."),
    status: ReviewStatusSchema,
    reason_code: z.string(),
    reason: z.string(),
    order_id: z.string().optional(),
    amount: AmountSchema.optional().describe("The amount under review in its currency, when the currency is known."),
    amount_eur: z
      .number()
      .optional()
      .describe("The same amount, kept for compatibility only in EUR (or when the currency is not known)."),
    requested_at: z.string(),
    due_at: z
      .string()
      .optional()
      .describe("When the review is due: requested_at + the policy's review_due_days / review_due_hours."),
    taken_by: z
      .string()
      .optional()
      .describe("The reviewer who took the review at the desk (POST …/review/take), while the lease lasts."),
    taken_until: z
      .string()
      .optional()
      .describe("When that lease runs out (another reviewer's decision is 409 TAKEN_BY until then)."),
    simulation_id: z.string().optional(),
    execution_id: z.string().optional().describe("REFUND_FAILED: the execution the provider refused."),
    outcome: z
      .literal("STORE_CREDIT")
      .optional()
      .describe("REFUND_FAILED: the execution issues store credit, not cash (absent for a refund)."),
    credit: z
      .object({ bonus: AmountSchema, bonus_pct: z.number().int() })
      .strict()
      .optional()
      .describe("REFUND_FAILED store credit: its bonus on top of the amount, and its percentage."),
    provider: z.string().optional().describe("REFUND_FAILED: the payment provider."),
    provider_ref: z
      .string()
      .optional()
      .describe("REFUND_FAILED: the provider's reference for the refund, when it gave one."),
    failure_reason: z.string().optional().describe("REFUND_FAILED: why the provider refused it."),
    retry: z
      .object({ possible: z.boolean(), reason: z.string().optional() })
      .strict()
      .optional()
      .describe("REFUND_FAILED: whether a RETRY can succeed with the order as the shop has it now, and why not."),
    verdict_id: z.string().optional().describe("The kernel's verdict that escalated (ESCALATE reviews)."),
    label: z.string().optional(),
    claim: ClaimSchema.optional().describe("The structured claim (as submitted, or as extracted from free text)."),
    claim_text: z.string().optional().describe("The customer's own words, for a free-text claim."),
    proposal: z.unknown().optional().describe("The Decision Maker's proposal the kernel judged."),
    verdict: VerdictValueSchema.optional(),
    layer: z.number().int().optional().describe("The kernel layer that decided."),
    checks: z.array(z.unknown()).optional().describe("The kernel's checks up to that layer."),
    decision: ReviewDecisionKindSchema.optional(),
    decided_at: z.string().optional(),
    reviewer: z.string().optional(),
    note: z.string().optional(),
    approved_amount: AmountSchema.optional().describe("The amount approved, in its currency."),
    approved_amount_eur: z.number().optional().describe("The amount approved, kept for compatibility only in EUR."),
    resubmitted_claim_id: z.string().optional(),
    approvals: z.array(ReviewApprovalViewSchema).describe("The approvals given, first to last (two under four eyes)."),
    awaiting: ReviewAwaitingSchema.optional().describe(
      "A PENDING review with a first approval awaits a different reviewer's.",
    ),
    order: z
      .object({
        order_id: z.string(),
        amount_eur: z.number().optional().describe("The total in EUR, only for an order in EUR."),
        currency: z.string(),
        purchase_date: z.string(),
        category: z.string(),
        customer_id: z.string().optional(),
        amount: AmountSchema.optional().describe(
          "The order's total in its currency (an order with lines or not in EUR).",
        ),
        shipping: z.string().optional(),
        lines: z
          .array(
            z
              .object({
                line_id: z.string(),
                title: z.string().optional(),
                sku: z.string().optional(),
                category: z.string(),
                quantity: z.number().int(),
                amount: AmountSchema,
              })
              .strict(),
          )
          .optional()
          .describe("The order's lines, each with its title when the shop gives one."),
      })
      .strict()
      .nullable()
      .optional()
      .describe(
        "The order as the shop's data says (absent when the review names none; null when it could not be read: order_unread says why).",
      ),
    order_unread: z
      .object({
        code: z.enum(["ORDER_SOURCE_UNAVAILABLE", "ORDER_DATA_INVALID", "ORDER_NOT_FOUND", "ORDER_NOT_READ"]),
        reason: z.string(),
      })
      .strict()
      .optional()
      .describe("Why `order` is null: the listing never fails for one order the shop cannot serve."),
    refunded: z
      .object({
        automatic: AmountSchema.optional(),
        approved: AmountSchema.optional(),
        automatic_eur: z
          .number()
          .optional()
          .describe("Kept for compatibility only for an EUR order (or one not known)."),
        approved_eur: z
          .number()
          .optional()
          .describe("Kept for compatibility only for an EUR order (or one not known)."),
      })
      .strict()
      .describe("What was refunded on the order so far: by the kernel's ACCEPTs, and by people's approvals."),
    other_claims: z
      .array(
        z
          .object({
            claim_id: z.string(),
            status: z.string(),
            verdict: z.string().optional(),
            reason_code: z.string().optional(),
            amount: AmountSchema.optional().describe("What it reserved, else what it asked, in the order's currency."),
            amount_eur: z
              .number()
              .optional()
              .describe("The same, kept for compatibility only for an EUR order (or one whose currency is not known)."),
          })
          .strict(),
      )
      .describe("The other claims on the order the ledger knows (refunded or under review), with their outcomes."),
    customer_window: z
      .object({
        refunds: z.number().int(),
        refunded: AmountSchema.optional().describe("In the order's currency: only that currency's refunds count."),
        refunded_eur: z.number().optional().describe("Kept for compatibility only for an EUR order."),
      })
      .strict()
      .optional()
      .describe("The customer's automatic refunds in the customer-limit window, when limits are configured."),
  })
  .strict();

/** The answer of POST /claims/{id}/review (pipeline/review.ts). */
export const ReviewResultSchema = z
  .object({
    claim_id: z.string(),
    review: z.union([ReviewViewSchema, RefundReviewViewSchema]),
    executed: z.boolean(),
    execution_id: z
      .string()
      .optional()
      .describe("The refund's execution id (APPROVE, RETRY: RefundExecuted carries it; CLOSE: the execution closed)."),
    resubmitted_claim_id: z.string().optional().describe("The corrected claim (RESUBMIT)."),
  })
  .strict();
