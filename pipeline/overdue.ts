// A claim that ran out of time: the caller waited as long as the settings allow, so the claim goes to
// a person (NEEDS_REVIEW `CLAIM_TIMED_OUT`) instead of aborting the run. A claim that became final in
// the meantime keeps its outcome; a late answer afterwards finds the claim no longer awaiting one.
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { isFinal } from "../core/kernel/claim-record.ts";
import type { PipelineDeps } from "./deps.ts";
import { overdueDecision } from "./decide/timers.ts";
import { releaseUnrefundedReservation } from "./customer-release.ts";
import { performEffects } from "./perform.ts";

/** Ends a claim still RECEIVED or RUNNING in NEEDS_REVIEW (`CLAIM_TIMED_OUT`) with an audit and a `ClaimNeedsReview` event; returns the claim as it is now. */
export async function endOverdueClaim(
  claimId: string,
  info: { readonly waitedMs: number; readonly detail?: string | undefined },
  deps: Pick<
    PipelineDeps,
    "claims" | "clock" | "audit" | "publisher" | "queues" | "reviews" | "ledger" | "agent" | "orders"
  >,
): Promise<ClaimRecord | undefined> {
  const record = await deps.claims.getClaim(claimId);
  if (!record || isFinal(record.status)) return record;
  const decision = overdueDecision(record, info, deps.clock.now());
  const updated = await deps.claims.updateClaim(claimId, decision.patch, decision.onlyFrom);
  if (!updated.changed) return updated.record;
  await performEffects(decision.effects, deps);
  // A reservation on the customer's window whose refund never happened is released.
  await releaseUnrefundedReservation(updated.record ?? record, deps);
  return updated.record;
}
