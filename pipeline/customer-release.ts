// A claim that ended without its automatic refund (timed out, stalled) may still hold a reservation on the window
// of its order's customer (the kernel reserves the window first, then the order's ledger, and died in between):
// the overdue path and the sweep release it, so the customer limit never leaks. A claim whose refund the order's
// ledger holds keeps its reservation: that refund was made.
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { OrderDataError } from "../core/integrity/index.ts";
import type { PipelineDeps } from "./deps.ts";

/** Releases the claim's reservation on its customer's window unless the order's ledger holds its refund; true when one was looked for. */
export async function releaseUnrefundedReservation(
  record: ClaimRecord,
  deps: Pick<PipelineDeps, "agent" | "orders" | "ledger">,
): Promise<boolean> {
  const orderId = record.claim?.order_id;
  if (!deps.agent.contract.customer_limits || !orderId) return false;
  let order;
  try {
    order = await deps.orders.getOrder(orderId);
  } catch (error) {
    if (error instanceof OrderDataError) return false;
    throw error;
  }
  if (order?.customer_id === undefined) return false;
  const entry = await deps.ledger.get(orderId, record.simulation_id);
  if (entry && Object.hasOwn(entry.claims, record.claim_id)) return false;
  await deps.ledger.releaseCustomer(order.customer_id, record.claim_id, record.simulation_id);
  return true;
}
