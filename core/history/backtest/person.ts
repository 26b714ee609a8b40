// What a person did, as recorded, entered on the simulated ledger: a review opened without the kernel holds the
// order; an APPROVE reserves its refund (never on the customer's window); a DENY binds the order, and so does the
// CLOSE of a failed refund (releasing the reservation when it was not paid out of band).
import { reservedForClaim } from "../../kernel/ledger.ts";
import type { ReserveMode } from "../../kernel/ledger.ts";
import { MAX_CENTS } from "../../kernel/money.ts";
import type { SimulatedLedger } from "./ledger.ts";
import type { RecordedPersonStep } from "./timeline.ts";
import type { Accumulator } from "./tally.ts";

const APPROVED: ReserveMode = { kind: "approved" };

/** One person's step of the timeline, on the simulated ledger; a refused approval is noted on the person's decision. */
export function personStep(
  step: RecordedPersonStep,
  ledger: SimulatedLedger,
  orderCentsOf: Map<string, number>,
  acc: Accumulator,
): void {
  if (step.kind === "review_opened") {
    ledger.markReviewPending(step.orderId, step.claimId);
    return;
  }
  if (step.kind === "refund_closed") {
    // Only a refund the candidate made too could fail and be closed: then the CLOSE binds the order as live (and,
    // not paid out of band, releases the reservation).
    const orderId = acc.orderOfClaim.get(step.claimId);
    if (!orderId || reservedForClaim(ledger.get(orderId), step.claimId) === undefined) return;
    ledger.clearReviewPending(orderId, step.claimId, {
      claim_id: step.claimId,
      decision: "CLOSE",
      paid_out_of_band: step.paidOutOfBand,
    });
    if (!step.paidOutOfBand) ledger.releaseRefund(orderId, step.claimId);
    return;
  }
  const person = acc.awaitingPerson.get(step.claimId);
  acc.awaitingPerson.delete(step.claimId);
  if (person && step.reviewer) person.reviewer = step.reviewer;
  if (person && step.note) person.reviewer_note = step.note;
  const orderId = step.orderId ?? acc.orderOfClaim.get(step.claimId);
  if (!orderId) return;
  if (step.decision === "APPROVE" && step.approvedCents !== undefined) {
    // A person's approval: not an automatic refund, so never on the customer's window (as live).
    const refused = ledger.reserve(
      orderId,
      step.claimId,
      step.approvedCents,
      orderCentsOf.get(step.claimId) ?? MAX_CENTS,
      APPROVED,
      acc.linesOfClaim.get(step.claimId)?.(step.approvedCents),
    );
    if (refused === undefined) {
      // An approval of less than proposed binds the order (as the real ledger records it).
      const proposed = acc.proposedCents.get(step.claimId);
      if (proposed !== undefined && step.approvedCents < proposed)
        ledger.clearReviewPending(orderId, step.claimId, {
          claim_id: step.claimId,
          decision: "APPROVE",
          approved_cents: step.approvedCents,
          proposed_cents: proposed,
        });
      return;
    }
    if (person) person.note = `the approval would have been refused on the simulated ledger: ${refused}`;
    return;
  }
  // A person's DENY binds the order (the simulated ledger records it as the real one does).
  ledger.clearReviewPending(
    orderId,
    step.claimId,
    step.decision === "DENY" ? { claim_id: step.claimId, decision: "DENY" } : undefined,
  );
}
