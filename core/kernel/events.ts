// The events on the `claims` bus (docs/events.md), each defined once: its detail-type and the zod schema of its
// detail. Producers build typed entries with `busEntry`, the publisher validates every entry with
// `parseBusEntry` before sending, and consumers and tests parse with the same schemas.
import * as z from "zod";
import { VerdictKindSchema } from "../integrity/verdict.ts";
import { PolicyKindSchema } from "../integrity/contracts.ts";
import { ClaimReasonCodeSchema } from "./reason-codes.ts";
import { ReviewApprovalSchema, ReviewDecisionKindSchema, ReviewOriginSchema, reviewDueAt } from "./review.ts";
import { PaymentProviderNameSchema, RefundReviewDecisionSchema } from "./settlement.ts";
import { AmountSchema, VerdictLineSchema } from "./public-amount.ts";

/** Source of every event the app publishes. */
export const KERNEL_SOURCE = "claims.kernel";

/** `ClaimVerdict` event detail (docs/events.md) and the verdict record stored once per idempotency key. */
export const ClaimVerdictDetailSchema = z
  .object({
    verdict_id: z.string().min(1),
    claim_id: z.string().min(1),
    dfid: z.string().min(1),
    verdict: VerdictKindSchema,
    reason_code: ClaimReasonCodeSchema,
    reason: z.string(),
    order_id: z.string().nullable(),
    amount_eur: z.number().nullable(),
    policy_kind: PolicyKindSchema.nullable(),
    idempotency_key: z.string().regex(/^[0-9a-f]{64}$/),
    decided_at: z.iso.datetime({ offset: true }),
    /** The hash of the claims bounds and contract that decided (`pol_` + 16 hex); absent only on records stored before it existed. */
    policy_version: z
      .string()
      .regex(/^pol_[0-9a-f]{16}$/)
      .optional(),
    simulation_id: z.string().min(1).optional(),
  })
  .strict();

/** The verdict record / `ClaimVerdict` detail; `order_id`, `amount_eur`, `policy_kind` are null when the proposal did not carry a usable value. */
export type ClaimVerdictDetail = z.infer<typeof ClaimVerdictDetailSchema>;

/**
 * `ClaimVerdict` as the bus carries it (docs/events.md): the verdict record with its amount in its currency
 * (`amount`; `amount_eur` kept only for EUR) and, for a claim on an order with lines, `lines[]` — derived when the
 * event is built (core/kernel/public-verdict.ts), never recorded in the audit. `amount` is absent only on events
 * stored before it existed.
 */
export const ClaimVerdictEventSchema = ClaimVerdictDetailSchema.omit({ amount_eur: true }).extend({
  amount_eur: z.number().nullable().optional(),
  amount: AmountSchema.nullable().optional(),
  lines: z.array(VerdictLineSchema).min(1).optional(),
});

/** A `ClaimVerdict` event's detail. */
export type ClaimVerdictEvent = z.infer<typeof ClaimVerdictEventSchema>;

/** Which refund an event is about: its execution, the claim and flow it pays, the order, the amount. */
const REFUND_FIELDS = {
  execution_id: z.string().min(1),
  claim_id: z.string().min(1),
  dfid: z.string().min(1),
  order_id: z.string().min(1),
  /** The amount in EUR, kept for compatibility: present only when the refund is in EUR. */
  amount_eur: z.number().positive().optional(),
  /** The amount in its currency; absent only on events stored before it existed (they are EUR's). */
  amount: AmountSchema.optional(),
};

/**
 * What an event of a refund carries when the ACCEPT gives store credit instead of money back
 * (docs/returns.md#outcomes): `credit`, with the policy's `bonus` on top of the amount (the amount is what the
 * ledger reserved) and its percentage. Absent: a refund to the original payment, as every event before outcomes.
 */
export const StoreCreditSchema = z
  .object({
    bonus: AmountSchema,
    bonus_pct: z.number().int().min(0).max(100),
  })
  .strict();

