// Timers and the sweep: a claim never waits forever on a worker that died (docs/architecture.md). The shells of
// pipeline/decide/timers.ts: a timer message, and the sweep, which pages through open claims and runs the decider
// for each (then repairs review decisions a crash interrupted).
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import type { PipelineDeps } from "./deps.ts";
import type { TimerMessage } from "./messages.ts";
import { decideSweptClaim, decideTimer, nudge, startSweptClaim, startTimer } from "./decide/timers.ts";
import type { SweptState, TimerOutcome } from "./decide/timers.ts";
import type { Observation } from "./decide/requests.ts";
import { runDecider } from "./perform.ts";
import { repairRefundReviews } from "./refund-review.ts";
import { repairReviews } from "./review.ts";
import { repairDueReturns, sweepDueReturns } from "./returns.ts";
import { shortestReturnDeadlineDays } from "../core/kernel/returns.ts";
import type { ReturnSweepResult } from "./returns.ts";

/** Handles one timer message (pipeline/decide/timers.ts `decideTimer`): a tick, a timer re-armed, or nothing left to do. */
export async function handleTimer(
  message: TimerMessage,
  deps: Pick<
    PipelineDeps,
    "queues" | "clock" | "audit" | "claims" | "sessions" | "publisher" | "reviews" | "ledger" | "sha256"
  >,
): Promise<TimerOutcome> {
  return runDecider(startTimer(message), (state, observed) => decideTimer(state, observed, deps), deps);
}

/** What a sweep did. */
interface SweepResult {
  /** Stalled claims found (open, not updated since the cutoff), over every page. */
  examined: number;
  restarted: string[];
  ticked: string[];
  /**
   * RUNNING claims whose crew had completed and sent its proposal, yet no verdict finished them: the proposal the
   * audit records sent to the kernel again (only when there were any).
   */
  resent?: string[];
  /** Claims moved to NEEDS_REVIEW `STALLED` after `maxTicks` nudges that changed nothing. */
  stalled: string[];
  /** Review decisions that had been claimed but not finished, completed now. */
  reviewsRepaired: number;
  /** Set when the run ran out of time (`hasTime`) and left the claims it had not reached to the next run. */
  stoppedEarly?: true;
  /** What the return deadlines did (docs/returns.md); only with a policy that asks for returns. */
  returns?: ReturnSweepResult;
  /** Claims whose return's release or review a crash had cut off after the claim moved, completed now (if any). */
  returnsRepaired?: string[];
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
  | "sha256"
>;

const OPEN_STATUSES = ["RECEIVED", "RUNNING"] as const;

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
 * Finds claims that have not moved for `stalledAfterMs` and nudges them: a RECEIVED claim is started again
 * as intake starts it (its receipt audited, then extraction or the crew), a claim with an extraction outcome
 * stored but never performed has it performed, a RUNNING claim gets a
 * `crew.tick` (the crew times out steps past their deadline and routes them to the fixer). Every
 * nudge is idempotent, so a sweep that overlaps a live claim changes nothing. A claim that `maxTicks`
 * nudges in a row found unchanged (same status, `updated_at` and crew session version) cannot progress:
 * it ends in NEEDS_REVIEW `STALLED` and a person gets its review. The sweep reads every page of open
 * claims, and completes review decisions a crash interrupted (`repairReviews`); with a policy that asks for returns,
 * it finally ends the claims whose return deadline passed with no event (`sweepReturns`, docs/returns.md) and completes
 * the release or the review a crash cut off after a return moved its claim (`repairReturnOutcomes`).
 */
export async function sweepStalledClaims(deps: SweepDeps, opts: SweepOptions): Promise<SweepResult> {
  const now = deps.clock.now();
  const cutoff = new Date(now - opts.stalledAfterMs).toISOString();
  const result: SweepResult = { examined: 0, restarted: [], ticked: [], stalled: [], reviewsRepaired: 0 };
  const hasTime = opts.hasTime ?? (() => true);
  const policy = { agent: deps.agent, settings: deps.settings, maxTicks: opts.maxTicks, sha256: deps.sha256 };
  const decide = (state: SweptState, observed: Observation) => decideSweptClaim(state, observed, policy);
  for await (const claim of openClaims(deps, opts.pageSize, cutoff)) {
    const outcome = await runDecider(startSweptClaim(claim, now, cutoff, policy), decide, { ...deps, hasTime });
    if (outcome === "out_of_time") return { ...result, stoppedEarly: true };
    if (outcome === "recent" || outcome === "held") continue;
    result.examined++;
    if (outcome === "stalled") result.stalled.push(claim.claim_id);
    if (outcome === "restarted" || outcome === "ticked") result[outcome].push(claim.claim_id);
    if (outcome === "resent") result.resent = [...(result.resent ?? []), claim.claim_id];
  }
  if (!hasTime()) return { ...result, stoppedEarly: true };
  result.reviewsRepaired = await repairReviews(deps, opts.pageSize);
  if (!hasTime()) return { ...result, stoppedEarly: true };
  result.reviewsRepaired += await repairRefundReviews(deps);
  // The return deadlines (docs/returns.md): only claims AWAITING_RETURN received long enough ago to be due.
  if (shortestReturnDeadlineDays(deps.agent.contract) === undefined) return result;
  if (!hasTime()) return { ...result, stoppedEarly: true };
  const returns = await sweepDueReturns(deps, { pageSize: opts.pageSize, hasTime });
  const swept = returns === undefined ? result : { ...result, returns };
  // Then what a crash cut off after a return moved its claim: the refund's release, the review (docs/returns.md).
  if (!hasTime()) return { ...swept, stoppedEarly: true };
  const repaired = await repairDueReturns(deps, { pageSize: opts.pageSize, movedBefore: cutoff, hasTime });
  return repaired === undefined || repaired.length === 0 ? swept : { ...swept, returnsRepaired: repaired };
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
  for await (const claim of openClaims(deps, opts.pageSize))
    counts[await runDecider(nudge(claim, now), () => unreachable(), deps)]++;
  return counts;
}

/** A nudge asks nothing: its decider is never called back. */
function unreachable(): never {
  throw new Error("a nudge asks nothing");
}
