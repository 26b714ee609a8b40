// The state a backtest simulates for one history: the refund ledger of each order and, when the candidate has
// customer limits, the window of each customer's automatic refunds. Two implementations answer alike:
// - `validatingLedger`: production's own functions (core/kernel/ledger.ts, customer-window.ts), each checking
//   its entry against the schema and building a new one, as the stores use them;
// - `trustingLedger` (what a backtest runs): the same rules (`reservationRefusal`, `customerLimitExcess`) on
//   entries it alone builds and changes in place, so it checks nothing again and allocates little. The entries
//   it hands out stay valid only until its next change: the kernel reads them during one decision and keeps none.
// ledger.test.ts checks over random histories that both give the same answers, entries and verdicts.
import {
  customerLimitExcess,
  emptyCustomerWindow,
  releaseFromWindow,
  reserveOnWindow,
  WINDOW_KEEP_MS,
  type CustomerLimitsCents,
  type CustomerReservation,
  type CustomerWindow,
} from "../../kernel/customer-window.ts";
import {
  clearReviewPending,
  emptyLedgerEntry,
  markReviewPending,
  lineCharge,
  releaseRefund,
  reservationRefusal,
  reserveRefund,
  reservedForClaim,
  type LedgerEntry,
  type PersonDecision,
  type LineReserve,
  type ReserveMode,
} from "../../kernel/ledger.ts";
import { parseIsoMs } from "../../integrity/time.ts";

/** One history's simulated ledger and customer windows. */
export interface SimulatedLedger {
  /** The order's entry; `undefined` while nothing touched the order. */
  get(orderId: string): LedgerEntry | undefined;
  /** Reserves `cents` for the claim on the order; the refusal's message when the ledger refuses it. */
  reserve(
    orderId: string,
    claimId: string,
    cents: number,
    orderCents: number,
    mode: ReserveMode,
    lines?: LineReserve,
  ): string | undefined;
  /** The claim's review holds the order (idempotent; never for a claim that holds a refund). */
  markReviewPending(orderId: string, claimId: string): void;
  /** The claim's review no longer holds the order; a person's binding decision, when given, is recorded with it. */
  clearReviewPending(orderId: string, claimId: string, decision?: PersonDecision): void;
  /** Releases the claim's reservation on the order (its failed refund was closed unpaid). */
  releaseRefund(orderId: string, claimId: string): void;
  /** The customer's window; `undefined` while nothing was reserved for the customer. */
  window(customerId: string): CustomerWindow | undefined;
  /** Reserves an automatic refund on the customer's window; the refusal's message when it would pass `limits`. */
  reserveOnWindow(
    customerId: string,
    reservation: CustomerReservation,
    limits: CustomerLimitsCents,
  ): string | undefined;
  /** Releases the claim's reservation on the customer's window (its refund was not made). */
  releaseFromWindow(customerId: string, claimId: string): void;
}

/** The simulated state on production's validating functions: every change checked and built anew. */
export function validatingLedger(): SimulatedLedger {
  const entries = new Map<string, LedgerEntry>();
  const windows = new Map<string, CustomerWindow>();
  const entryOf = (orderId: string) => entries.get(orderId) ?? emptyLedgerEntry(orderId);
  return {
    get: (orderId) => entries.get(orderId),
    reserve(orderId, claimId, cents, orderCents, mode, lines) {
      const result = reserveRefund(entryOf(orderId), claimId, cents, orderCents, mode, lines);
      if (!result.ok) return result.message;
      entries.set(orderId, result.entry);
      return undefined;
    },
    markReviewPending(orderId, claimId) {
      entries.set(orderId, markReviewPending(entryOf(orderId), claimId));
    },
    clearReviewPending(orderId, claimId, decision) {
      entries.set(orderId, clearReviewPending(entryOf(orderId), claimId, decision));
    },
    releaseRefund(orderId, claimId) {
      entries.set(orderId, releaseRefund(entryOf(orderId), claimId));
    },
    window: (customerId) => windows.get(customerId),
    reserveOnWindow(customerId, reservation, limits) {
      const result = reserveOnWindow(windows.get(customerId) ?? emptyCustomerWindow(customerId), reservation, limits);
      if (!result.ok) return result.message;
      windows.set(customerId, result.window);
      return undefined;
    },
    releaseFromWindow(customerId, claimId) {
      const window = windows.get(customerId);
      const released = window ? releaseFromWindow(window, claimId) : undefined;
      if (released) windows.set(customerId, released);
    },
  };
}

/** Inserts `id` into a sorted list in place (once). */
function insertSorted(list: string[], id: string): void {
  let i = 0;
  while (i < list.length && list[i]! < id) i++;
  if (list[i] !== id) list.splice(i, 0, id);
}