/** A refund's store credit: its bonus. */
export type StoreCredit = z.infer<typeof StoreCreditSchema>;

const CREDIT_FIELDS = { credit: StoreCreditSchema.optional() };

/** `RefundExecuted` event detail (docs/events.md). */
export const RefundExecutedDetailSchema = z
  .object({
    ...REFUND_FIELDS,
    verdict_id: z.string().min(1),
    /** The reviewer whose approval authorised it (absent: the kernel's ACCEPT did). */
    approved_by: z.string().min(1).optional(),
    simulation_id: z.string().min(1).optional(),
    /** A reviewer's RETRY of a failed refund: the execution it pays again (docs/payments.md). */
    retry_of: z.string().min(1).optional(),
    ...CREDIT_FIELDS,
  })
  .strict();

/** A `RefundExecuted` detail: the refund is authorised and reserved on the ledger; paying the customer is the consumer's job. */
export type RefundExecutedDetail = z.infer<typeof RefundExecutedDetailSchema>;

/**
 * `ReturnRequested` event detail (docs/returns.md): an ACCEPT whose policy asks for the item back. Its refund is
 * reserved on the ledger under `execution_id`; the `RefundExecuted` of that id goes out once the policy's `pay_on`
 * event is posted (`POST /claims/{id}/return-events`). What to send back: the order's `lines` and quantities.
 */
export const ReturnRequestedDetailSchema = z
  .object({
    ...REFUND_FIELDS,
    verdict_id: z.string().min(1),
    /** The lines to send back and how many units of each (empty: the order's one line, as today's one-line orders). */
    lines: z.array(z.object({ line_id: z.string().min(1), quantity: z.number().int().positive() }).strict()),
    pay_on: z.enum(["in_transit", "delivered", "inspected"]),
    /** The customer must send the item by then (the decision plus `return_deadline_days`). */
    return_by: z.iso.datetime({ offset: true }),
    /** The policy's `refund_due_days`: the refund is due that many days after the return is received. */
    refund_due_days: z.number().int().positive(),
    requested_at: z.iso.datetime({ offset: true }),
    simulation_id: z.string().min(1).optional(),
    ...CREDIT_FIELDS,
  })
  .strict();

/** A `ReturnRequested` detail. */
export type ReturnRequestedDetail = z.infer<typeof ReturnRequestedDetailSchema>;

/**
 * `ExchangeRequested` event detail (docs/returns.md#outcomes): an ACCEPT whose outcome is an exchange. No money moves:
 * the shop sends the customer a replacement of the `lines`. The claim's amount stays reserved on the order's ledger
 * under `execution_id` (so no later claim refunds the exchanged item), and no RefundExecuted ever follows.
 */
export const ExchangeRequestedDetailSchema = z
  .object({
    ...REFUND_FIELDS,
    verdict_id: z.string().min(1),
    /** The lines to replace and how many units of each. */
    lines: z.array(z.object({ line_id: z.string().min(1), quantity: z.number().int().positive() }).strict()),
    requested_at: z.iso.datetime({ offset: true }),
    simulation_id: z.string().min(1).optional(),
  })
  .strict();

/** An `ExchangeRequested` detail. */
export type ExchangeRequestedDetail = z.infer<typeof ExchangeRequestedDetailSchema>;

/** `ClaimNeedsReview` event detail (docs/events.md); `reason_code` may be a kernel, ledger or crew code. */
const ClaimNeedsReviewDetailSchema = z
  .object({
    claim_id: z.string().min(1),
    dfid: z.string().min(1),
    reason_code: z.string().min(1),
    reason: z.string(),
    review_id: z.string().min(1),
  })
  .strict();

/** A `ClaimNeedsReview` detail. */
export type ClaimNeedsReviewDetail = z.infer<typeof ClaimNeedsReviewDetailSchema>;

