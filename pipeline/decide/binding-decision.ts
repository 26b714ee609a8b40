// Which decisions of a person bind the order (docs/kernel.md, layer 10c): a DENY, or an APPROVE of less than the
// proposal asked. The review shell records it on the order's ledger with the same write that clears the review's
// mark, before the review is recorded decided: a crash in between is repaired by the decision carried out again
// (the intent claimed on the review), and recording it twice changes nothing.
import { toCents, type PersonDecision } from "../../core/kernel/index.ts";
import type { ReviewRecord } from "../../core/kernel/review.ts";

/** The decision of a decided review that binds its order, or `undefined` (RESUBMIT, a full approval, no order). */
export function bindingDecisionOf(review: ReviewRecord): PersonDecision | undefined {
  if (!review.order_id) return undefined;
  if (review.status === "DENIED") return { claim_id: review.claim_id, decision: "DENY" };
  if (review.status !== "APPROVED" || review.approved_amount_eur === undefined || review.amount_eur === undefined)
    return undefined;
  const approved = toCents(review.approved_amount_eur);
  const proposed = toCents(review.amount_eur);
  return approved < proposed
    ? { claim_id: review.claim_id, decision: "APPROVE", approved_cents: approved, proposed_cents: proposed }
    : undefined;
}
