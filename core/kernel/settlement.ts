// Refund settlement (docs/payments.md): what the payment provider made of an authorised refund. One record per
// claim that holds a refund, on its current execution; pure transitions for the provider's answers and webhooks
// (idempotent and safe out of order), the refund's own review when it failed (RETRY / CLOSE), and the
// reconciliation of every authorised refund with its settlement.
import * as z from "zod";
import { hashHex } from "../crew/hash.ts";
import { add, formatMoney, money, moneyJson, parseMoney, toMajor, zero, type Money } from "./money.ts";
import { isCurrencyCode } from "../integrity/currency.ts";
import { deskFields } from "./review.ts";
import type { ReviewDesk } from "./review.ts";

/**
 * The name of the payment provider a refund was paid through (`PAYMENT_PROVIDER`: `simulated`, `stripe`, …), as
 * settlements and RefundSettled / RefundFailed record it. Data, not a list: the providers are the app's registry
 * (app/payment-provider.ts), and a recorded name stays readable whatever the registry holds later.
 */
export const PaymentProviderNameSchema = z.string().regex(/^[a-z][a-z0-9_-]*$/);

/** A payment provider's name, as recorded. */
export type PaymentProviderName = z.infer<typeof PaymentProviderNameSchema>;

/** Where a refund's money stands: asked for and not yet known, paid, or refused by the provider. */
export const SettlementStatusSchema = z.enum(["PENDING", "SETTLED", "FAILED"]);

/** A settlement status. */
export type SettlementStatus = z.infer<typeof SettlementStatusSchema>;

/** A person's decision on a failed refund: pay again (a new execution id), or close it unpaid. */
export const RefundReviewDecisionSchema = z.enum(["RETRY", "CLOSE"]);

/** RETRY or CLOSE. */
export type RefundReviewDecision = z.infer<typeof RefundReviewDecisionSchema>;

/** The review a failed refund opens: origin REFUND_FAILED, id derived from the failed execution. */
export const RefundReviewSchema = z
  .object({
    review_id: z.string().min(1),
    origin: z.literal("REFUND_FAILED"),
    execution_id: z.string().min(1),
    status: z.enum(["PENDING", "RETRIED", "CLOSED"]),
    reason_code: z.literal("REFUND_FAILED"),
    reason: z.string(),
    requested_at: z.iso.datetime({ offset: true }),
    decided_at: z.iso.datetime({ offset: true }).optional(),
    decision: RefundReviewDecisionSchema.optional(),
    reviewer: z.string().min(1).optional(),
    note: z.string().optional(),
    /** RETRY: the execution that pays again. */
    retry_execution_id: z.string().min(1).optional(),
    /** CLOSE: whether the refund was paid another way (kept as refunded) or not (released). */
    paid_out_of_band: z.boolean().optional(),
    /** Who took the review at the desk (`POST /claims/{id}/review/take`), until when: another reviewer's decision waits. */
    taken_by: z.string().min(1).optional(),
    taken_until: z.iso.datetime({ offset: true }).optional(),
    /** The decision's effects (release, audit, ReviewDecided, a RETRY's RefundExecuted) were all performed. */
    performed: z.literal(true).optional(),
  })
  .strict();

/** A failed refund's review. */
export type RefundReview = z.infer<typeof RefundReviewSchema>;

/**
 * Whether a decided refund review leaves the claim's reservation released on the order's ledger: a CLOSE of a refund
 * nobody paid. A CLOSE recorded as paid out of band (`paid_out_of_band: true`, the review desk's CLOSE) keeps it —
 * the money was refunded, by other means. The one place that says which CLOSE releases: the decision's effects,
 * the chaos invariants and the crash-repair tests read it (issue 39).
 */
export function closeReleasesReservation(review: RefundReview | undefined): boolean {
  return review?.status === "CLOSED" && (review as { paid_out_of_band?: unknown }).paid_out_of_band !== true;
}

/** One provider attempt at paying the claim's refund. */
const AttemptSchema = z
  .object({
    execution_id: z.string().min(1),
    status: SettlementStatusSchema,
    provider_ref: z.string().min(1).optional(),
    failure_reason: z.string().optional(),
  })
  .strict();

