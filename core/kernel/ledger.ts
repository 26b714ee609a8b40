// The refund ledger in integer cents, one entry per order: what each claim has reserved, how much of it the
// kernel refunded without a human (bounded by the escalation limit in total, so splitting a claim never gets
// around a person), which reservations a reviewer approved, and which claims on the order await a review.
// Two claims never exceed the order; the same claim never refunds twice.
import * as z from "zod";
import { LedgerInvariantError } from "../integrity/errors.ts";
import { add, compare, describeMoney, eur, formatShort, money } from "./money.ts";
import type { Money } from "./money.ts";
import { assertLineCounts, lineCharge, lineFields, withCharge } from "./ledger-lines.ts";

export { lineCharge } from "./ledger-lines.ts";

/**
 * A person's decision that binds the order: a DENY, an APPROVE of `approved_cents` where `proposed_cents` was asked,
 * or the CLOSE of a failed refund (paid out of band or not).
 */
export const PersonDecisionSchema = z.union([
  z.object({ claim_id: z.string().min(1), decision: z.literal("DENY") }).strict(),
  z.object({ claim_id: z.string().min(1), decision: z.literal("CLOSE"), paid_out_of_band: z.boolean() }).strict(),
  z
    .object({
      claim_id: z.string().min(1),
      decision: z.literal("APPROVE"),
      approved_cents: z.number().int().positive(),
      proposed_cents: z.number().int().positive(),
    })
    .strict(),
]);

/** A person's binding decision on an order. */
export type PersonDecision = z.infer<typeof PersonDecisionSchema>;

/** One order's refund ledger. */
export const LedgerEntrySchema = z
  .object({
    order_id: z.string().min(1),
    /** Every reservation on the order, in cents. */
    refunded_cents: z.number().int().nonnegative(),
    /** Cents reserved per claim id. */
    claims: z.record(z.string(), z.number().int().positive()),
    /** Of `refunded_cents`, what ACCEPT verdicts reserved (no human): never above the escalation limit in total. */
    automatic_cents: z.number().int().nonnegative().optional(),
    /** Claims whose reservation a reviewer approved (sorted). */
    approved: z.array(z.string().min(1)).optional(),
    /** Claims on this order that await a human review (sorted): while any does, no automatic refund is made. */
    pending_reviews: z.array(z.string().min(1)).optional(),
    /**
     * The decisions of people that bind the order (sorted by claim): a DENY, or an APPROVE of less than proposed.
     * While any is recorded, nothing more is refunded on the order without a person.
     */
    decisions: z.array(PersonDecisionSchema).optional(),
    /**
     * Claims whose reservation was released (their failed refund CLOSEd unpaid, sorted): a claim reserves at most
     * once on an order, so a released one is never reserved again — not by a repeated or repaired approval either.
     */
    released: z.array(z.string().min(1)).optional(),
    /**
     * On an order with lines (docs/orders.md#orders-with-lines): the most that may have been refunded on each line, by
     * line id, over every claim — never above what was paid for the line. A claim whose line is known adds what it
     * takes from it; one whose line is not known (a person approved a LINE_AMBIGUOUS claim) adds to every line as much
     * as it could have taken from it.
     */
    line_cents: z.record(z.string(), z.number().int().nonnegative()).optional(),
    /** Of `refunded_cents`, at most what was refunded for shipping (only with the last line, `refund_shipping`). */
    shipping_cents: z.number().int().nonnegative().optional(),
    /** What each claim added to `line_cents` and `shipping_cents`, so a released claim gives back exactly that. */
    claim_lines: z
      .record(
        z.string(),
        z.lazy(() => ClaimLinesSchema),
      )
      .optional(),
  })
  .strict();

/** What one claim's reservation counts against the lines of an order with lines and its shipping. */
export const ClaimLinesSchema = z
  .object({
    lines: z.record(z.string(), z.number().int().positive()),
    shipping: z.number().int().positive().optional(),
  })
  .strict();

/** What one claim's reservation counts against an order's lines and shipping. */
export type ClaimLines = z.infer<typeof ClaimLinesSchema>;

/**
 * The lines of an order with lines, for a reservation (minor units of the order's currency): the ledger keeps every
 * line at most what was paid for it over all claims, and refunds shipping only with the last line.
 */
