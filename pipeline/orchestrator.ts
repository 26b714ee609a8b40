// Orchestrator: the shell of pipeline/decide/orchestrator.ts. It loads the claim's crew session and the claim, then
// loops — the decider's effects performed in order, what it asks read or written (the outbox marked, the session
// saved with its outbox under a version condition: the save records the step's own audit events with it, one
// write), the answer fed back — until each message has its outcome. Every decision (which message reaches the crew,
// the outcomes, CREW_STARTED, the outage hold's end, the timer, the outbox's marker, triage) is the decider's.
import type { PipelineDeps } from "./deps.ts";
import { crewStart, decideCrew } from "./decide/orchestrator.ts";
import type { OrchestratorOutcome } from "./decide/orchestrator.ts";
import { claimIdOfCrew, mayHaveLegacySession, withoutCarriedAudit } from "./messages.ts";
import type { CrewQueueMessage } from "./messages.ts";
import { runDecider } from "./perform.ts";

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
 * Handles consecutive crew-queue messages of ONE claim (a FIFO batch may hold several of a group): one load, one
 * pure batch step of the crew over every message that reaches it (all at one instant), one conditional save of
 * snapshot + outbox, then the outbox is performed. Returns one outcome per message. Throws `VersionConflictError` on
 * a lost race: the whole group is retried, and the engine ignores what it already applied. The audit an answer
 * carries (the worker's LLM_CALL) goes into the step that answer makes, never to the crew.
 */
export async function handleCrewMessages(
  messages: readonly CrewQueueMessage[],
  deps: OrchestratorDeps,
): Promise<OrchestratorOutcome[]> {
  if (messages.length === 0) return [];
  const claimId = claimIdOfCrew(messages[0]!.crewId);
  if (messages.some((m) => claimIdOfCrew(m.crewId) !== claimId))
    throw new Error("handleCrewMessages: every message must belong to the same claim");
  const split = messages.map(withoutCarriedAudit);
  const batch = { claimId, messages: split.map((m) => m.message), carried: split.map((m) => m.audit) };
  const session = await deps.sessions.loadSession(claimId, { legacyLayout: mayHaveLegacySession(messages) });
  const claim = await deps.claims.getClaim(claimId);
  const first = decideCrew(crewStart(batch), { kind: "loaded", session, claim }, deps);
  return runDecider(first, (state, observed) => decideCrew(state, observed, deps), deps);
}