/** The settlement of one claim's refund, stored once per claim and changed by conditional updates on `version`. */
export const SettlementRecordSchema = z
  .object({
    claim_id: z.string().min(1),
    dfid: z.string().min(1),
    order_id: z.string().min(1),
    /** The amount in major units of `currency` (its name is from before currencies). */
    amount_eur: z.number().positive(),
    /** The refund's currency, when not EUR (absent: EUR, as every settlement recorded before currencies). */
    currency: z.string().length(3).optional(),
    /** The verdict that authorised the refund (a RETRY's RefundExecuted carries it again). */
    verdict_id: z.string().min(1),
    provider: PaymentProviderNameSchema,
    /** The execution being paid now (the idempotency key of the provider call). */
    execution_id: z.string().min(1),
    status: SettlementStatusSchema,
    provider_ref: z.string().min(1).optional(),
    failure_reason: z.string().optional(),
    requested_at: z.iso.datetime({ offset: true }),
    updated_at: z.iso.datetime({ offset: true }),
    /** Earlier attempts (a failed execution a reviewer retried). */
    attempts: z.array(AttemptSchema).default([]),
    /** The current execution's review, when it failed. */
    review: RefundReviewSchema.optional(),
    /** The status already announced on the bus (RefundSettled / RefundFailed), so a redelivery announces once. */
    announced: SettlementStatusSchema.optional(),
    /**
     * A batch run's refund, whose provider answer the run rehearsed with the simulated provider (docs/payments.md,
     * "Rehearsing a failed refund in a batch"): carried on everything the settlement announces, and on a RETRY's
     * RefundExecuted, so nothing of it ever reaches a payment provider.
     */
    simulation_id: z.string().min(1).optional(),
    /**
     * Store credit instead of money back (docs/returns.md#outcomes): `amount_eur` is the base (what the ledger
     * reserved), `bonus_minor` the policy's bonus on top (`bonus_pct` percent), in the same currency's minor
     * units. Absent: a refund.
     */
    outcome: z.literal("STORE_CREDIT").optional(),
    bonus_minor: z.number().int().nonnegative().optional(),
    bonus_pct: z.number().int().min(0).max(100).optional(),
    version: z.number().int().positive(),
  })
  .strict();

/** A claim's refund settlement. */
export type SettlementRecord = z.infer<typeof SettlementRecordSchema>;

/** A settlement's store credit as events carry it (`credit`: its bonus and percentage); none for a refund. */
export function settlementCredit(record: SettlementRecord): {
  credit?: { bonus: { value: string; currency: string }; bonus_pct: number };
} {
  if (record.outcome !== "STORE_CREDIT") return {};
  const bonus = moneyJson(money(record.bonus_minor ?? 0, record.currency ?? "EUR"));
  return { credit: { bonus, bonus_pct: record.bonus_pct ?? 0 } };
}

/**
 * What the claim view shows of it: `refund: { status, provider_ref?, failure_reason? }`; for store credit also
 * `outcome: "STORE_CREDIT"`, the `bonus` and, once SETTLED, `settled_at` (docs/returns.md#outcomes).
 */
export function refundView(record: SettlementRecord): {
  status: SettlementStatus;
  provider_ref?: string;
  failure_reason?: string;
} {
  return {
    status: record.status,
    ...(record.outcome === "STORE_CREDIT"
      ? {
          outcome: record.outcome,
          bonus: moneyJson(money(record.bonus_minor ?? 0, record.currency ?? "EUR")),
          ...(record.status === "SETTLED" ? { settled_at: record.updated_at } : {}),
        }
      : {}),
    ...(record.provider_ref === undefined ? {} : { provider_ref: record.provider_ref }),
    ...(record.failure_reason === undefined ? {} : { failure_reason: record.failure_reason }),
  };
}

/**
 * The claim view's `refund`: the settlement and, once the refund failed, its own review (origin REFUND_FAILED); with
 * the desk, when the review is due and who holds it.
 */