/** `ReviewRequested` event detail (docs/events.md): a person must decide this claim. */
export const ReviewRequestedDetailSchema = z
  .object({
    review_id: z.string().min(1),
    claim_id: z.string().min(1),
    dfid: z.string().min(1),
    origin: ReviewOriginSchema,
    reason_code: z.string().min(1),
    reason: z.string(),
    order_id: z.string().min(1).optional(),
    amount_eur: z.number().optional(),
    /** The amount under review in its currency (`amount_eur` is kept only for EUR). */
    amount: AmountSchema.optional(),
    requested_at: z.iso.datetime({ offset: true }),
    simulation_id: z.string().min(1).optional(),
  })
  .strict();

/** A `ReviewRequested` detail. */
export type ReviewRequestedDetail = z.infer<typeof ReviewRequestedDetailSchema>;

/**
 * `ReviewOpened` event detail (docs/events.md): a review is waiting for a person — an escalation, a claim that
 * needs review, or a failed refund — with when it is due; for notifications.
 */
export const ReviewOpenedDetailSchema = z
  .object({
    review_id: z.string().min(1),
    claim_id: z.string().min(1),
    dfid: z.string().min(1),
    origin: z.union([ReviewOriginSchema, z.literal("REFUND_FAILED")]),
    reason_code: z.string().min(1),
    reason: z.string(),
    order_id: z.string().min(1).optional(),
    amount_eur: z.number().optional(),
    /** The amount under review in its currency (`amount_eur` is kept only for EUR). */
    amount: AmountSchema.optional(),
    requested_at: z.iso.datetime({ offset: true }),
    /** `requested_at` plus the policy's review_due_days / review_due_hours. */
    due_at: z.iso.datetime({ offset: true }),
    simulation_id: z.string().min(1).optional(),
  })
  .strict();

/** A `ReviewOpened` detail. */
export type ReviewOpenedDetail = z.infer<typeof ReviewOpenedDetailSchema>;

/** The `ReviewOpened` of a review announced as `ReviewRequested` (or built alike for a failed refund's), due `dueMs` after it was requested. */
export function reviewOpenedDetail(review: Omit<ReviewOpenedDetail, "due_at">, dueMs: number): ReviewOpenedDetail {
  return { ...review, due_at: reviewDueAt(review.requested_at, dueMs) };
}

/** `ReviewDecided` event detail (docs/events.md): a person decided. */
export const ReviewDecidedDetailSchema = z
  .object({
    review_id: z.string().min(1),
    claim_id: z.string().min(1),
    dfid: z.string().min(1),
    /** APPROVE / DENY / RESUBMIT; RETRY / CLOSE decide a failed refund's review (origin REFUND_FAILED, docs/payments.md). */
    decision: z.union([ReviewDecisionKindSchema, RefundReviewDecisionSchema]),
    /** The authenticated reviewer who completed the decision. */
    reviewer: z.string().min(1),
    note: z.string().optional(),
    amount_eur: z.number().positive().optional(),
    /** The approved amount in its currency (`amount_eur` is kept only for EUR). */
    amount: AmountSchema.optional(),
    execution_id: z.string().min(1).optional(),
    resubmitted_claim_id: z.string().min(1).optional(),
    /** A RETRY: the failed execution it pays again (`execution_id` is the new one; a CLOSE's is the one closed). */
    retry_of: z.string().min(1).optional(),
    /** An APPROVE's approvals, first to last (two under four eyes). */
    approvals: z.array(ReviewApprovalSchema).optional(),
    /** A CLOSE: the refund was paid another way (it counts as refunded) or not (it counts as not refunded). */
    paid_out_of_band: z.boolean().optional(),
    decided_at: z.iso.datetime({ offset: true }),
    simulation_id: z.string().min(1).optional(),
  })
  .strict();

/** A `ReviewDecided` detail. */
export type ReviewDecidedDetail = z.infer<typeof ReviewDecidedDetailSchema>;

