// Orchestrator: load the claim's crew snapshot, step the crew (stepCrewMany), save snapshot + outbox
// with a version condition (the save records the step's own audit events with it: one write), then
// perform the rest of the outbox. An outbox not known to be performed (marked, or proven by what arrives:
// decide/outbox.ts) is performed again by the redelivery of the message that made its step.
import { initialCrewSnapshot, stepCrewMany } from "../core/crew/index.ts";
import type { CrewBatchResult, JsonValue, OutboundCrewEvent } from "../core/crew/index.ts";
import { claimsCrewGraph, claimsCrewInput } from "../core/agents/crew.ts";
import { claimAudit } from "./decide/audit.ts";
import type { PipelineDeps } from "./deps.ts";
import { splitSessionOutbox } from "./effects.ts";
import type { Effect } from "./effects.ts";
import { crewEffects } from "./decide/crew-completion.ts";
import { claimIdOfCrew } from "./messages.ts";
import { withoutCarriedAudit } from "./messages.ts";
import type { CrewQueueMessage } from "./messages.ts";
import { performEffects } from "./perform.ts";
import { triageOpenClaim } from "./triage.ts";
import { isHeld, resumeAudit } from "./decide/outage.ts";
import {
  MADE_BY_START,
  outboxNeedsMarker,
  outboxProof,
  outboxRepair,
  witnessedOutbox,
  witnessStepId,
} from "./decide/outbox.ts";
import type { OutboxProof } from "./decide/outbox.ts";

/** What one crew-queue message did. */
type OrchestratorOutcome = "STARTED" | "ADVANCED" | "DUPLICATE" | "IGNORED" | "REPAIRED" | "TRIAGED";

/** Handles one crew-queue message for a claim. Throws `VersionConflictError` when another consumer won a race (retry). */
export async function handleCrewMessage(
  message: CrewQueueMessage,
  deps: OrchestratorDeps,
): Promise<OrchestratorOutcome> {
  const [outcome] = await handleCrewMessages([message], deps);
  return outcome!;
}

/** What the orchestrator runs with. */
type OrchestratorDeps = Pick<
  PipelineDeps,
  | "claims"
  | "sessions"
  | "queues"
  | "audit"
  | "publisher"
  | "clock"
  | "agent"
  | "settings"
  | "reviews"
  | "ledger"
  | "sha256"
  | "verdicts"
  | "orders"
>;

/**
 * Handles consecutive crew-queue messages of ONE claim (a FIFO batch may hold several of a group):
 * one load, one pure batch step of the crew over every message that reaches it (all at one instant),
 * one conditional save of snapshot + outbox, then the outbox is performed. Returns one outcome per
 * message. Throws `VersionConflictError` on a lost race: the whole group is retried, and the engine
 * ignores what it already applied.
 */
export async function handleCrewMessages(
  messages: readonly CrewQueueMessage[],
  deps: OrchestratorDeps,
): Promise<OrchestratorOutcome[]> {
  // The audit an answer carries (the worker's LLM_CALL) goes into the step that answer makes; an answer that makes
  // none (a duplicate, a late one, a claim gone) has it appended here. The crew never sees it.
  const split = messages.map(withoutCarriedAudit);
  const carried = split.map((m) => m.audit);
  const stepped = new Set<number>();
  const outcomes = await stepCrew(
    split.map((m) => m.message),
    deps,
    (i) => {
      stepped.add(i);
      return carried[i]!.map((event) => ({ kind: "audit" as const, event }));
    },
  );
  const left = carried.flatMap((audit, i) => (stepped.has(i) ? [] : audit));
  if (left.length > 0)
    await performEffects(
      left.map((event) => ({ kind: "audit" as const, event })),
      deps,
    );
  return outcomes;
}