export function refundClaimView(record: SettlementRecord, desk?: ReviewDesk): Record<string, unknown> {
  const review = record.review;
  return {
    ...refundView(record),
    ...(review
      ? {
          review: {
            review_id: review.review_id,
            origin: review.origin,
            status: review.status,
            reason_code: review.reason_code,
            reason: review.reason,
            requested_at: review.requested_at,
            ...deskFields(review, desk),
            ...(review.decided_at ? { decided_at: review.decided_at } : {}),
            ...(review.decision ? { decision: review.decision } : {}),
            ...(review.reviewer ? { reviewer: review.reviewer } : {}),
            ...(review.note !== undefined ? { note: review.note } : {}),
            ...(review.retry_execution_id ? { retry_execution_id: review.retry_execution_id } : {}),
            ...(review.paid_out_of_band !== undefined ? { paid_out_of_band: review.paid_out_of_band } : {}),
          },
        }
      : {}),
  };
}

/**
 * The provider's failures no retry fixes (docs/payments.md, "Which failures a RETRY can fix"): the payment is
 * refunded or disputed already. A balance too low, a replaced card, a network error or a 5xx can be.
 */
const FINAL_REFUND_FAILURES: readonly { code: RegExp; why: string }[] = [
  {
    code: /\b(charge_already_refunded|charge_disputed|charge_for_pending_refund_disputed)\b/,
    why: "the payment is refunded or disputed already: check it in the provider's dashboard, then close",
  },
];

/**
 * Why a RETRY of the claim's failed refund cannot succeed with the order as it is now, or undefined (it may): a
 * provider other than the simulated one refunds a payment, so the order must name one — a Stripe payment intent
 * (`pi_…`) or charge (`ch_…`) in `payment_ref`. Fix the order in the shop, then retry; or close it. And a
 * failure no retry fixes (`failureReason`, FINAL_REFUND_FAILURES) blocks it whatever the order.
 */
export function refundRetryBlocked(
  provider: PaymentProviderName,
  order: { order_id: string; payment_ref?: string | undefined } | undefined,
  failureReason?: string,
): string | undefined {
  const final = failureReason === undefined ? undefined : FINAL_REFUND_FAILURES.find((f) => f.code.test(failureReason));
  if (final) return final.why;
  if (provider === "simulated" || order === undefined) return undefined;
  if (!order.payment_ref)
    return `order ${order.order_id} has no payment_ref to refund: give it one in the shop, or close`;
  if (!/^(pi|ch)_/.test(order.payment_ref))
    return `payment_ref of order ${order.order_id} is neither a payment intent (pi_…) nor a charge (ch_…): fix it in the shop, or close`;
  return undefined;
}

/** The id of the review a failed execution opens: `rev_` and a hash of the execution id (stable across redeliveries). */
export function refundReviewId(executionId: string): string {
  return `rev_${hashHex(`REFUND_FAILED\n${executionId}`).slice(0, 24)}`;
}

/** The execution id of a RETRY: derived from the failed one, so a repeated RETRY asks for the same new payment. */
export function retryExecutionId(failedExecutionId: string): string {
  return `exe_${hashHex(`RETRY\n${failedExecutionId}`).slice(0, 32)}`;
}

/** The provider's word on an execution: from its answer to the refund call or from a webhook. */
export type ProviderUpdate = {
  readonly execution_id: string;
  readonly status: SettlementStatus;
  readonly provider_ref?: string;
  readonly failure_reason?: string;
};

/**
 * Applies the provider's word to the record. Idempotent (the same update twice changes nothing) and safe out of
 * order: PENDING never replaces a SETTLED or FAILED status, a FAILED execution stays failed, and a SETTLED one can
 * only turn FAILED (a provider may reverse a refund it first reported paid). An update for an earlier attempt
 * changes that attempt only. A FAILED outcome opens the execution's review (once).
 */
