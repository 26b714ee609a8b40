// Narrow ports the decision-integrity module owns; in-process implementations now, DynamoDB adapters later.
import type { AuditEvent } from "./audit.ts";
import type { Order } from "./contracts.ts";
import type { LedgerEntry, ReserveErrorCode } from "./ledger.ts";

/** The result of a reservation: the entry after it, or the refusal with the entry as it stands. */
export type ReserveResult =
  | { ok: true; entry: LedgerEntry }
  | { ok: false; code: ReserveErrorCode; message: string; entry: LedgerEntry };

/**
 * The refund ledger: one entry per order. `reserve` is one atomic conditional update (claim not yet on
 * the entry AND refunded + cents ≤ orderCents); no transactions are needed.
 */
export type RefundLedger = {
  /** The order's entry, or `undefined` when nothing was ever refunded on it. */
  get(orderId: string): Promise<LedgerEntry | undefined>;
  /** Reserves `cents` for `claimId` on the order, or says why not. */
  reserve(orderId: string, claimId: string, cents: number, orderCents: number): Promise<ReserveResult>;
};

/** The authoritative orders as plain data, keyed by order id. */
export type ContextSnapshot = { orders: Record<string, Order> };

/** The context store: authoritative order data the kernel reads and the crew never sees. */
export type ContextStore = {
  /** The order, or `undefined` when the store does not know it. */
  getOrder(orderId: string): Promise<Order | undefined>;
  /** All orders as plain data (for the report and for replay). */
  snapshot(): Promise<ContextSnapshot>;
};

/** The append-only audit log. */
export type AuditLog = {
  /** Appends one event (validated against the audit schema). */
  append(event: AuditEvent): Promise<void>;
  /** Events of a decision flow in append order: those whose `dfid` or `root_dfid` is `dfid`. */
  byDfid(dfid: string): Promise<AuditEvent[]>;
  /** Events whose `details.simulation_id` is `simulationId`, in append order. */
  bySimulation(simulationId: string): Promise<AuditEvent[]>;
};