/** The detail of `RefundSettled` and `RefundFailed` (docs/payments.md): what the payment provider made of a refund. */
const RefundSettlementDetailSchema = z
  .object({
    ...REFUND_FIELDS,
    provider: PaymentProviderNameSchema,
    provider_ref: z.string().min(1).optional(),
    failure_reason: z.string().optional(),
    /** A batch run's rehearsed answer (docs/payments.md): never a payment. */
    simulation_id: z.string().min(1).optional(),
    ...CREDIT_FIELDS,
  })
  .strict();

/** `RefundSettled` detail: the provider paid the refund. */
export const RefundSettledDetailSchema = RefundSettlementDetailSchema;
/** `RefundFailed` detail: the provider refused it (`failure_reason`); a review of its own decides RETRY or CLOSE. */
export const RefundFailedDetailSchema = RefundSettlementDetailSchema;

/** A `RefundSettled` / `RefundFailed` detail. */
export type RefundSettlementDetail = z.infer<typeof RefundSettlementDetailSchema>;

/** Every bus event by detail-type: the one definition producers, the publisher and consumers share. */
const BUS_EVENTS = {
  ClaimVerdict: ClaimVerdictEventSchema,
  RefundExecuted: RefundExecutedDetailSchema,
  ClaimNeedsReview: ClaimNeedsReviewDetailSchema,
  ReviewRequested: ReviewRequestedDetailSchema,
  ReviewOpened: ReviewOpenedDetailSchema,
  ReviewDecided: ReviewDecidedDetailSchema,
  RefundSettled: RefundSettledDetailSchema,
  RefundFailed: RefundFailedDetailSchema,
  ReturnRequested: ReturnRequestedDetailSchema,
  ExchangeRequested: ExchangeRequestedDetailSchema,
} as const;

/** A detail-type of the `claims` bus. */
type BusEventType = keyof typeof BUS_EVENTS;

/** The detail-types by role, for rule patterns. */
export const DETAIL_TYPES = {
  verdict: "ClaimVerdict",
  refund: "RefundExecuted",
  review: "ClaimNeedsReview",
  reviewRequested: "ReviewRequested",
  reviewOpened: "ReviewOpened",
  reviewDecided: "ReviewDecided",
  refundSettled: "RefundSettled",
  refundFailed: "RefundFailed",
  returnRequested: "ReturnRequested",
  exchangeRequested: "ExchangeRequested",
} as const satisfies Record<string, BusEventType>;

/** One event for the bus: its detail-type and a detail of that type. */
export type BusEntry = {
  [T in BusEventType]: { detailType: T; detail: z.infer<(typeof BUS_EVENTS)[T]> };
}[BusEventType];

/** A typed bus entry. */
export function busEntry<T extends BusEventType>(
  detailType: T,
  detail: z.infer<(typeof BUS_EVENTS)[T]>,
): Extract<BusEntry, { detailType: T }> {
  return { detailType, detail } as Extract<BusEntry, { detailType: T }>;
}

/** The result of checking an entry against its schema. */
type BusEntryCheck = { ok: true; entry: BusEntry } | { ok: false; message: string };

/** Checks that `value` is an entry of a known detail-type whose detail satisfies that type's schema. */
export function parseBusEntry(value: unknown): BusEntryCheck {
  const raw = value as { detailType?: unknown; detail?: unknown } | null;
  const type = raw?.detailType;
  if (typeof type !== "string" || !Object.hasOwn(BUS_EVENTS, type))
    return {
      ok: false,
      message: `unknown detail-type ${JSON.stringify(type)} (known: ${Object.keys(BUS_EVENTS).join(", ")})`,
    };
  const parsed = BUS_EVENTS[type as BusEventType].safeParse(raw?.detail);
  if (!parsed.success) return { ok: false, message: `${type} detail is invalid: ${z.prettifyError(parsed.error)}` };
  return { ok: true, entry: { detailType: type, detail: parsed.data } as BusEntry };
}
