// The refund-due alarm's reading (docs/returns.md#the-refund-due-alarm): the live refunds not settled yet, each with
// its legal deadline. Reads only the unsettled settlements (their own partitions), each one's claim and, for a
// return, the return's recorded events — never every claim. The sweep reports them as a metric; `claims serve`
// shows them on `/health`.
import { returnDfid } from "../core/kernel/claim-record.ts";
import { refundsDueSoon } from "../core/kernel/refund-due.ts";
import type { AcceptedRefund, RefundDueLine } from "../core/kernel/refund-due.ts";
import type { PipelineDeps } from "./deps.ts";
import { recordedReturnEvents } from "./decide/returns.ts";

/** What the reading uses. */
type RefundDueDeps = Pick<PipelineDeps, "settlements" | "claims" | "audit" | "agent">;

/**
 * The live unsettled refunds at or past `refund_due_days − 4` days at `now`, soonest due first. A refund's clock
 * starts when the refund executor took it (the decision's refund, minutes after the claim was decided) or, for a
 * return, at the `at` of the event that paid it (the return received); its days are the claim's return's
 * `refund_due_days`, else the policy's, else 14.
 */
export async function refundsDueNow(deps: RefundDueDeps, now: number): Promise<RefundDueLine[]> {
  // No settlements kept (no payment provider, a batch run): no refund is paid here, so none is due.
  if (!deps.settlements) return [];
  const policyDays = deps.agent.contract.returns?.refund_due_days;
  const refunds: AcceptedRefund[] = [];
  for (const s of await deps.settlements.listUnsettled()) {
    if (s.simulation_id !== undefined) continue;
    const claim = await deps.claims.getClaim(s.claim_id);
    const asked = claim?.return;
    const payEvent =
      asked?.outcome === "PAID" && asked.decided_by
        ? recordedReturnEvents(await deps.audit.byDfid(returnDfid(s.claim_id))).find(
            (e) => e.event_id === asked.decided_by,
          )
        : undefined;
    const days = asked?.refund_due_days ?? policyDays;
    refunds.push({
      claim_id: s.claim_id,
      decidedAt: s.requested_at,
      returnAsked: asked !== undefined,
      // A settlement exists only once the refund executed: for a return, its pay_on event came.
      ...(asked ? { returnReceivedAt: payEvent?.at ?? s.requested_at } : {}),
      ...(days !== undefined ? { refundDueDays: days } : {}),
      settled: false,
    });
  }
  return refundsDueSoon(refunds, now);
}