export function applyProviderUpdate(
  record: SettlementRecord,
  update: ProviderUpdate,
  at: string,
): { changed: false } | { changed: true; next: SettlementRecord; became?: "SETTLED" | "FAILED" } {
  if (update.execution_id !== record.execution_id) {
    const i = record.attempts.findIndex((a) => a.execution_id === update.execution_id);
    const attempt = record.attempts[i];
    if (!attempt || !moves(attempt.status, update.status)) return { changed: false };
    const attempts = record.attempts.map((a, k) => (k === i ? { ...a, ...fieldsOf(update) } : a));
    return { changed: true, next: { ...record, attempts, updated_at: at, version: record.version + 1 } };
  }
  const sameRef = update.provider_ref === undefined || update.provider_ref === record.provider_ref;
  if (!moves(record.status, update.status) && !(record.status === update.status && !sameRef && !record.provider_ref))
    return { changed: false };
  const next: SettlementRecord = {
    ...record,
    ...fieldsOf(update),
    updated_at: at,
    version: record.version + 1,
  };
  if (update.status === "FAILED" && record.review?.execution_id !== record.execution_id)
    next.review = {
      review_id: refundReviewId(record.execution_id),
      origin: "REFUND_FAILED",
      execution_id: record.execution_id,
      status: "PENDING",
      reason_code: "REFUND_FAILED",
      reason: `The payment provider refused the refund: ${update.failure_reason ?? "no reason given"}`,
      requested_at: at,
    };
  const became = update.status === record.status ? undefined : update.status === "PENDING" ? undefined : update.status;
  return { changed: true, next, ...(became ? { became } : {}) };
}

/** Whether a status may follow another (see applyProviderUpdate). */
function moves(from: SettlementStatus, to: SettlementStatus): boolean {
  if (from === to) return false;
  if (from === "PENDING") return to !== "PENDING";
  return from === "SETTLED" && to === "FAILED";
}

function fieldsOf(update: ProviderUpdate) {
  return {
    status: update.status,
    ...(update.provider_ref === undefined ? {} : { provider_ref: update.provider_ref }),
    ...(update.failure_reason === undefined ? {} : { failure_reason: update.failure_reason }),
  };
}

/** A refund authorised (RefundExecuted), settled, failed or closed unpaid: what reconciliation reads. */
export type SettlementFact =
  | {
      kind: "executed";
      execution_id: string;
      claim_id: string;
      /** The amount in major units of `currency` (its name is from before currencies). */
      amount_eur: number;
      /** The refund's currency when not EUR (absent: EUR). */
      currency?: string;
      at: string;
      /** A RETRY's new execution replaces this one. */
      retry_of?: string;
    }
  | {
      kind: "settled" | "failed";
      execution_id: string;
      provider_ref?: string;
      failure_reason?: string;
      at: string;
    }
  | { kind: "closed"; execution_id: string; at: string; paid_out_of_band?: boolean };

/** One authorised refund as reconciled. */
export type ReconciledRefund = {
  claim_id: string;
  execution_id: string;
  /** The amount in major units of `currency` (EUR when absent). */
  amount_eur: number;
  currency?: string;
  /** PAID_OUT_OF_BAND: a failed refund a reviewer CLOSEd as paid another way (counted as settled). */
  status: SettlementStatus | "CLOSED" | "PAID_OUT_OF_BAND";
  provider_ref?: string;
  failure_reason?: string;
  authorised_at: string;
};

/** Every authorised refund with its settlement, and the totals by status. */
export type Reconciliation = {
  refunds: ReconciledRefund[];
  /**
   * The totals by status, in EUR over the EUR refunds; the refunds in other currencies are totalled apart, per
   * currency (`currencies`, present when there are any): no two currencies are ever added.
   */
  totals: {
    settled_eur: number;
    pending_eur: number;
    failed_eur: number;
    currencies?: Record<string, { settled: string; pending: string; failed: string }>;
  };
};

/**
 * Folds the facts into one line per authorised execution (the last word on each wins; a RETRY's failed
 * execution is left out once its new execution exists, a CLOSED one counts as not refunded), authorised at
 * or after `since`. Totals are summed in cents.
 */
