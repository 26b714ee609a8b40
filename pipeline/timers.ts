// Timers and the sweep: a claim never waits forever on a worker that died (docs/architecture.md).
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import type { PipelineDeps } from "./deps.ts";
import type { TimerMessage } from "./messages.ts";
import { nudgeEffects, sweepDecision, tickEffects } from "./decide/timers.ts";
import { releaseUnrefundedReservation } from "./customer-release.ts";
import { performClaimOutbox, performEffects } from "./perform.ts";
import { repairRefundReviews } from "./refund-review.ts";
import { repairReviews } from "./review.ts";
import { isHeld } from "./decide/outage.ts";
import { outboxProof } from "./decide/outbox.ts";

/** SQS delays a message at most 15 minutes. */
const MAX_TIMER_DELAY_S = 900;

/** Seconds to delay a timer message due at `dueMs` (0 when due, capped at 15 minutes). */
export function timerDelaySeconds(dueMs: number, nowMs: number): number {
  return Math.max(0, Math.min(MAX_TIMER_DELAY_S, Math.ceil((dueMs - nowMs) / 1000)));
}

/**
 * A due timer becomes a `crew.tick` on the claim's FIFO group; an early one (long deadline) is re-armed.
 * A due timer of a claim that is already final, whose session has no outbox left to perform, is
 * dropped ("SETTLED"): a tick could move nothing there (no step is waited for, nothing to repair), and
 * it would cost a FIFO message and an orchestrator invocation per claim — the usual end of a claim's
 * one timer, which fires long after the verdict. Nothing left: the outbox is marked performed, or the claim
 * proves it (decide/outbox.ts: the verdict on the proposal the last step sent, which is not marked).
 */
export async function handleTimer(
  message: TimerMessage,
  deps: Pick<
    PipelineDeps,
    "queues" | "clock" | "audit" | "claims" | "sessions" | "publisher" | "reviews" | "ledger" | "sha256"
  >,
): Promise<"TICKED" | "REARMED" | "SETTLED"> {
  const now = deps.clock.now();
  if (message.due_ms > now) {
    await deps.queues.scheduleTimer(message.claim_id, message.due_ms);
    return "REARMED";
  }
  const record = await deps.claims.getClaim(message.claim_id);
  if (record && FINAL_STATUSES.includes(record.status)) {
    const session = await deps.sessions.loadSession(message.claim_id);
    if (!session || session.outbox.length === 0) return "SETTLED";
    if (outboxProof(session.outbox, { claim: record, sha256: deps.sha256 }) !== undefined) return "SETTLED";
  }
  await performEffects(tickEffects(message.claim_id, now), deps);
  return "TICKED";
}

/** What a sweep did. */
interface SweepResult {
  /** Stalled claims found (open, not updated since the cutoff), over every page. */
  examined: number;
  restarted: string[];
  ticked: string[];
  /** Claims moved to NEEDS_REVIEW `STALLED` after `maxTicks` nudges that changed nothing. */
  stalled: string[];
  /** Review decisions that had been claimed but not finished, completed now. */
  reviewsRepaired: number;
  /** Set when the run ran out of time (`hasTime`) and left the claims it had not reached to the next run. */
  stoppedEarly?: true;
}

/** Settings of a sweep. */
interface SweepOptions {
  /** A claim not updated for this long is nudged. */
  stalledAfterMs: number;
  /** Claims read per page; the sweep reads every page while `hasTime` allows, so no claim can keep it from the others. */
  pageSize: number;
  /** Nudges in a row that find the claim unchanged before it is moved to NEEDS_REVIEW `STALLED`. */
  maxTicks: number;
  /** Asked before each claim and before the review repair: false stops the run, leaving the rest to the next one. */
  hasTime?: () => boolean;
}

/** What the sweep runs with (repairing a review decision may reserve a refund, publish and audit). */
type SweepDeps = Pick<
  PipelineDeps,
  | "claims"
  | "sessions"
  | "reviews"
  | "verdicts"
  | "orders"
  | "ledger"
  | "audit"
  | "publisher"
  | "queues"
  | "clock"
  | "ids"
  | "agent"
  | "registry"
  | "settings"
  | "settlements"
>;

const OPEN_STATUSES = ["RECEIVED", "RUNNING"] as const;
const FINAL_STATUSES: readonly string[] = ["DECIDED", "NEEDS_REVIEW"];

