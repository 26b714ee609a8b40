// Timers and the sweep, decided: a due timer, what nudges a claim that has not moved, when nudges that changed
// nothing make it STALLED, what ends a claim that ran out of time, and the customer's reservation such a claim leaves.
// Each process one `decide(state, observation) → { effects, next }`; the shells (pipeline/timers.ts,
// pipeline/overdue.ts) read the claims, perform and loop. Pure.
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { idempotencyKeyOf } from "../../core/integrity/index.ts";
import type { PolicyProposal } from "../../core/integrity/index.ts";
import { isFinal } from "../../core/kernel/claim-record.ts";
import type { PipelineDeps, PipelineSettings } from "../deps.ts";
import type { Effect } from "../effects.ts";
import type { TimerMessage } from "../messages.ts";
import { claimOutboxEffects, startEffects } from "./intake.ts";
import { reviewOpenedFor } from "./needs-review.ts";
import { isHeld } from "./outage.ts";
import { outboxProof } from "./outbox.ts";
import type { ClaimUpdate, Observation } from "./requests.ts";
import { ask, done, observedAs, within } from "./step.ts";
import type { Next, Step } from "./step.ts";

/** The crew of the claim told the time: steps past their deadline time out and go to the fixer. */
export function tickEffects(claimId: string, now: number): Effect[] {
  return [{ kind: "crew_event", claimId, message: { type: "crew.tick", crewId: claimId, nowMs: now } }];
}

/**
 * What moves a claim on (after any outbox it has stored is performed): a RECEIVED claim started as intake starts
 * it (its receipt audited again — identical, so dropped unless intake died before it — then extraction or the
 * crew), or a `crew.tick` for a RUNNING one. A structured claim is stored RUNNING by the intake that starts it, so
 * one whose crew has no session (`hasSession` false: intake died before the start) is started again; where the
 * session was not read (`undefined`), such a claim gets its start and a tick (the one that does not apply is ignored).
 */
