// Performs effects through the ports, in order; consecutive agent steps go out as one batch, and the
// audit events of a list are appended together where the first of them stands (one stored item).
import type { EffectPorts } from "./deps.ts";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import type { Effect } from "./effects.ts";
import type { AgentStepMessage } from "./messages.ts";

/** Performs `effects` in order. Every effect is idempotent, so performing a list twice is safe. */
export async function performEffects(effects: readonly Effect[], ports: EffectPorts): Promise<void> {
  // Every audit event of the list goes with the first one: earlier than its place in the list, never
  // later, so each is still appended before anything that follows it (a publish, a queue message).
  const audit = effects.flatMap((e) => (e.kind === "audit" ? [e.event] : []));
  let audited = false;
  let steps: AgentStepMessage[] = [];
  const flushSteps = async () => {
    if (steps.length > 0) await ports.queues.sendAgentSteps(steps);
    steps = [];
  };
  for (const effect of effects) {
    if (effect.kind === "agent_step" && effect.delayMs === undefined) {
      steps.push(effect.message);
      continue;
    }
    await flushSteps();
    switch (effect.kind) {
      case "agent_step":
        await ports.queues.sendAgentSteps([effect.message], { delayMs: effect.delayMs });
        break;
      case "proposal":
        await ports.queues.sendProposal(effect.message);
        break;
      case "crew_event":
        await ports.queues.sendCrewEvents(effect.claimId, [effect.message]);
        break;
      case "timer":
        await ports.queues.scheduleTimer(effect.claimId, effect.dueMs);
        break;
      case "extraction":
        await ports.queues.requestExtraction(
          effect.claimId,
          effect.delayMs === undefined ? undefined : { delayMs: effect.delayMs },
        );
        break;
      case "audit":
        if (!audited) await (audit.length === 1 ? ports.audit.append(audit[0]!) : ports.audit.appendAll(audit));
        audited = true;
        break;
      case "claim_update":
        await ports.claims.updateClaim(effect.claimId, effect.patch, effect.onlyFrom);
        break;
      case "publish":
        await ports.publisher.publish(effect.entries);
        break;
      case "review_open": {
        // The ledger mark goes first: once the review exists a repeat may find nothing left to do. A repeat after
        // the review was decided (a late redelivery) takes its mark back, or it would block the order for good; a
        // decision records itself before it clears the mark a last time, so one of the two always clears it.
        const orderId = effect.review.order_id;
        if (orderId) await ports.ledger.markReviewPending(orderId, effect.review.claim_id, effect.review.simulation_id);
        const stored = await ports.reviews.openReview(effect.review);
        if (orderId && stored.status !== "PENDING")
          await ports.ledger.clearReviewPending(orderId, effect.review.claim_id, effect.review.simulation_id);
        break;
      }
      case "review_closed":
        await ports.ledger.clearReviewPending(effect.orderId, effect.claimId, effect.scope, effect.decision);
        break;
      case "refund_released":
        await ports.ledger.releaseRefund(effect.orderId, effect.claimId);
        break;
    }
  }
  await flushSteps();
}

/** Every status: clearing an outbox is allowed whatever became of the claim meanwhile. */
export const ANY_STATUS: ClaimRecord["status"][] = ["RECEIVED", "RUNNING", "DECIDED", "NEEDS_REVIEW"];

/** Performs the claim's stored outbox (an extraction's outcome), if it has one, then clears it; returns whether there was one. */
export async function performClaimOutbox(record: ClaimRecord, ports: EffectPorts): Promise<boolean> {
  if (!record.outbox || record.outbox.length === 0) return false;
  await performEffects(record.outbox as Effect[], ports);
  await ports.claims.updateClaim(record.claim_id, { outbox: undefined }, ANY_STATUS);
  return true;
}
