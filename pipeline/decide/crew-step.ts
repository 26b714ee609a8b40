// One step of a claim's crew over a batch of its crew-queue messages, decided (a part of the orchestrator's decider,
// pipeline/decide/orchestrator.ts): which message reaches the crew, the pure batch step of the crew (stepCrewMany)
// at one instant, each message's outcome, the effects of what the crew did (CREW_STARTED and the claim RUNNING, the
// answered steps audited, the step requests, the proposal, a review), ending the outage hold, arming (at the start
// only with `stepTimers: "eager"`) and re-arming the claim's one timer, and the outbox saved with the snapshot — which
// of its effects the answer to its last agent step proves (decide/outbox.ts). Pure.
import { initialCrewSnapshot, stepCrewMany } from "../../core/crew/index.ts";
import type { CrewBatchResult, JsonValue } from "../../core/crew/index.ts";
import { claimsCrewGraph, claimsCrewGraphOfSnapshot, claimsCrewInput, crewNameFor } from "../../core/agents/crew.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { AuditEvent } from "../../core/integrity/index.ts";
import type { PipelineDeps } from "../deps.ts";
import type { Effect } from "../effects.ts";
import type { CrewQueueMessage } from "../messages.ts";
import type { StoredSession } from "../ports.ts";
import { claimAudit } from "./audit.ts";
import { crewEffects } from "./crew-completion.ts";
import { isHeld, resumeAudit } from "./outage.ts";
import { MADE_BY_START, witnessedOutbox } from "./outbox.ts";

/** What one crew-queue message did. */
export type OrchestratorOutcome = "STARTED" | "ADVANCED" | "DUPLICATE" | "IGNORED" | "REPAIRED" | "TRIAGED";

/** What the crew step decides with beyond the claim: the proposing agent, the settings, the hash to key with. */
export type CrewPolicy = Pick<PipelineDeps, "agent" | "settings" | "sha256">;

/** The batch and what was loaded for it, once the stored outbox before it is performed or proven. */
export interface CrewStepInput {
  readonly claimId: string;
  readonly messages: readonly CrewQueueMessage[];
  /** The audit each message carries (the worker's LLM_CALL, intake's receipt): into the step that message makes. */
  readonly carried: readonly (readonly AuditEvent[])[];
  /** The session as loaded, its outbox emptied (performed or proven); undefined: the crew has not started. */
  readonly session: StoredSession | undefined;
  /** The claim as read (after a repair: as read again); it has its structured claim. */
  readonly record: ClaimRecord;
  /** The outbox before was performed again by this batch (a repair). */
  readonly repaired: boolean;
  /** The correlation id of the agent step an answer of this batch proved (its outbox superseded unmarked). */
  readonly answered: string | undefined;
}

/** The crew step's decision. */
export interface CrewStepDecision {
  readonly outcomes: OrchestratorOutcome[];
  /** The messages whose carried audit went into the step. */
  readonly stepped: readonly number[];
  /** Nothing was due yet: the timer re-armed for the earliest deadline still in flight, performed at once (no save). */
  readonly rearm: Effect[];
  /**
   * The session saved with its outbox (conditionally on the version before), when the step changed anything;
   * `unmarked`: the outbox is left unmarked once performed when its witness can prove it (decide/outbox.ts).
   */
  readonly save?: { readonly session: StoredSession; readonly unmarked: boolean };
}

