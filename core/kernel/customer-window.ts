// A customer's window, one record per customer (the ORDER's `customer_id`): every automatic refund reserved for them
// — refunds made and refunds of claims still in flight — and every refund a reviewer approved (with who approved it),
// each with the claim, the order, the cents and the instant it was decided, and a version the store's conditional
// write compares. The customer limit (`claims_bounds.customer_limits`) counts the automatic ones in the last
// `window_days`; four eyes per customer counts the approved ones one reviewer gave alone (docs/reviews.md#four-eyes).
// The rules are pure and the store writes their result only if the version is still the one it read.
import * as z from "zod";
import type { CustomerLimits } from "../integrity/contracts.ts";
import { LedgerInvariantError } from "../integrity/errors.ts";
import { formatEur, formatShort, parseMoney } from "./money.ts";
import { DAY_MS, parseIsoMs } from "../integrity/time.ts";

/** One automatic refund reserved on a customer's window. */
export const CustomerReservationSchema = z
  .object({
    claim_id: z.string().min(1),
    order_id: z.string().min(1),
    cents: z.number().int().positive(),
    /** The currency `cents` counts (minor units); absent: EUR, as every reservation before currencies. */
    currency: z.string().length(3).optional(),
    /** The decision instant of the claim (ISO): the window counts back from the deciding claim's instant. */
    at: z.iso.datetime({ offset: true }),
    /**
     * A refund reviewers approved (absent: an automatic one): who approved it, first approver first — one name is an
     * approval given alone, two are four eyes. Approved refunds never count against the automatic limits.
     */
    approved_by: z.array(z.string().min(1)).min(1).optional(),
  })
  .strict();

/** A refund reserved for a customer: automatic, or approved by the reviewers it names. */
export type CustomerReservation = z.infer<typeof CustomerReservationSchema>;

/** A customer's window: the reservations (sorted by claim id) and the version of the stored record (0: none stored). */
export const CustomerWindowSchema = z
  .object({
    customer_id: z.string().min(1),
    reservations: z.array(CustomerReservationSchema),
    version: z.number().int().nonnegative(),
    /**
     * How many approved refunds were ever recorded on the window (never goes down, absent: 0): an approval's
     * reservation is conditional on the number its four-eyes check read, so racing approvals are decided in turn.
     */
    approvals: z.number().int().nonnegative().optional(),
  })
  .strict();

/** A customer's window of refunds. */
export type CustomerWindow = z.infer<typeof CustomerWindowSchema>;

/** The window of a customer nothing was reserved for yet. */
export function emptyCustomerWindow(customerId: string): CustomerWindow {
  return { customer_id: customerId, reservations: [], version: 0 };
}

/** The limits in cents, checked once (a bad contract is a wiring error and throws). */
export type CustomerLimitsCents = {
  windowMs: number;
  maxRefunds: number;
  maxCents: number;
  days: number;
  /** The currency the limit counts (absent: EUR): reservations in another currency are never added to it. */
  currency?: string;
};

/** `customer_limits` in minor units of `currency` (default EUR) and milliseconds; throws `LedgerInvariantError` on a malformed limit. */
export function customerLimitsCents(limits: CustomerLimits, currency = "EUR"): CustomerLimitsCents {
  const parsedMax = parseMoney(limits.max_automatic_eur, currency);
  const max = parsedMax.ok ? { ok: true as const, cents: parsedMax.money.minor } : parsedMax;
  if (!max.ok || max.cents <= 0)
    throw new LedgerInvariantError(`customer_limits.max_automatic_eur: ${max.ok ? "must be positive" : max.message}`);
  if (!Number.isSafeInteger(limits.window_days) || limits.window_days <= 0)
    throw new LedgerInvariantError(`customer_limits.window_days must be a positive integer`);
  if (!Number.isSafeInteger(limits.max_automatic_refunds) || limits.max_automatic_refunds <= 0)
    throw new LedgerInvariantError(`customer_limits.max_automatic_refunds must be a positive integer`);
  return {
    windowMs: limits.window_days * DAY_MS,
    maxRefunds: limits.max_automatic_refunds,
    maxCents: max.cents,
    days: limits.window_days,
    ...(currency === "EUR" ? {} : { currency }),
  };
}

/** Throws `LedgerInvariantError` unless the window is well formed (each claim at most once). */
export function assertCustomerWindow(window: CustomerWindow): void {
  const parsed = CustomerWindowSchema.safeParse(window);
  if (!parsed.success)
    throw new LedgerInvariantError(`customer window is malformed: ${z.prettifyError(parsed.error)}`, {
      cause: parsed.error,
    });
  const ids = window.reservations.map((r) => r.claim_id);
  if (new Set(ids).size !== ids.length)
    throw new LedgerInvariantError(`customer window of ${window.customer_id}: a claim is reserved twice`);
}

/** The reservations decided in the window at `atMs` (a refund exactly `window_days` old still counts), other than `exceptClaimId`'s. */
function inWindow(
  window: CustomerWindow | undefined,
  atMs: number,
  windowMs: number,
  exceptClaimId: string | undefined,
): CustomerReservation[] {
  return (window?.reservations ?? []).filter(
    (r) => r.claim_id !== exceptClaimId && (parseIsoMs(r.at) ?? 0) >= atMs - windowMs,
  );
}

/** The automatic reservations that count against the limits at `atMs` (approved refunds never do), other than `exceptClaimId`'s. */
export function reservationsInWindow(
  window: CustomerWindow | undefined,
  atMs: number,
  windowMs: number,
  exceptClaimId?: string,
): CustomerReservation[] {
  return inWindow(window, atMs, windowMs, exceptClaimId).filter((r) => r.approved_by === undefined);
}