export type LineReserve = {
  /** What was paid for each line of the order, by line id. */
  readonly paid: Readonly<Record<string, number>>;
  /** The shipping the policy lets refund (`refund_shipping: with_last_line`); 0 when it is never refunded. */
  readonly shipping: number;
  /**
   * What the claim takes from each line it is about; what the reservation holds beyond them is shipping. Absent when
   * the claim's line is not known (a person approved a LINE_AMBIGUOUS claim): the reservation then counts against
   * every line and the shipping as much as it could have taken from each.
   */
  readonly claimed?: Readonly<Record<string, number>>;
};

/** One order's refund ledger entry. */
export type LedgerEntry = z.infer<typeof LedgerEntrySchema>;

/** Why a reservation was refused. */
export type ReserveErrorCode =
  | "ALREADY_REFUNDED_FOR_CLAIM"
  | "EXCEEDS_ORDER_AMOUNT"
  | "EXCEEDS_AUTOMATIC_LIMIT"
  | "REVIEW_PENDING_ON_ORDER"
  | "PRIOR_DECISION_ON_ORDER"
  /** Refused on the customer's window (reserved before the order's ledger), never by the order's ledger itself. */
  | "CUSTOMER_LIMIT_EXCEEDED"
  /** An approval decided on the order's approvals as they were read: another approval landed since (read again, decide again). */
  | "APPROVALS_CHANGED"
  /** On an order with lines: the refunds of a line over all claims would pass what was paid for it. */
  | "EXCEEDS_LINE_AMOUNT"
  /** On an order with lines: shipping asked while the policy never refunds it, before the last line, or twice. */
  | "SHIPPING_NOT_REFUNDABLE";

/** The result of a reservation: the entry after it, or the refusal with the entry as it stands. */
export type ReserveResult =
  | { ok: true; entry: LedgerEntry }
  | { ok: false; code: ReserveErrorCode; message: string; entry: LedgerEntry };

/**
 * Who decided the refund: the kernel on its own (an ACCEPT: bounded by `limitCents` of automatic refunds on
 * the order in total, and refused while another claim on the order awaits a review), or a reviewer's approval
 * (lifts both, and closes the claim's own pending review).
 */
export type ReserveMode =
  | { kind: "automatic"; limitCents: number }
  | {
      kind: "approved";
      /**
       * How many approved reservations the order held when the approval was decided (four eyes per order counts the
       * money one reviewer approved on it, docs/reviews.md#four-eyes): refused APPROVALS_CHANGED when it holds another
       * number now, so two approvals racing on one order are decided one after the other. Absent: not checked.
       */
      approvedCount?: number;
    };

/** A ledger entry for an order nothing has been refunded on yet. */
export function emptyLedgerEntry(orderId: string): LedgerEntry {
  return { order_id: orderId, refunded_cents: 0, claims: {} };
}

/** Whether the claim's reservation on the entry was released (its refund closed unpaid): it never reserves there again. */
export function refundReleased(entry: LedgerEntry | undefined, claimId: string): boolean {
  return (entry?.released ?? []).includes(claimId);
}

/** The cents this claim has reserved on the entry, if any (own members only). */
export function reservedForClaim(entry: LedgerEntry | undefined, claimId: string): number | undefined {
  return entry && Object.hasOwn(entry.claims, claimId) ? entry.claims[claimId] : undefined;
}

/** What the kernel refunded on the order without a human, leaving out `exceptClaimId`'s own automatic reservation. */
export function automaticRefundedCents(entry: LedgerEntry | undefined, exceptClaimId?: string): number {
  if (!entry) return 0;
  const own =
    exceptClaimId !== undefined && !(entry.approved ?? []).includes(exceptClaimId)
      ? (reservedForClaim(entry, exceptClaimId) ?? 0)
      : 0;
  return (entry.automatic_cents ?? 0) - own;
}

/** The claims on the order awaiting a review, other than `exceptClaimId`. */
export function otherPendingReviews(entry: LedgerEntry | undefined, exceptClaimId?: string): string[] {
  return (entry?.pending_reviews ?? []).filter((c) => c !== exceptClaimId);
}

/** The people's decisions that bind the order, other than on `exceptClaimId` itself. */
export function bindingDecisions(entry: LedgerEntry | undefined, exceptClaimId?: string): PersonDecision[] {
  return (entry?.decisions ?? []).filter((d) => d.claim_id !== exceptClaimId);
}

/** A person's decision in words, with its figures: "claim c DENIED", "claim c APPROVED for 900.00 of 1200.00 EUR". */
export function describeDecision(d: PersonDecision): string {
  if (d.decision === "CLOSE")
    return `a person closed the failed refund of claim ${d.claim_id} (${d.paid_out_of_band ? "paid out of band" : "not paid"})`;
  return d.decision === "DENY"
    ? `a person denied claim ${d.claim_id}`
    : `a person approved claim ${d.claim_id} for ${formatShort(eur(d.approved_cents))} of the ${describeMoney(eur(d.proposed_cents))} proposed`;
}