/** The crew stepped over the batch at `now`. */
export function crewStep(input: CrewStepInput, now: number, policy: CrewPolicy): CrewStepDecision {
  const { claimId, messages, session, record, repaired } = input;
  const claim = record.claim!;
  const stepped: number[] = [];
  const carriedBy = (index: number): Effect[] => {
    stepped.push(index);
    return input.carried[index]!.map((event) => ({ kind: "audit" as const, event }));
  };
  // A new crew is the one the crew shape setting gives this claim (docs/llm.md, "Crew shape"), recorded by name in
  // CREW_STARTED; a running one keeps the graph it was started on.
  const timeouts = policy.settings.timeouts;
  const graph =
    session === undefined
      ? claimsCrewGraph(timeouts, crewNameFor(claim, policy.agent.crewShape))
      : claimsCrewGraphOfSnapshot(session.snapshot, timeouts);
  // A start reaches the crew only when it has none yet; anything else only once it has one. While the claim waits
  // for an unreachable model (the outage hold, docs/llm.md), the crew is not told the time: its waiting step
  // would time out and go to the fixer, which needs the model too. The answer, when it comes, is on time.
  const held = isHeld(record, now, policy.settings);
  const eager = policy.settings.stepTimers === "eager";
  let rootInput: JsonValue | undefined;
  let exists = session !== undefined;
  const inbound: unknown[] = [];
  const reaches = messages.map((message) => {
    if (message.type === "crew.tick" && held) return false;
    if (message.type !== "claim.start") {
      if (exists) inbound.push(message);
      return exists;
    }
    if (exists) return false;
    exists = true;
    rootInput = claimsCrewInput(claim, record.received_at);
    const task = { description: `Decide refund claim ${claimId}` };
    inbound.push({ type: "crew.start", crewId: claimId, input: rootInput, task });
    return true;
  });
  const step: CrewBatchResult | undefined =
    inbound.length === 0
      ? undefined
      : stepCrewMany(session?.snapshot ?? initialCrewSnapshot({ crewId: claimId, graph }), inbound, {
          graph,
          nowMs: now,
        });
  const quiet: OrchestratorOutcome = repaired ? "REPAIRED" : "IGNORED";
  const effects: Effect[] = [];
  const outcomes: OrchestratorOutcome[] = [];
  let rearm: number | undefined;
  let next = 0;

  for (const [i, message] of messages.entries()) {
    if (!reaches[i]) {
      outcomes.push(message.type !== "claim.start" ? quiet : repaired ? "REPAIRED" : "DUPLICATE");
      continue;
    }
    const result = step!.results[next++]!;
    const events = result.events;
    if (message.type === "claim.start") {
      effects.push(
        ...carriedBy(i),
        // A claim stored RUNNING (structured: at intake; free text: by its extraction) needs no update to start; one
        // stored RECEIVED before that (an older release's) moves now.
        ...(record.status === "RECEIVED"
          ? [
              {
                kind: "claim_update",
                claimId,
                patch: { status: "RUNNING", updated_at: new Date(now).toISOString() },
                onlyFrom: ["RECEIVED"],
              } satisfies Effect,
            ]
          : []),
        {
          kind: "audit",
          event: claimAudit(record, "CREW_STARTED", "RUNNING", now, {
            crew_id: claimId,
            root_input: claimsCrewInput(claim, record.received_at),
            now_ms: now,
            crew: graph.name,
            timeouts: policy.settings.timeouts,
          }),
        },
      );
      outcomes.push("STARTED");
    } else {
      if (result.label === "not-due") {
        // Nothing was due yet: re-arm for the earliest deadline still in flight (no save needed).
        if (result.nextDeadlineMs !== undefined) rearm = result.nextDeadlineMs;
        outcomes.push(quiet);
        continue;
      }
      if (result.label === "duplicate" || result.label === "late") {
        outcomes.push(repaired ? "REPAIRED" : "DUPLICATE");
        continue;
      }
      const type = message.type === "agent.step.completed" ? "AGENT_STEP" : "AGENT_STEP_FAILED";
      effects.push(...carriedBy(i), {
        kind: "audit",
        event: claimAudit(
          record,
          type,
          "RUNNING",
          now,
          { inbound: message, now_ms: now, caused: events.map((e) => e.type) },
          type === "AGENT_STEP" ? "INFO" : "WARN",
        ),
      });
      outcomes.push("ADVANCED");
    }
    const cause = message.type === "agent.step.failed" ? message.error : undefined;
    effects.push(...crewEffects(events, record, now, policy, cause));
    // One timer per claim, not per step, re-armed by each tick while steps are still in flight (later deadlines are
    // never earlier than the armed one). Who arms it first is the `stepTimers` setting: `lazy` (the default), the
    // sweep's first tick of a claim still open after its cutoff — a claim decided in seconds, almost every one, sends
    // no timer message at all; `eager`, the crew's start, for its first deadline. The sweep catches a timer that went
    // missing either way (docs/architecture.md#timers-and-the-sweep).
    const nextDeadline = result.nextDeadlineMs;
    if (nextDeadline !== undefined && (message.type === "crew.tick" || (message.type === "claim.start" && eager)))
      effects.push({ kind: "timer", claimId, dueMs: nextDeadline });
  }
  // The model answered a claim that waited for it: the hold ends, and the crew's deadlines are watched again.
  if (record.llm_hold !== undefined && step && messages.some((m) => m.type === "agent.step.completed")) {
    effects.unshift(
      { kind: "claim_update", claimId, patch: { llm_hold: undefined }, onlyFrom: ["RUNNING"] },
      ...resumeAudit(record, now),
    );
    if (step.nextDeadlineMs !== undefined && !effects.some((e) => e.kind === "timer"))
      effects.push({ kind: "timer", claimId, dueMs: step.nextDeadlineMs });
  }
  const rearmed: Effect[] =
    rearm !== undefined && !effects.some((e) => e.kind === "timer") ? [{ kind: "timer", claimId, dueMs: rearm }] : [];
  if (!step || effects.length === 0) return { outcomes, stepped, rearm: rearmed };

  // Unmarked only on the normal path, where what comes next proves it: the crew's start, or an answer that proved the
  // step before (no tick in the batch). There the step's one agent step goes last, flagged as the witness its answer
  // proves. A step after a repair, a tick or a hold is marked as before: answers to a step sent twice or timed out
  // may still come, and would find its outbox unproven (decide/outbox.ts).
  const maker =
    session === undefined
      ? MADE_BY_START
      : messages.some((m, i) => reaches[i] && m.type === "crew.tick")
        ? undefined
        : input.answered;
  const outbox = maker !== undefined ? witnessedOutbox(effects, maker) : effects;
  const version = (session?.version ?? 0) + 1;
  return {
    outcomes,
    stepped,
    rearm: rearmed,
    save: { session: { claimId, version, snapshot: step.snapshot, outbox }, unmarked: maker !== undefined },
  };
}