export function reconcile(facts: readonly SettlementFact[], since?: string): Reconciliation {
  const byExecution = new Map<string, ReconciledRefund>();
  const retried = new Set<string>();
  for (const fact of facts) {
    if (fact.kind === "executed") {
      if (fact.retry_of !== undefined) retried.add(fact.retry_of);
      if (!byExecution.has(fact.execution_id))
        byExecution.set(fact.execution_id, {
          claim_id: fact.claim_id,
          execution_id: fact.execution_id,
          amount_eur: fact.amount_eur,
          ...(fact.currency === undefined || fact.currency === "EUR" ? {} : { currency: fact.currency }),
          status: "PENDING",
          authorised_at: fact.at,
        });
      continue;
    }
    const line = byExecution.get(fact.execution_id);
    if (!line) continue;
    if (fact.kind === "closed") {
      line.status = fact.paid_out_of_band ? "PAID_OUT_OF_BAND" : "CLOSED";
      continue;
    }
    const next = fact.kind === "settled" ? "SETTLED" : "FAILED";
    if (line.status === "CLOSED" || line.status === "PAID_OUT_OF_BAND" || line.status === "FAILED") continue;
    line.status = next;
    if (fact.provider_ref !== undefined) line.provider_ref = fact.provider_ref;
    if (fact.failure_reason !== undefined) line.failure_reason = fact.failure_reason;
  }
  const refunds = [...byExecution.values()]
    .filter((r) => !retried.has(r.execution_id) && r.status !== "CLOSED")
    .filter((r) => since === undefined || r.authorised_at >= since);
  const byCurrency = new Map<string, Record<SettlementStatus, Money>>();
  const totalsOf = (currency: string) => {
    const found = byCurrency.get(currency);
    if (found) return found;
    const fresh = { SETTLED: zero(currency), PENDING: zero(currency), FAILED: zero(currency) };
    byCurrency.set(currency, fresh);
    return fresh;
  };
  const totals = totalsOf("EUR");
  for (const r of refunds) {
    const currency = r.currency ?? "EUR";
    const amount = isCurrencyCode(currency) ? parseMoney(r.amount_eur, currency) : undefined;
    const status = r.status === "PAID_OUT_OF_BAND" ? "SETTLED" : r.status;
    if (amount?.ok && status !== "CLOSED") {
      const t = totalsOf(currency);
      t[status] = add(t[status], amount.money);
    }
  }
  const others = [...byCurrency.entries()].filter(([c]) => c !== "EUR").sort(([a], [b]) => a.localeCompare(b));
  return {
    refunds,
    totals: {
      settled_eur: toMajor(totals.SETTLED),
      pending_eur: toMajor(totals.PENDING),
      failed_eur: toMajor(totals.FAILED),
      ...(others.length > 0
        ? {
            currencies: Object.fromEntries(
              others.map(([c, t]) => [
                c,
                { settled: formatMoney(t.SETTLED), pending: formatMoney(t.PENDING), failed: formatMoney(t.FAILED) },
              ]),
            ),
          }
        : {}),
    },
  };
}

/** The reconciliation of stored settlements (the served report): each claim's current execution, CLOSED ones left out. */
export function reconcileSettlements(records: readonly SettlementRecord[]): Reconciliation {
  return reconcile(
    records.flatMap((r): SettlementFact[] => [
      {
        kind: "executed",
        execution_id: r.execution_id,
        claim_id: r.claim_id,
        amount_eur: r.amount_eur,
        ...(r.currency === undefined ? {} : { currency: r.currency }),
        at: r.requested_at,
      },
      ...(r.status === "PENDING"
        ? []
        : [
            {
              kind: r.status === "SETTLED" ? ("settled" as const) : ("failed" as const),
              execution_id: r.execution_id,
              at: r.updated_at,
              ...(r.provider_ref === undefined ? {} : { provider_ref: r.provider_ref }),
              ...(r.failure_reason === undefined ? {} : { failure_reason: r.failure_reason }),
            },
          ]),
      ...(r.review?.status === "CLOSED"
        ? [
            {
              kind: "closed" as const,
              execution_id: r.execution_id,
              at: r.updated_at,
              ...(r.review.paid_out_of_band ? { paid_out_of_band: true } : {}),
            },
          ]
        : []),
    ]),
  );
}