/** Removes `id` from a list in place; true when it was there. */
function removeFrom(list: string[] | undefined, id: string): boolean {
  const i = list ? list.indexOf(id) : -1;
  if (i >= 0) list!.splice(i, 1);
  return i >= 0;
}

/** The simulated state the backtest runs: the ledger's rules on entries it owns and changes in place. */
export function trustingLedger(): SimulatedLedger {
  const entries = new Map<string, LedgerEntry>();
  const windows = new Map<string, CustomerWindow>();
  const entryOf = (orderId: string) => {
    let entry = entries.get(orderId);
    if (entry === undefined) entries.set(orderId, (entry = emptyLedgerEntry(orderId)));
    return entry;
  };
  return {
    get: (orderId) => entries.get(orderId),
    reserve(orderId, claimId, cents, orderCents, mode, lines) {
      const entry = entries.get(orderId);
      const refused = reservationRefusal(entry ?? emptyLedgerEntry(orderId), claimId, cents, orderCents, mode, lines);
      if (refused) return refused.message;
      const e = entry ?? entryOf(orderId);
      // On an order with lines, the claim's counts on its lines and the shipping, as `reserveRefund` adds them.
      const charged = lines === undefined ? undefined : lineCharge(e, cents, lines);
      if (charged?.ok) {
        const counts = (e.line_cents ??= {});
        for (const [lineId, minor] of Object.entries(charged.charge.lines))
          Object.defineProperty(counts, lineId, {
            value: (Object.hasOwn(counts, lineId) ? counts[lineId]! : 0) + minor,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        if (charged.charge.shipping) e.shipping_cents = (e.shipping_cents ?? 0) + charged.charge.shipping;
        Object.defineProperty((e.claim_lines ??= {}), claimId, {
          value: charged.charge,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      // As `reserveRefund` builds it: a claim id such as `__proto__` is an own member like any other.
      Object.defineProperty(e.claims, claimId, { value: cents, enumerable: true, writable: true, configurable: true });
      e.refunded_cents += cents;
      if (mode.kind === "automatic") e.automatic_cents = (e.automatic_cents ?? 0) + cents;
      else {
        if (e.approved) insertSorted(e.approved, claimId);
        else e.approved = [claimId];
        if (removeFrom(e.pending_reviews, claimId) && e.pending_reviews!.length === 0) delete e.pending_reviews;
      }
      return undefined;
    },
    markReviewPending(orderId, claimId) {
      const e = entryOf(orderId);
      if (reservedForClaim(e, claimId) !== undefined) return;
      if (e.pending_reviews) insertSorted(e.pending_reviews, claimId);
      else e.pending_reviews = [claimId];
    },
    clearReviewPending(orderId, claimId, decision) {
      const e = entryOf(orderId);
      if (removeFrom(e.pending_reviews, claimId) && e.pending_reviews!.length === 0) delete e.pending_reviews;
      if (decision === undefined) return;
      const decisions = e.decisions ?? (e.decisions = []);
      if (decisions.some((d) => d.claim_id === decision.claim_id)) return;
      let i = 0;
      while (i < decisions.length && decisions[i]!.claim_id < decision.claim_id) i++;
      decisions.splice(i, 0, { ...decision });
    },
    releaseRefund(orderId, claimId) {
      // Rare (a failed refund closed unpaid): the ledger's own rule on a copy, rather than in place.
      entries.set(orderId, releaseRefund(entryOf(orderId), claimId));
    },
    window: (customerId) => windows.get(customerId),
    reserveOnWindow(customerId, reservation, limits) {
      let window = windows.get(customerId);
      if (window?.reservations.some((r) => r.claim_id === reservation.claim_id)) return undefined;
      const atMs = parseIsoMs(reservation.at)!;
      const excess = customerLimitExcess(window ?? emptyCustomerWindow(customerId), reservation.cents, atMs, limits);
      if (excess) return excess;
      if (window === undefined) windows.set(customerId, (window = emptyCustomerWindow(customerId)));
      const keepFrom = atMs - limits.windowMs - WINDOW_KEEP_MS;
      const list = window.reservations;
      for (let i = list.length - 1; i >= 0; i--) if ((parseIsoMs(list[i]!.at) ?? 0) < keepFrom) list.splice(i, 1);
      let i = 0;
      while (i < list.length && list[i]!.claim_id < reservation.claim_id) i++;
      list.splice(i, 0, { ...reservation });
      window.version++;
      return undefined;
    },
    releaseFromWindow(customerId, claimId) {
      const window = windows.get(customerId);
      const i = window ? window.reservations.findIndex((r) => r.claim_id === claimId) : -1;
      if (i < 0) return;
      window!.reservations.splice(i, 1);
      window!.version++;
    },
  };
}
