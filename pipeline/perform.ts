// Performs effects through the ports, in order; consecutive agent steps go out as one batch.
import type { EffectPorts } from "./deps.ts";
import type { Effect } from "./effects.ts";
import type { AgentStepMessage } from "./messages.ts";

/** Performs `effects` in order. Every effect is idempotent, so performing a list twice is safe. */
export async function performEffects(effects: readonly Effect[], ports: EffectPorts): Promise<void> {
  let steps: AgentStepMessage[] = [];
  const flushSteps = async () => {
    if (steps.length > 0) await ports.queues.sendAgentSteps(steps);
    steps = [];
  };
  for (const effect of effects) {
    if (effect.kind === "agent_step") {
      steps.push(effect.message);
      continue;
    }
    await flushSteps();
    switch (effect.kind) {
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
        await ports.queues.requestExtraction(effect.claimId);
        break;
      case "audit":
        await ports.audit.append(effect.event);
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
        if (orderId && stored.status !== "PENDING") await ports.ledger.clearReviewPending(orderId, effect.review.claim_id, effect.review.simulation_id);
        break;
      }
      case "review_closed":
        await ports.ledger.clearReviewPending(effect.orderId, effect.claimId, effect.scope);
        break;
    }
  }
  await flushSteps();
}
