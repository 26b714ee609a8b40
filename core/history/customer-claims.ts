// Whose claims a recorded audit holds (issue 38): each claim's order and the order's customer, read from the
// decision path, which is never sealed — so a customer's claims are found after an erasure as before it.
import type { AuditEvent } from "../integrity/index.ts";
import { auditClaimId, parseAuditDetails } from "./audit-events.ts";

/** One claim of an audit: its order and customer when the path names them, when it was received, whether it ended. */
export interface ClaimOwner {
  claimId: string;
  orderId?: string;
  /** The order's customer. */
  customerId?: string;
  /** The customer the claim itself names (`claim.customer_id`), when it names one: its words are theirs too. */
  claimantId?: string;
  receivedAt?: string;
  /** Whether the claim has an outcome (a verdict, a person's decision or a review waiting): not in flight. */
  settled: boolean;
}

const SETTLING = new Set(["KERNEL_VERDICT", "CLAIM_NEEDS_REVIEW", "REVIEW_DECIDED", "CLAIM_REFUND_EXECUTED"]);

/**
 * Every claim of `events` with its order, the order's customer (from every order the audit records) and the
 * customer the claim names: a claim on someone else's order holds the words of both.
 */
export function claimOwners(events: readonly AuditEvent[]): ClaimOwner[] {
  const customerOf = new Map<string, string>();
  const owners = new Map<string, ClaimOwner>();
  const owner = (claimId: string) => {
    let o = owners.get(claimId);
    if (!o) owners.set(claimId, (o = { claimId, settled: false }));
    return o;
  };
  const order = (o: { order_id: string; customer_id?: string | undefined } | null | undefined) => {
    if (o?.customer_id !== undefined) customerOf.set(o.order_id, o.customer_id);
  };
  for (const event of events) {
    const parsed = parseAuditDetails(event);
    if (!parsed.ok) continue;
    const { type, details } = parsed.parsed;
    if (type === "SIMULATION_START") details.orders.forEach(order);
    const claimId = auditClaimId(event);
    if (claimId === undefined || type === "PERSONAL_DATA_ERASED") continue;
    const o = owner(claimId);
    if (SETTLING.has(type)) o.settled = true;
    if (type === "CLAIM_RECEIVED") {
      o.receivedAt = details.received_at;
      if ("claim" in details.input) {
        o.orderId = details.input.claim.order_id;
        if (details.input.claim.customer_id !== undefined) o.claimantId = details.input.claim.customer_id;
      }
    } else if (type === "CLAIM_EXTRACTED") o.orderId = details.claim.order_id;
    else if (type === "PROPOSAL_SUBMITTED") {
      order(details.kernel_inputs.order);
      o.orderId = details.kernel_inputs.claim.order_id;
    } else if (type === "CLAIM_TRIAGED") {
      order(details.triage_inputs.order);
      o.orderId = details.triage_inputs.claim.order_id;
    }
  }
  return [...owners.values()].map((o) => {
    const customerId = o.orderId === undefined ? undefined : customerOf.get(o.orderId);
    return customerId === undefined ? o : { ...o, customerId };
  });
}

/** The claims of `events` erased already, by the PERSONAL_DATA_ERASED events recorded. */
export function erasedClaims(events: readonly AuditEvent[]): Map<string, string> {
  const erased = new Map<string, string>();
  for (const event of events) {
    const parsed = parseAuditDetails(event);
    if (parsed.ok && parsed.parsed.type === "PERSONAL_DATA_ERASED")
      for (const id of parsed.parsed.details.claim_ids) erased.set(id, parsed.parsed.details.erased_at);
  }
  return erased;
}

/** Whether `customerId` is the claim's order's customer or the customer the claim names. */
export function belongsTo(owner: ClaimOwner, customerId: string): boolean {
  return owner.customerId === customerId || owner.claimantId === customerId;
}
