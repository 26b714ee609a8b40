// Timers and the sweep: a claim never waits forever on a worker that died (SPEC §2).
import type { PipelineDeps } from "./deps.ts";
import type { TimerMessage } from "./messages.ts";
import { performClaimOutbox, startEffects } from "./intake.ts";
import { performEffects } from "./perform.ts";

/** SQS delays a message at most 15 minutes. */
export const MAX_TIMER_DELAY_S = 900;

/** Seconds to delay a timer message due at `dueMs` (0 when due, capped at 15 minutes). */
export function timerDelaySeconds(dueMs: number, nowMs: number): number {
  return Math.max(0, Math.min(MAX_TIMER_DELAY_S, Math.ceil((dueMs - nowMs) / 1000)));
}

/** A due timer becomes a `crew.tick` on the claim's FIFO group; an early one (long deadline) is re-armed. */
export async function handleTimer(message: TimerMessage, deps: Pick<PipelineDeps, "queues" | "clock" | "audit" | "claims" | "publisher" | "reviews" | "ledger">): Promise<"TICKED" | "REARMED"> {
  const now = deps.clock.now();
  if (message.due_ms > now) {
    await deps.queues.scheduleTimer(message.claim_id, message.due_ms);
    return "REARMED";
  }
  await performEffects([{ kind: "crew_event", claimId: message.claim_id, message: { type: "crew.tick", crewId: message.claim_id, nowMs: now } }], deps);
  return "TICKED";
}

/** What a sweep did. */
export interface SweepResult {
  examined: number;
  restarted: string[];
  ticked: string[];
}

/**
 * Finds claims that have not moved for `stalledAfterMs` and nudges them: a RECEIVED claim is started again
 * as intake starts it (its receipt audited, then extraction or the crew), a claim with an extraction outcome
 * stored but never performed has it performed, a RUNNING claim gets a
 * `crew.tick` (the crew times out steps past their deadline and routes them to the fixer). Every
 * nudge is idempotent, so a sweep that overlaps a live claim changes nothing.
 */
export async function sweepStalledClaims(
  deps: Pick<PipelineDeps, "claims" | "queues" | "clock" | "audit" | "publisher" | "reviews" | "ledger">,
  opts: { stalledAfterMs: number; limit: number },
): Promise<SweepResult> {
  const now = deps.clock.now();
  const stalled = await deps.claims.findStalledClaims(new Date(now - opts.stalledAfterMs).toISOString(), opts.limit);
  const result: SweepResult = { examined: stalled.length, restarted: [], ticked: [] };
  for (const claim of stalled) {
    if (await performClaimOutbox(claim, deps)) {
      // An extraction's outcome whose delivery died before performing it (and was not redelivered): performed now.
      result.restarted.push(claim.claim_id);
    } else if (claim.status === "RECEIVED") {
      // Started as intake starts it, its receipt audited again (identical, so dropped unless intake died before it).
      await performEffects(startEffects(claim), deps);
      result.restarted.push(claim.claim_id);
    } else {
      await deps.queues.sendCrewEvents(claim.claim_id, [{ type: "crew.tick", crewId: claim.claim_id, nowMs: now }]);
      result.ticked.push(claim.claim_id);
    }
  }
  return result;
}
