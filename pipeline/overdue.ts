// A claim that ran out of time: the caller waited as long as the settings allow, so the claim goes to
// a person (NEEDS_REVIEW `CLAIM_TIMED_OUT`) instead of aborting the run. A claim that became final in
// the meantime keeps its outcome; a late answer afterwards finds the claim no longer awaiting one. The shell of
// pipeline/decide/timers.ts `decideOverdue`.
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import type { PipelineDeps } from "./deps.ts";
import { decideOverdue, startOverdue } from "./decide/timers.ts";
import { runDecider } from "./perform.ts";

/** Ends a claim still RECEIVED or RUNNING in NEEDS_REVIEW (`CLAIM_TIMED_OUT`) with an audit and a `ClaimNeedsReview` event; returns the claim as it is now. */
export async function endOverdueClaim(
  claimId: string,
  info: { readonly waitedMs: number; readonly detail?: string | undefined },
  deps: Pick<
    PipelineDeps,
    "claims" | "clock" | "audit" | "publisher" | "queues" | "reviews" | "ledger" | "agent" | "orders"
  >,
): Promise<ClaimRecord | undefined> {
  return runDecider(startOverdue(claimId, info), (state, observed) => decideOverdue(state, observed, deps), deps);
}