/** One load, one crew step over `messages`, one save; `carriedBy(i)` is the audit message `i` brings into the step. */
async function stepCrew(
  messages: readonly CrewQueueMessage[],
  deps: OrchestratorDeps,
  carriedBy: (index: number) => Effect[],
): Promise<OrchestratorOutcome[]> {
  if (messages.length === 0) return [];
  const claimId = claimIdOfCrew(messages[0]!.crewId);
  if (messages.some((m) => claimIdOfCrew(m.crewId) !== claimId))
    throw new Error("handleCrewMessages: every message must belong to the same claim");
  let stored = await deps.sessions.loadSession(claimId);
  let record = await deps.claims.getClaim(claimId);
  let repaired = false;
  // The latest step's outbox is performed unless it is marked, or proven by what arrives (decide/outbox.ts): an
  // answer to its agent step, the claim's hold on that step, the claim's verdict on its proposal. A proof that no
  // save supersedes below is recorded by the marker (an answer is gone once handled); unproven, it is performed again.
  let provenBy: OutboxProof | undefined;
  let answered: string | undefined;
  if (stored && stored.outbox.length > 0) {
    provenBy = outboxProof(stored.outbox, { messages, claim: record, sha256: deps.sha256 });
    if (provenBy === "answered") answered = witnessStepId(stored.outbox);
    // Only the redelivery of the message that made a witnessed step sends its step again (decide/outbox.ts).
    const repair = provenBy === undefined ? outboxRepair(stored.outbox, messages, deps.clock.now()) : undefined;
    if (repair !== undefined) {
      await performEffects(repair, deps);
      await deps.sessions.clearOutbox(claimId, stored.version);
      repaired = true;
      // What the outbox did to the claim (its start, its hold) is what the crew step below sees.
      record = await deps.claims.getClaim(claimId);
    }
    stored = { ...stored, outbox: [] };
  }
  const proven = stored && provenBy !== undefined && provenBy !== "decided" ? stored.version : undefined;
  const settle = async (outcomes: OrchestratorOutcome[]) => {
    if (proven !== undefined) await deps.sessions.clearOutbox(claimId, proven);
    return outcomes;
  };
  const quiet: OrchestratorOutcome = repaired ? "REPAIRED" : "IGNORED";
  if (!record || !record.claim) return settle(messages.map(() => quiet));
  // No crew yet: triage first (docs/kernel.md). A claim the kernel's rules reject is decided without a model call;
  // a redelivery (or the sweep's tick) finishes a triage a crash interrupted.
  if (!stored && deps.settings.triage !== false) {
    // A start's carried receipt goes into the audit before a triage verdict's events (or into the crew's first step).
    const receipts = messages.flatMap((m, i) => (m.type === "claim.start" ? carriedBy(i) : []));
    if ((await triageOpenClaim(record, deps, receipts)) === "TRIAGED") return messages.map(() => "TRIAGED");
  }
  const claim = record.claim;
  const now = deps.clock.now();
  const graph = claimsCrewGraph(deps.settings.timeouts);
  // A start reaches the crew only when it has none yet; anything else only once it has one. While the claim waits
  // for an unreachable model (the outage hold, docs/llm.md), the crew is not told the time: its waiting step
  // would time out and go to the fixer, which needs the model too. The answer, when it comes, is on time.
  const held = isHeld(record, now, deps.settings);
  let rootInput: JsonValue | undefined;
  let exists = stored !== undefined;
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
      : stepCrewMany(stored?.snapshot ?? initialCrewSnapshot({ crewId: claimId, graph }), inbound, {
          graph,
          nowMs: now,
        });
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
    const events: OutboundCrewEvent[] = result.events;
    if (message.type === "claim.start") {
      effects.push(
        ...carriedBy(i),
        {
          kind: "claim_update",
          claimId,
          patch: { status: "RUNNING", updated_at: new Date(now).toISOString() },
          onlyFrom: ["RECEIVED"],
        },
        {
          kind: "audit",
          event: claimAudit(record, "CREW_STARTED", "RUNNING", now, {
            crew_id: claimId,
            root_input: claimsCrewInput(claim, record.received_at),
            now_ms: now,
            crew: graph.name,
            timeouts: deps.settings.timeouts,
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
    effects.push(...crewEffects(events, record, now, deps, cause));
    // One timer per claim, not per step: armed at the start for the first deadline, and re-armed by
    // each tick while steps are still in flight (later deadlines are never earlier than the armed one).
    // The 5-minute sweep catches a timer that went missing.
    const nextDeadline = result.nextDeadlineMs;
    if (nextDeadline !== undefined && (message.type === "claim.start" || message.type === "crew.tick"))
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
  if (rearm !== undefined && !effects.some((e) => e.kind === "timer"))
    await performEffects([{ kind: "timer", claimId, dueMs: rearm }], deps);
  if (!step || effects.length === 0) return settle(outcomes);

  const version = (stored?.version ?? 0) + 1;
  // Unmarked only on the normal path, where what comes next proves it: the crew's start, or an answer that proved the
  // step before (no tick in the batch). There the step's one agent step goes last, flagged as the witness its answer
  // proves. A step after a repair, a tick or a hold is marked as before: answers to a step sent twice or timed out
  // may still come, and would find its outbox unproven (decide/outbox.ts).
  const maker =
    stored === undefined
      ? MADE_BY_START
      : messages.some((m, i) => reaches[i] && m.type === "crew.tick")
        ? undefined
        : answered;
  const outbox = maker !== undefined ? witnessedOutbox(effects, maker) : effects;
  // The save records the step's own audit events with the session (one write); the rest is performed after it.
  // It supersedes the outbox before it, performed or proven above: that one needs no marker now.
  await deps.sessions.saveSession({ claimId, version, snapshot: step.snapshot, outbox });
  const rest = splitSessionOutbox(claimId, outbox).rest;
  await performEffects(rest, deps);
  if (rest.length > 0 && (maker === undefined || outboxNeedsMarker(rest)))
    await deps.sessions.clearOutbox(claimId, version);
  return outcomes;
}
