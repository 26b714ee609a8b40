// Orchestrator: load the claim's crew snapshot, deliver one event, save snapshot + outbox with a
// version condition, then perform the outbox. A redelivery finding an unperformed outbox performs it.
import { createCrewSession, resumeCrewSession } from "../core/crew/index.ts";
import type { CrewSession, OutboundCrewEvent } from "../core/crew/index.ts";
import { claimsCrewGraph, claimsCrewInput } from "../core/claims/crew.ts";
import { claimAudit } from "./audit-events.ts";
import type { PipelineDeps } from "./deps.ts";
import type { Effect } from "./effects.ts";
import { crewEffects } from "./decide/crew-completion.ts";
import { claimIdOfCrew } from "./messages.ts";
import type { CrewQueueMessage } from "./messages.ts";
import { performEffects } from "./perform.ts";

/** What one crew-queue message did. */
type OrchestratorOutcome = "STARTED" | "ADVANCED" | "DUPLICATE" | "IGNORED" | "REPAIRED";

/** Frozen clock for one delivery: every deadline computed while handling a message uses the same instant. */
function instant(now: number) {
  return { now: () => now };
}

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
>;

/**
 * Handles consecutive crew-queue messages of ONE claim (a FIFO batch may hold several of a group):
 * one load, every message delivered in order, one conditional save of snapshot + outbox, then the
 * outbox is performed. Returns one outcome per message. Throws `VersionConflictError` on a lost race:
 * the whole group is retried, and the engine ignores what it already applied.
 */
export async function handleCrewMessages(
  messages: readonly CrewQueueMessage[],
  deps: OrchestratorDeps,
): Promise<OrchestratorOutcome[]> {
  if (messages.length === 0) return [];
  const claimId = claimIdOfCrew(messages[0]!.crewId);
  if (messages.some((m) => claimIdOfCrew(m.crewId) !== claimId))
    throw new Error("handleCrewMessages: every message must belong to the same claim");
  let stored = await deps.sessions.loadSession(claimId);
  let repaired = false;
  if (stored && stored.outbox.length > 0) {
    await performEffects(stored.outbox, deps);
    await deps.sessions.clearOutbox(claimId, stored.version);
    stored = { ...stored, outbox: [] };
    repaired = true;
  }
  const quiet: OrchestratorOutcome = repaired ? "REPAIRED" : "IGNORED";
  const record = await deps.claims.getClaim(claimId);
  if (!record || !record.claim) return messages.map(() => quiet);
  const now = deps.clock.now();
  const graph = claimsCrewGraph(deps.settings.timeouts);
  const clock = instant(now);
  let session: CrewSession | undefined;
  const effects: Effect[] = [];
  const outcomes: OrchestratorOutcome[] = [];
  let rearm: number | undefined;

  for (const message of messages) {
    let events: OutboundCrewEvent[];
    if (message.type === "claim.start") {
      if (stored || session) {
        outcomes.push(repaired ? "REPAIRED" : "DUPLICATE");
        continue;
      }
      session = createCrewSession({ crewId: claimId, graph, clock });
      const rootInput = claimsCrewInput(record.claim, record.received_at);
      events = session.start(rootInput, { description: `Decide refund claim ${claimId}` });
      effects.push(
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
            root_input: rootInput,
            now_ms: now,
            crew: graph.name,
            timeouts: deps.settings.timeouts,
          }),
        },
      );
      outcomes.push("STARTED");
    } else {
      if (!session) {
        if (!stored) {
          outcomes.push(quiet);
          continue;
        }
        session = resumeCrewSession(stored.snapshot, [], { graph, clock }).session;
      }
      events = session.deliver(message);
      if (events.length === 0 && message.type === "crew.tick") {
        // Nothing was due yet: re-arm for the earliest deadline still in flight (no save needed).
        const due = session.nextDeadlineMs();
        if (due !== undefined) rearm = due;
        outcomes.push(quiet);
        continue;
      }
      const ignored =
        events.length > 0 &&
        events.every(
          (e) => e.type === "crew.diagnostic" && (e.code === "DUPLICATE_DELIVERY" || e.code === "LATE_DELIVERY"),
        );
      if (ignored) {
        outcomes.push(repaired ? "REPAIRED" : "DUPLICATE");
        continue;
      }
      const type = message.type === "agent.step.completed" ? "AGENT_STEP" : "AGENT_STEP_FAILED";
      effects.push({
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
    const nextDeadline = session.nextDeadlineMs();
    if (nextDeadline !== undefined && (message.type === "claim.start" || message.type === "crew.tick"))
      effects.push({ kind: "timer", claimId, dueMs: nextDeadline });
  }
  if (rearm !== undefined && !effects.some((e) => e.kind === "timer"))
    await performEffects([{ kind: "timer", claimId, dueMs: rearm }], deps);
  if (!session || effects.length === 0) return outcomes;

  const version = (stored?.version ?? 0) + 1;
  await deps.sessions.saveSession({ claimId, version, snapshot: session.snapshot(), outbox: effects });
  await performEffects(effects, deps);
  await deps.sessions.clearOutbox(claimId, version);
  return outcomes;
}