/** The entry with the person's decision recorded (idempotent: a decision already recorded for the claim stays). */
export function recordDecision(entry: LedgerEntry, decision: PersonDecision): LedgerEntry {
  assertLedgerEntry(entry);
  const parsed = PersonDecisionSchema.safeParse(decision);
  if (!parsed.success) throw new LedgerInvariantError(`recordDecision: ${z.prettifyError(parsed.error)}`);
  if ((entry.decisions ?? []).some((d) => d.claim_id === decision.claim_id)) return entry;
  const decisions = [...(entry.decisions ?? []), parsed.data].sort((a, b) => (a.claim_id < b.claim_id ? -1 : 1));
  return normalised({ ...entry, decisions });
}

/**
 * Throws `LedgerInvariantError` unless the entry is well formed: `refunded_cents` is the sum of its claims,
 * `automatic_cents` the sum of the claims no reviewer approved, and every approved claim holds a reservation.
 */
export function assertLedgerEntry(entry: LedgerEntry): void {
  const parsed = LedgerEntrySchema.safeParse(entry);
  if (!parsed.success)
    throw new LedgerInvariantError(`ledger entry is malformed: ${z.prettifyError(parsed.error)}`, {
      cause: parsed.error,
    });
  const sum = Object.values(entry.claims).reduce((a, b) => a + b, 0);
  if (sum !== entry.refunded_cents) {
    throw new LedgerInvariantError(
      `ledger entry for ${entry.order_id}: refunded_cents ${entry.refunded_cents} ≠ sum of claims ${sum}`,
    );
  }
  const approved = entry.approved ?? [];
  for (const claimId of approved) {
    if (reservedForClaim(entry, claimId) === undefined)
      throw new LedgerInvariantError(
        `ledger entry for ${entry.order_id}: approved claim ${claimId} holds no reservation`,
      );
  }
  for (const claimId of entry.released ?? []) {
    if (reservedForClaim(entry, claimId) !== undefined)
      throw new LedgerInvariantError(
        `ledger entry for ${entry.order_id}: released claim ${claimId} holds a reservation`,
      );
  }
  assertLineCounts(entry);
  const decided = (entry.decisions ?? []).map((d) => d.claim_id);
  if (new Set(decided).size !== decided.length)
    throw new LedgerInvariantError(`ledger entry for ${entry.order_id}: a claim has two recorded decisions`);
  const automatic = Object.entries(entry.claims)
    .filter(([c]) => !approved.includes(c))
    .reduce((a, [, cents]) => a + cents, 0);
  if (automatic !== (entry.automatic_cents ?? 0)) {
    throw new LedgerInvariantError(
      `ledger entry for ${entry.order_id}: automatic_cents ${entry.automatic_cents ?? 0} ≠ sum of unapproved claims ${automatic}`,
    );
  }
}

const sortedWith = (list: readonly string[] | undefined, add: string) => [...new Set([...(list ?? []), add])].sort();
const sortedWithout = (list: readonly string[] | undefined, remove: string) => (list ?? []).filter((c) => c !== remove);

/** Drops empty optional lists and a zero automatic total, so entries compare equal however they were built. */
function normalised(entry: LedgerEntry): LedgerEntry {
  const {
    automatic_cents,
    approved,
    pending_reviews,
    decisions,
    released,
    line_cents,
    shipping_cents,
    claim_lines,
    ...rest
  } = entry;
  const lines = Object.entries(line_cents ?? {}).filter(([, m]) => m > 0);
  return {
    ...rest,
    ...(lines.length > 0 ? { line_cents: Object.fromEntries(lines) } : {}),
    ...(shipping_cents ? { shipping_cents } : {}),
    ...(claim_lines && Object.keys(claim_lines).length > 0 ? { claim_lines } : {}),
    ...(automatic_cents ? { automatic_cents } : {}),
    ...(approved && approved.length > 0 ? { approved } : {}),
    ...(pending_reviews && pending_reviews.length > 0 ? { pending_reviews } : {}),
    ...(decisions && decisions.length > 0 ? { decisions } : {}),
    ...(released && released.length > 0 ? { released } : {}),
  };
}