/** Every open claim received before `before` (ISO), page by page, newest first. */
async function* openClaims(
  deps: Pick<PipelineDeps, "claims">,
  pageSize: number,
  before?: string,
): AsyncGenerator<ClaimRecord> {
  let cursor: string | undefined;
  do {
    const page = await deps.claims.listClaims({
      statuses: OPEN_STATUSES,
      limit: pageSize,
      ...(before ? { before } : {}),
      ...(cursor ? { cursor } : {}),
    });
    yield* page.items;
    cursor = page.nextCursor;
  } while (cursor);
}

/** What nudging a claim may do: perform its stored outbox, audit its receipt and start it, or tick its crew. */
type NudgeDeps = Pick<PipelineDeps, "claims" | "queues" | "audit" | "publisher" | "reviews" | "ledger">;

/**
 * Moves a claim on: performs an extraction outcome stored but never performed, starts a RECEIVED claim as
 * intake starts it (its receipt audited again — identical, so dropped unless intake died before it — then
 * extraction or the crew), or sends a RUNNING claim a `crew.tick`. Idempotent.
 */
async function nudge(claim: ClaimRecord, now: number, deps: NudgeDeps): Promise<"restarted" | "ticked"> {
  if (await performClaimOutbox(claim, deps)) return "restarted";
  const { nudge: done, effects } = nudgeEffects(claim, now);
  await performEffects(effects, deps);
  return done;
}

/**
 * Finds claims that have not moved for `stalledAfterMs` and nudges them: a RECEIVED claim is started again
 * as intake starts it (its receipt audited, then extraction or the crew), a claim with an extraction outcome
 * stored but never performed has it performed, a RUNNING claim gets a
 * `crew.tick` (the crew times out steps past their deadline and routes them to the fixer). Every
 * nudge is idempotent, so a sweep that overlaps a live claim changes nothing. A claim that `maxTicks`
 * nudges in a row found unchanged (same status, `updated_at` and crew session version) cannot progress:
 * it ends in NEEDS_REVIEW `STALLED` and a person gets its review. The sweep reads every page of open
 * claims, and finally completes review decisions a crash interrupted (`repairReviews`).
 */
export async function sweepStalledClaims(deps: SweepDeps, opts: SweepOptions): Promise<SweepResult> {
  const now = deps.clock.now();
  const cutoff = new Date(now - opts.stalledAfterMs).toISOString();
  const result: SweepResult = { examined: 0, restarted: [], ticked: [], stalled: [], reviewsRepaired: 0 };
  const hasTime = opts.hasTime ?? (() => true);
  // Claims received after the cutoff were updated after it too (updated_at ≥ received_at).
  for await (const claim of openClaims(deps, opts.pageSize, cutoff)) {
    if (claim.updated_at >= cutoff) continue;
    // A claim waiting for the model has its work queued for a retry: it is not stalled until its hold runs out.
    if (isHeld(claim, now, deps.settings)) continue;
    if (!hasTime()) return { ...result, stoppedEarly: true };
    result.examined++;
    const session = claim.status === "RUNNING" ? await deps.sessions.loadSession(claim.claim_id) : undefined;
    const decision = sweepDecision(claim, session?.version ?? 0, now, opts.maxTicks);
    if ("stalled" in decision) {
      const { patch, onlyFrom, effects } = decision.stalled;
      // The claim first, conditionally: one that moved on since it was read keeps its course and gets no review.
      if (!(await deps.claims.updateClaim(claim.claim_id, patch, onlyFrom)).changed) continue;
      await performEffects(effects, deps);
      // A reservation on the customer's window whose refund never happened is released.
      await releaseUnrefundedReservation(claim, deps);
      result.stalled.push(claim.claim_id);
      continue;
    }
    await deps.claims.updateClaim(claim.claim_id, { sweep: decision.nudged }, [claim.status]);
    result[(await nudge(claim, now, deps)) === "restarted" ? "restarted" : "ticked"].push(claim.claim_id);
  }
  if (!hasTime()) return { ...result, stoppedEarly: true };
  result.reviewsRepaired = await repairReviews(deps, opts.pageSize);
  if (!hasTime()) return { ...result, stoppedEarly: true };
  result.reviewsRepaired += await repairRefundReviews(deps);
  return result;
}

/**
 * Nudges every open claim once, however recent, without counting towards STALLED: what the local stack
 * does on start, so that a claim whose message was lost with a stopped process moves on at once.
 */
export async function redriveOpenClaims(
  deps: NudgeDeps & Pick<PipelineDeps, "clock">,
  opts: { pageSize: number },
): Promise<{ restarted: number; ticked: number }> {
  const now = deps.clock.now();
  const counts = { restarted: 0, ticked: 0 };
  for await (const claim of openClaims(deps, opts.pageSize)) counts[await nudge(claim, now, deps)]++;
  return counts;
}
