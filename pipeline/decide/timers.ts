// Timers and the sweep, decided: what nudges a claim that has not moved, when nudges that changed nothing make
// it STALLED, and what ends a claim that ran out of time. Pure: the shells read the claims and perform.
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { Effect } from "../effects.ts";
import { startEffects } from "./intake.ts";
import { reviewOpenedFor } from "./needs-review.ts";

/** The crew of the claim told the time: steps past their deadline time out and go to the fixer. */
export function tickEffects(claimId: string, now: number): Effect[] {
  return [{ kind: "crew_event", claimId, message: { type: "crew.tick", crewId: claimId, nowMs: now } }];
}

/**
 * What moves a claim on (after any outbox it has stored is performed): a RECEIVED claim started as intake starts
 * it (its receipt audited again — identical, so dropped unless intake died before it — then extraction or the
 * crew), or a `crew.tick` for a RUNNING one.
 */
export function nudgeEffects(claim: ClaimRecord, now: number): { nudge: "restarted" | "ticked"; effects: Effect[] } {
  if (claim.status === "RECEIVED") return { nudge: "restarted", effects: startEffects(claim) };
  return { nudge: "ticked", effects: tickEffects(claim.claim_id, now) };
}

/** A claim moved to NEEDS_REVIEW by a conditional update of its own: the update, then the review's effects. */
interface ClaimToReview {
  patch: Partial<ClaimRecord>;
  onlyFrom: ClaimRecord["status"][];
  effects: Effect[];
}

/**
 * What the sweep does with a claim not updated since the cutoff, seen with its crew session's `sessionVersion`:
 * one more nudge counted on the claim (`seen` is what it looked like), or — after `maxTicks` nudges in a row that
 * found it unchanged — NEEDS_REVIEW `STALLED`: the claim first, conditionally (one that moved on since it was read
 * keeps its course and gets no review), then its review.
 */
export function sweepDecision(
  claim: ClaimRecord,
  sessionVersion: number,
  now: number,
  maxTicks: number,
): { stalled: ClaimToReview } | { nudged: { nudges: number; seen: string } } {
  const seen = `${claim.status}|${claim.updated_at}|${sessionVersion}`;
  const nudges = claim.sweep?.seen === seen ? claim.sweep.nudges + 1 : 1;
  if (nudges <= maxTicks) return { nudged: { nudges, seen } };
  const minutes = Math.round((now - Date.parse(claim.updated_at)) / 60_000);
  const reason = `The claim made no progress through ${maxTicks} sweeps (${claim.status} since ${claim.updated_at}, ${minutes} min): a person has to look at it`;
  return {
    stalled: {
      patch: { status: "NEEDS_REVIEW", reason_code: "STALLED", reason, updated_at: new Date(now).toISOString() },
      onlyFrom: [claim.status],
      effects: reviewOpenedFor(claim, now, "STALLED", reason, { nudges: maxTicks, status_before: claim.status }),
    },
  };
}

/** The reason code of a claim that did not reach a decision in time. */
const CLAIM_TIMED_OUT = "CLAIM_TIMED_OUT";

/**
 * A claim still RECEIVED or RUNNING after the caller waited `waitedMs`, as long as the settings allow: it goes to a
 * person (NEEDS_REVIEW `CLAIM_TIMED_OUT`), the claim first, conditionally (one that became final meanwhile keeps
 * its outcome).
 */
export function overdueDecision(
  record: ClaimRecord,
  info: { readonly waitedMs: number; readonly detail?: string | undefined },
  now: number,
): ClaimToReview {
  const reason = `No decision within ${Math.round(info.waitedMs / 1000)} s (the claim was ${record.status}); a person decides. The model may be slower than the configured limits allow (LLM_TIMEOUT_MS, claims batch --claim-timeout).`;
  return {
    patch: { status: "NEEDS_REVIEW", reason_code: CLAIM_TIMED_OUT, reason, updated_at: new Date(now).toISOString() },
    onlyFrom: ["RECEIVED", "RUNNING"],
    effects: reviewOpenedFor(record, now, CLAIM_TIMED_OUT, reason, {
      waited_ms: info.waitedMs,
      last_status: record.status,
      ...(info.detail ? { detail: info.detail } : {}),
    }),
  };
}