/**
 * Why the ledger refuses `cents` for the claim on this entry, in the order `reserveRefund` checks (the claim already on
 * the ledger, the order's amount, then for an automatic refund the limit, another claim's pending review and a
 * person's binding decision); `undefined` when it fits. The entry is taken as well formed (`reserveRefund` checks it
 * first; a simulation that only ever changes its entries through these rules may skip the check).
 */
export function reservationRefusal(
  entry: LedgerEntry,
  claimId: string,
  cents: number,
  orderCents: number,
  mode: ReserveMode,
  lines?: LineReserve,
): { code: ReserveErrorCode; message: string } | undefined {
  const existing = reservedForClaim(entry, claimId);
  if (existing !== undefined)
    return {
      code: "ALREADY_REFUNDED_FOR_CLAIM",
      message: `Claim ${claimId} already refunded ${describeMoney(eur(existing))} on order ${entry.order_id}`,
    };
  if (refundReleased(entry, claimId))
    return {
      code: "ALREADY_REFUNDED_FOR_CLAIM",
      message: `Claim ${claimId} already had its refund on order ${entry.order_id} (it failed and was closed unpaid): a claim reserves once`,
    };
  const amount = eur(cents);
  const refunded = eur(entry.refunded_cents);
  if (compare(add(refunded, amount), eur(orderCents)) > 0)
    return {
      code: "EXCEEDS_ORDER_AMOUNT",
      message: `Refund of ${describeMoney(amount)} on order ${entry.order_id} exceeds the order amount ${describeMoney(eur(orderCents))} (already refunded ${describeMoney(refunded)})`,
    };
  if (lines !== undefined) {
    const charged = lineCharge(entry, cents, lines);
    if (!charged.ok) return { code: charged.code, message: charged.message };
  }
  if (mode.kind !== "automatic") {
    const approved = (entry.approved ?? []).length;
    return mode.approvedCount === undefined || mode.approvedCount === approved
      ? undefined
      : {
          code: "APPROVALS_CHANGED",
          message: `Order ${entry.order_id} holds ${approved} approved refunds, not the ${mode.approvedCount} this approval was decided on`,
        };
  }
  const automatic = add(eur(entry.automatic_cents ?? 0), amount);
  if (compare(automatic, eur(mode.limitCents)) > 0)
    return {
      code: "EXCEEDS_AUTOMATIC_LIMIT",
      message: `Automatic refunds on order ${entry.order_id} would reach ${describeMoney(automatic)}, above the ${describeMoney(eur(mode.limitCents))} a refund may reach without a human`,
    };
  const pending = otherPendingReviews(entry, claimId);
  if (pending.length > 0)
    return {
      code: "REVIEW_PENDING_ON_ORDER",
      message: `Order ${entry.order_id} has a claim awaiting human review (${pending.join(", ")})`,
    };
  // Any recorded decision, even one on this claim (it never reserves automatically after a person decided it).
  const bound = bindingDecisions(entry);
  if (bound.length > 0)
    return {
      code: "PRIOR_DECISION_ON_ORDER",
      message: `On order ${entry.order_id} ${bound.map(describeDecision).join("; ")}: no automatic refund on it`,
    };
  return undefined;
}

/**
 * Pure reservation, the rule the conditional write enforces, in this order: refused when the claim is already
 * on the ledger (whatever the amount), when refunded + cents would exceed the order, and — for an automatic
 * refund only — when the automatic refunds on the order would pass `limitCents` or another claim on the order
 * awaits a review. An approved reservation closes the claim's own pending review. The input entry is never
 * mutated. Non-positive or non-integer cents are a caller bug and throw.
 */
