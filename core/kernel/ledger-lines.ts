// The refund ledger's counts per line (issue 32; docs/orders.md#refunds-per-line): what a reservation counts against
// each line of the order and its shipping, or why it is refused, and the entry's line fields kept consistent.
import { LedgerInvariantError } from "../integrity/errors.ts";
import type { ClaimLines, LedgerEntry, LineReserve, ReserveErrorCode } from "./ledger.ts";

/** `line_cents` and `shipping_cents` are the sums of the claims' `claim_lines`, each held by a claim with a reservation. */
export function assertLineCounts(entry: LedgerEntry): void {
  const lines: Record<string, number> = {};
  let shipping = 0;
  for (const [claimId, held] of Object.entries(entry.claim_lines ?? {})) {
    if (!Object.hasOwn(entry.claims, claimId))
      throw new LedgerInvariantError(
        `ledger entry for ${entry.order_id}: claim ${claimId} counts on lines without a reservation`,
      );
    for (const [lineId, minor] of Object.entries(held.lines)) lines[lineId] = (lines[lineId] ?? 0) + minor;
    shipping += held.shipping ?? 0;
  }
  const stated = entry.line_cents ?? {};
  for (const lineId of new Set([...Object.keys(lines), ...Object.keys(stated)]))
    if ((lines[lineId] ?? 0) !== (stated[lineId] ?? 0))
      throw new LedgerInvariantError(
        `ledger entry for ${entry.order_id}: line ${lineId} counts ${stated[lineId] ?? 0} ≠ its claims' ${lines[lineId] ?? 0}`,
      );
  if (shipping !== (entry.shipping_cents ?? 0))
    throw new LedgerInvariantError(
      `ledger entry for ${entry.order_id}: shipping_cents ${entry.shipping_cents ?? 0} ≠ its claims' ${shipping}`,
    );
}

/**
 * What a reservation of `cents` counts against the order's lines and shipping, or why the ledger refuses it: a known
 * line never passes what was paid for it over all claims (EXCEEDS_LINE_AMOUNT); what the claim holds beyond its lines
 * is shipping, refunded only when the policy allows it and with the order's last line (SHIPPING_NOT_REFUNDABLE). An
 * unknown line counts against every line (and the shipping) as much as it could have taken from each: never refused
 * here (the order's total bounds it), it leaves less to later claims on every line. Malformed bounds throw.
 */
export function lineCharge(
  entry: LedgerEntry,
  cents: number,
  bounds: LineReserve,
): { ok: true; charge: ClaimLines } | { ok: false; code: ReserveErrorCode; message: string } {
  const paid = Object.entries(bounds.paid);
  if (paid.length === 0 || paid.some(([, m]) => !Number.isSafeInteger(m) || m < 0))
    throw new LedgerInvariantError(`reserveRefund: lines.paid must hold each line's non-negative minor units`);
  if (!Number.isSafeInteger(bounds.shipping) || bounds.shipping < 0)
    throw new LedgerInvariantError(`reserveRefund: lines.shipping must be a non-negative integer`);
  const held = (lineId: string) => entry.line_cents?.[lineId] ?? 0;
  const order = entry.order_id;
  if (bounds.claimed === undefined) {
    const lines: Record<string, number> = {};
    for (const [lineId, max] of paid) {
      const take = Math.min(cents, Math.max(0, max - held(lineId)));
      if (take > 0) lines[lineId] = take;
    }
    const shipping = Math.min(cents, Math.max(0, bounds.shipping - (entry.shipping_cents ?? 0)));
    return { ok: true, charge: { lines, ...(shipping > 0 ? { shipping } : {}) } };
  }
  let onLines = 0;
  for (const [lineId, take] of Object.entries(bounds.claimed)) {
    if (!Object.hasOwn(bounds.paid, lineId))
      throw new LedgerInvariantError(`reserveRefund: claimed line ${lineId} is not a line of order ${order}`);
    if (!Number.isSafeInteger(take) || take <= 0)
      throw new LedgerInvariantError(`reserveRefund: claimed line ${lineId} must take a positive integer`);
    onLines += take;
    if (held(lineId) + take > bounds.paid[lineId]!)
      return {
        code: "EXCEEDS_LINE_AMOUNT",
        ok: false,
        message: `Refund of ${take} minor units on line ${lineId} of order ${order} exceeds what was paid for it (${bounds.paid[lineId]}; already refunded ${held(lineId)})`,
      };
  }
  const shipping = cents - onLines;
  if (shipping < 0)
    throw new LedgerInvariantError(
      `reserveRefund: the claimed lines add up to ${onLines}, more than ${cents} reserved`,
    );
  if (shipping > 0) {
    const why =
      bounds.shipping === 0
        ? "the policy does not refund shipping (refund_shipping)"
        : (entry.shipping_cents ?? 0) + shipping > bounds.shipping
          ? `only ${bounds.shipping - (entry.shipping_cents ?? 0)} minor units of shipping are left to refund`
          : paid.some(([lineId, max]) => held(lineId) + (bounds.claimed![lineId] ?? 0) !== max)
            ? "shipping is refunded only with the order's last line"
            : undefined;
    if (why)
      return {
        ok: false,
        code: "SHIPPING_NOT_REFUNDABLE",
        message: `Refund of ${shipping} minor units beyond the lines of order ${order}: ${why}`,
      };
  }
  return { ok: true, charge: { lines: { ...bounds.claimed }, ...(shipping > 0 ? { shipping } : {}) } };
}

/** The entry's line fields as they are (a reservation that names no lines leaves them). */
export function lineFields(entry: LedgerEntry) {
  const { line_cents, shipping_cents, claim_lines } = entry;
  return {
    ...(line_cents ? { line_cents } : {}),
    ...(shipping_cents ? { shipping_cents } : {}),
    ...(claim_lines ? { claim_lines } : {}),
  };
}

/** The entry's line counts with `charge` added (or taken away, `sign` -1). */
export function withCharge(entry: LedgerEntry, charge: ClaimLines, sign: 1 | -1) {
  const line_cents = { ...(entry.line_cents ?? {}) };
  for (const [lineId, minor] of Object.entries(charge.lines)) {
    const next = (line_cents[lineId] ?? 0) + sign * minor;
    Object.defineProperty(line_cents, lineId, { value: next, enumerable: true, writable: true, configurable: true });
  }
  return { line_cents, shipping_cents: (entry.shipping_cents ?? 0) + sign * (charge.shipping ?? 0) };
}
