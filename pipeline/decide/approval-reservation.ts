// What a person's approval reserves on the order's ledger (docs/reviews.md): the approved amount, once per claim,
// on the order's approved count the decision read (four eyes per order), and on an order with lines never above the
// claim's lines over all claims. The review's process (decide/review.ts) asks the ledger for it.
import type { Order } from "../../core/integrity/index.ts";
import { claimAsProposed, lineReserveOf } from "../../core/kernel/claim-lines.ts";
import { currencyFor } from "../../core/kernel/public-amount.ts";
import type { ReserveRequest } from "../ports.ts";
import type { Carrying, ReviewPolicy } from "./review-state.ts";

/** The reservation request of the approval being carried out, on the order as the approval checks read it. */
export function orderReservation(
  c: Carrying,
  { order, cents, orderCents }: { order: Order; cents: number; orderCents: number },
  policy: ReviewPolicy,
): ReserveRequest {
  // On an order with lines, never above the claim's line over all claims (its line unknown: counted on every line).
  const claim = c.record.claim && claimAsProposed(c.record.claim, c.record.proposal);
  const lines = lineReserveOf(order, claim, cents, policy.agent.contract);
  const approvedCount = c.review.intent?.approved_count ?? c.again?.approvedCount;
  return {
    orderId: order.order_id,
    claimId: c.record.claim_id,
    cents,
    orderCents,
    // Decided on the order's approved count as read with the request that claimed the intent: a reservation after
    // another approval landed is refused APPROVALS_CHANGED, and the approval decided again (four eyes per order).
    // The count is the intent's, so the sweep's repair of the same intent reserves on it too.
    mode: { kind: "approved", ...(approvedCount !== undefined ? { approvedCount } : {}) },
    currency: currencyFor(order),
    ...(lines ? { lines } : {}),
    scope: c.record.simulation_id,
  };
}