export function reserveRefund(
  entry: LedgerEntry,
  claimId: string,
  cents: number,
  orderCents: number,
  mode: ReserveMode,
  lines?: LineReserve,
): ReserveResult {
  assertLedgerEntry(entry);
  if (typeof claimId !== "string" || claimId === "")
    throw new LedgerInvariantError("reserveRefund: claimId must be a non-empty string");
  if (!Number.isSafeInteger(cents) || cents <= 0)
    throw new LedgerInvariantError(`reserveRefund: cents must be a positive integer, got ${String(cents)}`);
  if (!Number.isSafeInteger(orderCents) || orderCents <= 0)
    throw new LedgerInvariantError(`reserveRefund: orderCents must be a positive integer, got ${String(orderCents)}`);
  if (mode.kind === "automatic" && (!Number.isSafeInteger(mode.limitCents) || mode.limitCents <= 0)) {
    throw new LedgerInvariantError(
      `reserveRefund: limitCents must be a positive integer, got ${String(mode.limitCents)}`,
    );
  }
  const refused = reservationRefusal(entry, claimId, cents, orderCents, mode, lines);
  if (refused) return { ok: false, code: refused.code, message: refused.message, entry };
  const automatic = entry.automatic_cents ?? 0;
  const claims = { ...entry.claims };
  Object.defineProperty(claims, claimId, { value: cents, enumerable: true, writable: true, configurable: true });
  const charged = lines === undefined ? undefined : lineCharge(entry, cents, lines);
  const onLines = charged?.ok ? charged.charge : undefined;
  const claim_lines = { ...(entry.claim_lines ?? {}) };
  if (onLines)
    Object.defineProperty(claim_lines, claimId, {
      value: onLines,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return {
    ok: true,
    entry: normalised({
      ...(onLines ? { ...withCharge(entry, onLines, 1), claim_lines } : lineFields(entry)),
      order_id: entry.order_id,
      refunded_cents: entry.refunded_cents + cents,
      claims,
      automatic_cents: mode.kind === "automatic" ? automatic + cents : automatic,
      approved: mode.kind === "approved" ? sortedWith(entry.approved, claimId) : entry.approved,
      pending_reviews: mode.kind === "approved" ? sortedWithout(entry.pending_reviews, claimId) : entry.pending_reviews,
      decisions: entry.decisions,
      released: entry.released,
    }),
  };
}

/**
 * The entry without `claimId`'s reservation, the claim recorded as released (idempotent): its refund was closed
 * unpaid, so the money counts as not refunded, and the claim never reserves on the order again — a crash-repaired
 * approval or a redelivery that reserves "again" is refused, instead of holding the refund for good (issue 39).
 * Nothing else changes (no person's decision binds the order).
 */
export function releaseRefund(entry: LedgerEntry, claimId: string): LedgerEntry {
  assertLedgerEntry(entry);
  const cents = reservedForClaim(entry, claimId);
  const released = sortedWith(entry.released, claimId);
  if (cents === undefined) return refundReleased(entry, claimId) ? entry : normalised({ ...entry, released });
  const approved = (entry.approved ?? []).includes(claimId);
  const { [claimId]: _released, ...claims } = entry.claims;
  const held = entry.claim_lines && Object.hasOwn(entry.claim_lines, claimId) ? entry.claim_lines[claimId] : undefined;
  const { [claimId]: _lines, ...claim_lines } = entry.claim_lines ?? {};
  return normalised({
    ...entry,
    ...(held ? { ...withCharge(entry, held, -1), claim_lines } : {}),
    claims,
    refunded_cents: entry.refunded_cents - cents,
    automatic_cents: approved ? entry.automatic_cents : (entry.automatic_cents ?? 0) - cents,
    approved: sortedWithout(entry.approved, claimId),
    released,
  });
}

/** The entry with `claimId` awaiting a review on the order (idempotent; never for a claim that holds a refund). */
export function markReviewPending(entry: LedgerEntry, claimId: string): LedgerEntry {
  assertLedgerEntry(entry);
  if (reservedForClaim(entry, claimId) !== undefined) return entry;
  return normalised({ ...entry, pending_reviews: sortedWith(entry.pending_reviews, claimId) });
}

/**
 * The entry with `claimId`'s review no longer pending (idempotent) and, when the person's decision binds the order,
 * that decision recorded in the same change: the order is never between "awaiting a person" and "bound by one".
 */
export function clearReviewPending(entry: LedgerEntry, claimId: string, decision?: PersonDecision): LedgerEntry {
  assertLedgerEntry(entry);
  if (decision !== undefined && decision.claim_id !== claimId)
    throw new LedgerInvariantError(`clearReviewPending: decision of ${decision.claim_id} for claim ${claimId}`);
  const cleared = normalised({ ...entry, pending_reviews: sortedWithout(entry.pending_reviews, claimId) });
  return decision ? recordDecision(cleared, decision) : cleared;
}

/**
 * How a reservation that lost a race names its refund in CLAIM_REFUND_NOT_EXECUTED's reason ("Refund of 1200.0 EUR
 * not reserved", "Refund of 107022 JPY not reserved"), written by the kernel's shell and checked by replay.
 */
export function notReservedText(amount: Money): string {
  return `Refund of ${describeMoney(amount)} not reserved`;
}

/**
 * What the shell wrote there before it named the order's currency (every amount as EUR cents): replay accepts it in
 * audits recorded then (for EUR the two are the same text).
 */
export function legacyNotReservedText(minor: number): string {
  return notReservedText(money(minor, "EUR"));
}