/**
 * What `reviewer` alone approved for the customer in the window at `atMs` (other than `exceptClaimId`), in cents:
 * the approved refunds whose only approver they were. Four eyes per customer checks this plus an approval.
 */
export function approvedAloneInWindow(
  window: CustomerWindow | undefined,
  reviewer: string,
  atMs: number,
  windowMs: number,
  exceptClaimId?: string,
): number {
  return inWindow(window, atMs, windowMs, exceptClaimId)
    .filter((r) => r.approved_by !== undefined && r.approved_by.every((by) => by === reviewer))
    .reduce((a, r) => a + r.cents, 0);
}

/** What the customer was refunded automatically in the window at `atMs` (other than `exceptClaimId`): how many refunds, how many cents. */
export function windowTotals(
  window: CustomerWindow | undefined,
  atMs: number,
  windowMs: number,
  exceptClaimId?: string,
): { count: number; cents: number } {
  const counted = reservationsInWindow(window, atMs, windowMs, exceptClaimId);
  return { count: counted.length, cents: counted.reduce((a, r) => a + r.cents, 0) };
}

/** Why `cents` more would pass the customer's limit at `atMs`, in words with the figures, or `undefined` when it fits (exactly the limit passes). */
export function customerLimitExcess(
  window: CustomerWindow | undefined,
  cents: number,
  atMs: number,
  limits: CustomerLimitsCents,
  exceptClaimId?: string,
): string | undefined {
  const currency = limits.currency ?? "EUR";
  const sameCurrency =
    window === undefined
      ? undefined
      : { ...window, reservations: window.reservations.filter((r) => (r.currency ?? "EUR") === currency) };
  const { count, cents: refunded } = windowTotals(sameCurrency, atMs, limits.windowMs, exceptClaimId);
  const customer = window?.customer_id ?? "the customer";
  const show = (minor: number) =>
    currency === "EUR" ? `${formatEur(minor)} EUR` : `${formatShort({ minor, currency })} ${currency}`;
  if (count + 1 > limits.maxRefunds)
    return `Customer ${customer} already has ${count} automatic refund${count === 1 ? "" : "s"} (${show(refunded)}) in the last ${limits.days} days; max_automatic_refunds is ${limits.maxRefunds}`;
  if (refunded + cents > limits.maxCents)
    return `Amount ${show(cents)} plus ${show(refunded)} refunded automatically to customer ${customer} in the last ${limits.days} days exceeds max_automatic_eur (${show(limits.maxCents)})`;
  return undefined;
}

/** What a reservation on the window answers: the window to store (version + 1), the claim's own (a repeat), or the refusal. */
export type CustomerReserveResult =
  | { ok: true; window: CustomerWindow; repeat: boolean }
  | { ok: false; code: "CUSTOMER_LIMIT_EXCEEDED" | "APPROVALS_CHANGED"; message: string; window: CustomerWindow };

/** Reservations are kept one day past the window, so a claim decided a little earlier still sees what counted for it. */
export const WINDOW_KEEP_MS = DAY_MS;

/**
 * Pure reservation on the customer's window, the rule the store's versioned write enforces: the claim's own
 * reservation is a repeat (nothing to write); an automatic refund that would pass the limit at its decision instant
 * is refused; an approved one (`approved_by`) is never limited, but with `approvals` (the window's approved count its
 * four-eyes check read) it is refused APPROVALS_CHANGED when another approval was recorded since. Otherwise the window
 * gains it, reservations long out of the window are dropped, the version (and for an approval the count) moves on.
 */
export function reserveOnWindow(
  window: CustomerWindow,
  reservation: CustomerReservation,
  limits: CustomerLimitsCents,
  approvals?: number,
): CustomerReserveResult {
  assertCustomerWindow(window);
  const parsed = CustomerReservationSchema.safeParse(reservation);
  if (!parsed.success) throw new LedgerInvariantError(`reserveOnWindow: ${z.prettifyError(parsed.error)}`);
  if (window.reservations.some((r) => r.claim_id === reservation.claim_id)) return { ok: true, window, repeat: true };
  const atMs = parseIsoMs(reservation.at)!;
  const approved = parsed.data.approved_by !== undefined;
  const recorded = window.approvals ?? 0;
  if (approved && approvals !== undefined && approvals !== recorded)
    return {
      ok: false,
      code: "APPROVALS_CHANGED",
      message: `Customer ${window.customer_id} has ${recorded} approved refunds recorded, not the ${approvals} this approval was decided on`,
      window,
    };
  const excess = approved ? undefined : customerLimitExcess(window, reservation.cents, atMs, limits);
  if (excess) return { ok: false, code: "CUSTOMER_LIMIT_EXCEEDED", message: excess, window };
  const kept = window.reservations.filter((r) => (parseIsoMs(r.at) ?? 0) >= atMs - limits.windowMs - WINDOW_KEEP_MS);
  const reservations = [...kept, parsed.data].sort((a, b) => (a.claim_id < b.claim_id ? -1 : 1));
  const next = { ...window, reservations, version: window.version + 1 };
  return { ok: true, window: approved ? { ...next, approvals: recorded + 1 } : next, repeat: false };
}

/** The window without `claimId`'s reservation (version + 1), or `undefined` when it holds none (nothing to write). */
export function releaseFromWindow(window: CustomerWindow, claimId: string): CustomerWindow | undefined {
  assertCustomerWindow(window);
  if (!window.reservations.some((r) => r.claim_id === claimId)) return undefined;
  return {
    ...window,
    reservations: window.reservations.filter((r) => r.claim_id !== claimId),
    version: window.version + 1,
  };
}
