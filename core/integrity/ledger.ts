// The refund ledger in integer cents: per order, what each claim has reserved; two claims never exceed the order.
import * as z from "zod";
import { LedgerInvariantError } from "./errors.ts";
import { formatEur } from "./money.ts";

/** One order's refund ledger: total refunded cents and the cents reserved per claim id. */
export const LedgerEntrySchema = z
  .object({
    order_id: z.string().min(1),
    refunded_cents: z.number().int().nonnegative(),
    claims: z.record(z.string(), z.number().int().positive()),
  })
  .strict();

/** One order's refund ledger entry. */
export type LedgerEntry = z.infer<typeof LedgerEntrySchema>;

/** Why a reservation was refused. */
export type ReserveErrorCode = "ALREADY_REFUNDED_FOR_CLAIM" | "EXCEEDS_ORDER_AMOUNT";

/** The result of a reservation: the entry after it, or the refusal with the entry as it stands. */
export type ReserveResult =
  | { ok: true; entry: LedgerEntry }
  | { ok: false; code: ReserveErrorCode; message: string; entry: LedgerEntry };

/** A ledger entry for an order nothing has been refunded on yet. */
export function emptyLedgerEntry(orderId: string): LedgerEntry {
  return { order_id: orderId, refunded_cents: 0, claims: {} };
}

/** The cents this claim has reserved on the entry, if any (own members only). */
export function reservedForClaim(entry: LedgerEntry | undefined, claimId: string): number | undefined {
  return entry && Object.hasOwn(entry.claims, claimId) ? entry.claims[claimId] : undefined;
}

/** Throws `LedgerInvariantError` unless the entry is well formed and `refunded_cents` is the sum of its claims. */
export function assertLedgerEntry(entry: LedgerEntry): void {
  const parsed = LedgerEntrySchema.safeParse(entry);
  if (!parsed.success) throw new LedgerInvariantError(`ledger entry is malformed: ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
  const sum = Object.values(entry.claims).reduce((a, b) => a + b, 0);
  if (sum !== entry.refunded_cents) {
    throw new LedgerInvariantError(`ledger entry for ${entry.order_id}: refunded_cents ${entry.refunded_cents} ≠ sum of claims ${sum}`);
  }
}

/**
 * Pure reservation, the rule the conditional write enforces: refused when the claim is already on the
 * ledger (whatever the amount) or when refunded + cents would exceed the order; otherwise a new entry.
 * The input entry is never mutated. Non-positive or non-integer cents are a caller bug and throw.
 */
export function reserveRefund(entry: LedgerEntry, claimId: string, cents: number, orderCents: number): ReserveResult {
  assertLedgerEntry(entry);
  if (typeof claimId !== "string" || claimId === "") throw new LedgerInvariantError("reserveRefund: claimId must be a non-empty string");
  if (!Number.isSafeInteger(cents) || cents <= 0) throw new LedgerInvariantError(`reserveRefund: cents must be a positive integer, got ${String(cents)}`);
  if (!Number.isSafeInteger(orderCents) || orderCents <= 0) throw new LedgerInvariantError(`reserveRefund: orderCents must be a positive integer, got ${String(orderCents)}`);
  const existing = reservedForClaim(entry, claimId);
  if (existing !== undefined) {
    return {
      ok: false,
      code: "ALREADY_REFUNDED_FOR_CLAIM",
      message: `Claim ${claimId} already refunded ${formatEur(existing)} EUR on order ${entry.order_id}`,
      entry,
    };
  }
  if (entry.refunded_cents + cents > orderCents) {
    return {
      ok: false,
      code: "EXCEEDS_ORDER_AMOUNT",
      message: `Refund of ${formatEur(cents)} EUR on order ${entry.order_id} exceeds the order amount ${formatEur(orderCents)} EUR (already refunded ${formatEur(entry.refunded_cents)} EUR)`,
      entry,
    };
  }
  const claims = { ...entry.claims };
  Object.defineProperty(claims, claimId, { value: cents, enumerable: true, writable: true, configurable: true });
  return { ok: true, entry: { order_id: entry.order_id, refunded_cents: entry.refunded_cents + cents, claims } };
}