export function nudgeEffects(
  claim: ClaimRecord,
  now: number,
  hasSession?: boolean,
): { nudge: "restarted" | "ticked"; effects: Effect[] } {
  if (claim.status === "RECEIVED") return { nudge: "restarted", effects: startEffects(claim) };
  if (claim.status === "RUNNING" && "claim" in claim.input && hasSession !== true) {
    if (hasSession === false) return { nudge: "restarted", effects: startEffects(claim) };
    return { nudge: "ticked", effects: [...startEffects(claim), ...tickEffects(claim.claim_id, now)] };
  }
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

type Outcome<O, S> = Step<Next<O, S>>;

/** What a timer decides with: the hash proposals are keyed with (a claim's verdict proves an outbox). */
export type TimerPolicy = Pick<PipelineDeps, "sha256">;

/** What a due timer did. */
export type TimerOutcome = "TICKED" | "REARMED" | "SETTLED";

/** Where a timer message stands. */
export type TimerState =
  | { at: "time"; message: TimerMessage }
  | { at: "claim"; message: TimerMessage; now: number }
  | { at: "session"; message: TimerMessage; now: number; claim: ClaimRecord };

/** A timer message starts by reading the clock. */
export function startTimer(message: TimerMessage): Outcome<TimerOutcome, TimerState> {
  return ask({ kind: "now" }, { at: "time", message });
}

/**
 * The timers' process for one timer message: a due timer becomes a `crew.tick` on the claim's FIFO group; an early
 * one (long deadline) is re-armed. A due timer of a claim that is already final, whose session has no outbox left
 * to perform, is dropped ("SETTLED"): a tick could move nothing there (no step is waited for, nothing to repair),
 * and it would cost a FIFO message and an orchestrator invocation per claim — the usual end of a claim's one timer,
 * which fires long after the verdict. Nothing left: the outbox is marked performed, or the claim proves it
 * (decide/outbox.ts: the verdict on the proposal the last step sent, which is not marked).
 */
export function decideTimer(
  state: TimerState,
  observed: Observation,
  policy: TimerPolicy,
): Outcome<TimerOutcome, TimerState> {
  const { message } = state;
  switch (state.at) {
    case "time": {
      const now = observedAs(observed, "now").now;
      if (message.due_ms > now)
        return done("REARMED", [{ kind: "timer", claimId: message.claim_id, dueMs: message.due_ms }]);
      return ask({ kind: "claim", claimId: message.claim_id }, { at: "claim", message, now });
    }
    case "claim": {
      const claim = observedAs(observed, "claim").claim;
      if (claim && isFinal(claim.status))
        return ask({ kind: "session", claimId: message.claim_id }, { ...state, at: "session", claim });
      return done("TICKED", tickEffects(message.claim_id, state.now));
    }
    case "session": {
      const { session } = observedAs(observed, "session");
      if (!session || session.outbox.length === 0) return done("SETTLED");
      if (outboxProof(session.outbox, { claim: state.claim, sha256: policy.sha256 }) !== undefined)
        return done("SETTLED");
      return done("TICKED", tickEffects(message.claim_id, state.now));
    }
  }
}

/**
 * Moves a claim on: performs an extraction outcome stored but never performed, starts a RECEIVED claim as intake
 * starts it (its receipt audited again — identical, so dropped unless intake died before it — then extraction or the
 * crew), or sends a RUNNING claim a `crew.tick`. Idempotent; asks nothing.
 */
export function nudge(claim: ClaimRecord, now: number, hasSession?: boolean): Outcome<"restarted" | "ticked", never> {
  const outbox = claimOutboxEffects(claim);
  if (outbox) return done("restarted", outbox);
  const { nudge: outcome, effects } = nudgeEffects(claim, now, hasSession);
  return done(outcome, effects);
}

/** A reservation on the customer's window whose refund never happened, released (pipeline/customer-release.ts runs it alone). */
export type ReleaseState =
  | { at: "order"; record: ClaimRecord; orderId: string }
  | { at: "ledger"; record: ClaimRecord; orderId: string; customerId: string }
  | { at: "released" };

/**
 * A claim that ended without its automatic refund (timed out, stalled) may still hold a reservation on the window of
 * its order's customer (the kernel reserves the window first, then the order's ledger, and died in between): the
 * overdue path and the sweep release it, so the customer limit never leaks. A claim whose refund the order's ledger
 * holds keeps its reservation: that refund was made. Done with whether one was looked for and released.
 */
export function startRelease(record: ClaimRecord, policy: Pick<PipelineDeps, "agent">): Outcome<boolean, ReleaseState> {
  const orderId = record.claim?.order_id;
  if (!policy.agent.contract.customer_limits || !orderId) return done(false);
  return ask({ kind: "order", orderId }, { at: "order", record, orderId }, "order_data");
}

/** The release's next step on the answer to what it asked. */
export function decideRelease(state: ReleaseState, observed: Observation): Outcome<boolean, ReleaseState> {
  switch (state.at) {
    case "order": {
      if (observed.kind === "failed") return done(false);
      const customerId = observedAs(observed, "order").order?.customer_id;
      if (customerId === undefined) return done(false);
      const { record, orderId } = state;
      return ask({ kind: "ledger", orderId, scope: record.simulation_id }, { ...state, at: "ledger", customerId });
    }
    case "ledger": {
      const entry = observedAs(observed, "ledger").entry;
      const { record, customerId } = state;
      if (entry && Object.hasOwn(entry.claims, record.claim_id)) return done(false);
      const release = {
        kind: "release_customer",
        customerId,
        claimId: record.claim_id,
        scope: record.simulation_id,
      } as const;
      return ask(release, { at: "released" });
    }
    case "released":
      observedAs(observed, "release_customer");
      return done(true);
  }
}

/** What the sweep does with one open claim it found: skipped (recent, or waiting for the model), or examined. */
export type SweptOutcome =
  | "recent"
  | "held"
  | "out_of_time"
  | "moved_on"
  | "stalled"
  | "restarted"
  | "ticked"
  | "resent";

/** What the sweep decides with: the nudges before STALLED, the hold's settings, the contract (customer limits). */
export type SweepPolicy = Pick<PipelineDeps, "agent" | "sha256"> & {
  settings: Pick<PipelineSettings, "llmOutageHoldMs">;
  maxTicks: number;
};

/** Where the sweep stands with one claim. */
export type SweptState =
  | { at: "time_left"; claim: ClaimRecord; now: number }
  | { at: "session"; claim: ClaimRecord; now: number }
  | { at: "sent_proposal"; claim: ClaimRecord; now: number; sessionVersion: number }
  | { at: "stored_verdict"; claim: ClaimRecord; now: number; sessionVersion: number; proposal: PolicyProposal }
  | { at: "stalled"; claim: ClaimRecord; effects: Effect[] }
  | { at: "release"; release: ReleaseState }
  | { at: "counted"; claim: ClaimRecord; now: number; hasSession?: boolean; resend?: PolicyProposal };

/**
 * The sweep's process for one open claim not updated since `cutoff` (ISO): a claim waiting for the model has its
 * work queued for a retry and is not stalled until its hold runs out; the run stops when it has no time left; else
 * the claim is examined (with its crew session's version when RUNNING): one more nudge counted on the claim, then
 * the nudge — or, after `maxTicks` nudges in a row that found it unchanged, NEEDS_REVIEW `STALLED`: the claim first,
 * conditionally (one that moved on since it was read keeps its course and gets no review), then its review, then a
 * reservation on the customer's window whose refund never happened released.
 */
export function startSweptClaim(
  claim: ClaimRecord,
  now: number,
  cutoff: string,
  policy: SweepPolicy,
): Outcome<SweptOutcome, SweptState> {
  // Claims received after the cutoff were updated after it too (updated_at ≥ received_at).
  if (claim.updated_at >= cutoff) return done("recent");
  if (isHeld(claim, now, policy.settings)) return done("held");
  return ask({ kind: "has_time" }, { at: "time_left", claim, now });
}

/** The sweep's next step for a claim on the answer to what it asked. */
export function decideSweptClaim(
  state: SweptState,
  observed: Observation,
  policy: SweepPolicy,
): Outcome<SweptOutcome, SweptState> {
  switch (state.at) {
    case "time_left": {
      if (!observedAs(observed, "has_time").hasTime) return done("out_of_time");
      const { claim } = state;
      if (claim.status === "RUNNING")
        return ask({ kind: "session", claimId: claim.claim_id }, { ...state, at: "session" });
      return swept(state.claim, 0, state.now, policy);
    }
    case "session": {
      const session = observedAs(observed, "session").session;
      const { claim, now } = state;
      // The crew completed and its outbox was performed, yet the claim is still RUNNING: its proposal was sent, and no
      // verdict finished it (the kernel's message went to its dead-letter queue, maybe after the verdict was stored or
      // published). A tick moves nothing there; the proposal the audit records is sent again instead.
      if (session !== undefined && crewCompleted(session.snapshot) && session.outbox.length === 0)
        return ask(
          { kind: "sent_proposal", claimId: claim.claim_id, dfid: claim.dfid },
          { at: "sent_proposal", claim, now, sessionVersion: session.version },
        );
      return swept(claim, session?.version ?? 0, now, policy, session !== undefined);
    }
    case "sent_proposal": {
      const { proposal } = observedAs(observed, "sent_proposal");
      if (proposal === undefined) return swept(state.claim, state.sessionVersion, state.now, policy, true);
      const key = idempotencyKeyOf(proposal, state.claim.dfid, policy.sha256);
      return ask({ kind: "verdict", key }, { ...state, at: "stored_verdict", proposal });
    }
    case "stored_verdict": {
      const { claim, proposal } = state;
      // The kernel stored its verdict (and may have paid and published it): the decision is made, and only the kernel
      // can finish it. The proposal goes to it again at every sweep, never counted towards STALLED: a person's review
      // beside a verdict already made would contradict it (the kernel's dead-letter alarm says it keeps failing).
      if (observedAs(observed, "verdict").verdict !== undefined) return done("resent", [proposalSent(claim, proposal)]);
      return swept(claim, state.sessionVersion, state.now, policy, true, proposal);
    }
    case "stalled": {
      if (!observedAs(observed, "claim_update").changed) return done("moved_on");
      const release = within(
        startRelease(state.claim, policy),
        (r): SweptState => ({ at: "release", release: r }),
        (): Outcome<SweptOutcome, SweptState> => done("stalled"),
      );
      return state.effects.length === 0 ? release : { effects: state.effects, next: { then: release } };
    }
    case "release":
      return within(
        decideRelease(state.release, observed),
        (r): SweptState => ({ at: "release", release: r }),
        (): Outcome<SweptOutcome, SweptState> => done("stalled"),
      );
    case "counted": {
      observedAs(observed, "claim_update");
      const { claim, resend } = state;
      if (resend === undefined) return nudge(claim, state.now, state.hasSession);
      return done("resent", [proposalSent(claim, resend)]);
    }
  }
}

/** The claim's proposal sent to the kernel (again). */
function proposalSent(claim: ClaimRecord, proposal: PolicyProposal): Effect {
  return { kind: "proposal", message: { claim_id: claim.claim_id, dfid: claim.dfid, proposal } };
}

/** Whether a stored crew snapshot is one that ended with an output (core/crew/snapshot.ts). */
function crewCompleted(snapshot: unknown): boolean {
  return typeof snapshot === "object" && snapshot !== null && (snapshot as { status?: unknown }).status === "completed";
}

function swept(
  claim: ClaimRecord,
  sessionVersion: number,
  now: number,
  policy: SweepPolicy,
  hasSession?: boolean,
  resend?: PolicyProposal,
) {
  const decision = sweepDecision(claim, sessionVersion, now, policy.maxTicks);
  if ("stalled" in decision) {
    const { patch, onlyFrom, effects } = decision.stalled;
    const update = { kind: "claim_update", claimId: claim.claim_id, patch, onlyFrom } as const;
    return ask({ kind: "claim_update", update: update as ClaimUpdate }, {
      at: "stalled",
      claim,
      effects,
    } as SweptState);
  }
  const update = {
    kind: "claim_update",
    claimId: claim.claim_id,
    patch: { sweep: decision.nudged },
    onlyFrom: [claim.status],
  } as ClaimUpdate;
  return ask({ kind: "claim_update", update }, {
    at: "counted",
    claim,
    now,
    ...(hasSession === undefined ? {} : { hasSession }),
    ...(resend === undefined ? {} : { resend }),
  } as SweptState);
}

/** Where ending an overdue claim stands. */
export type OverdueState =
  | { at: "claim"; info: OverdueInfo }
  | { at: "time"; info: OverdueInfo; record: ClaimRecord }
  | { at: "updated"; record: ClaimRecord; effects: Effect[] }
  | { at: "release"; release: ReleaseState; record: ClaimRecord | undefined };

/** How long the caller waited for the claim, and what it saw last. */
type OverdueInfo = { readonly waitedMs: number; readonly detail?: string | undefined };

/** Ending an overdue claim starts by reading it. */
export function startOverdue(claimId: string, info: OverdueInfo): Outcome<ClaimRecord | undefined, OverdueState> {
  return ask({ kind: "claim", claimId }, { at: "claim", info });
}

/**
 * A claim still RECEIVED or RUNNING after the caller waited as long as the settings allow goes to a person
 * (NEEDS_REVIEW `CLAIM_TIMED_OUT`, `overdueDecision`), the claim first, conditionally: one that became final meanwhile
 * keeps its outcome. Then its review, then a reservation on the customer's window whose refund never happened
 * released. Done with the claim as it is now.
 */
export function decideOverdue(
  state: OverdueState,
  observed: Observation,
  policy: Pick<PipelineDeps, "agent">,
): Outcome<ClaimRecord | undefined, OverdueState> {
  switch (state.at) {
    case "claim": {
      const record = observedAs(observed, "claim").claim;
      if (!record || isFinal(record.status)) return done(record);
      return ask({ kind: "now" }, { at: "time", info: state.info, record });
    }
    case "time": {
      const { record } = state;
      const decision = overdueDecision(record, state.info, observedAs(observed, "now").now);
      const update: ClaimUpdate = {
        kind: "claim_update",
        claimId: record.claim_id,
        patch: decision.patch,
        onlyFrom: decision.onlyFrom,
      };
      return ask({ kind: "claim_update", update }, { at: "updated", record, effects: decision.effects });
    }
    case "updated": {
      const updated = observedAs(observed, "claim_update");
      if (!updated.changed) return done(updated.record);
      const after = updated.record;
      const release = within(
        startRelease(after ?? state.record, policy),
        (r): OverdueState => ({ at: "release", release: r, record: after }),
        () => done(after),
      );
      return state.effects.length === 0 ? release : { effects: state.effects, next: { then: release } };
    }
    case "release":
      return within(
        decideRelease(state.release, observed),
        (r): OverdueState => ({ at: "release", release: r, record: state.record }),
        () => done(state.record),
      );
  }
}
