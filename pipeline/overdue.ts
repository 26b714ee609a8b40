// A claim that ran out of time: the caller waited as long as the settings allow, so the claim goes to
// a person (NEEDS_REVIEW `CLAIM_TIMED_OUT`) instead of aborting the run. A claim that became final in
// the meantime keeps its outcome; a late answer afterwards finds the claim no longer awaiting one.
import type { ClaimRecord } from "../core/claims/claim-record.ts";
import type { PipelineDeps } from "./deps.ts";
import { reviewOpenedFor } from "./decide/needs-review.ts";
import { performEffects } from "./perform.ts";

/** The reason code of a claim that did not reach a decision in time. */
const CLAIM_TIMED_OUT = "CLAIM_TIMED_OUT";

/** Ends a claim still RECEIVED or RUNNING in NEEDS_REVIEW (`CLAIM_TIMED_OUT`) with an audit and a `ClaimNeedsReview` event; returns the claim as it is now. */
export async function endOverdueClaim(
  claimId: string,
  info: { readonly waitedMs: number; readonly detail?: string | undefined },
  deps: Pick<PipelineDeps, "claims" | "clock" | "audit" | "publisher" | "queues" | "reviews" | "ledger">,
): Promise<ClaimRecord | undefined> {
  const record = await deps.claims.getClaim(claimId);
  if (!record || (record.status !== "RECEIVED" && record.status !== "RUNNING")) return record;
  const now = deps.clock.now();
  const reason = `No decision within ${Math.round(info.waitedMs / 1000)} s (the claim was ${record.status}); a person decides. The model may be slower than the configured limits allow (LLM_TIMEOUT_MS, claims batch --claim-timeout).`;
  const updated = await deps.claims.updateClaim(
    claimId,
    { status: "NEEDS_REVIEW", reason_code: CLAIM_TIMED_OUT, reason, updated_at: new Date(now).toISOString() },
    ["RECEIVED", "RUNNING"],
  );
  if (!updated.changed) return updated.record;
  await performEffects(
    reviewOpenedFor(record, now, CLAIM_TIMED_OUT, reason, {
      waited_ms: info.waitedMs,
      last_status: record.status,
      ...(info.detail ? { detail: info.detail } : {}),
    }),
    deps,
  );
  return updated.record;
}
