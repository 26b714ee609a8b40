// Orchestrator: load the claim's crew snapshot, deliver one event, save snapshot + outbox with a
// version condition, then perform the outbox. A redelivery finding an unperformed outbox performs it.
import { createCrewSession, resumeCrewSession } from "../../crew/index.ts";
import type { OutboundCrewEvent } from "../../crew/index.ts";
import { buildProposal } from "../../dir/index.ts";
import type { ClaimRecord } from "../claim-record.ts";
import { claimsCrewGraph, claimsCrewInput } from "../crew.ts";
import { RefundProposalOutputSchema } from "../proposal-output.ts";
import { selfCheck } from "../self-check.ts";
import { claimAudit } from "./audit-events.ts";
import type { PipelineDeps } from "./deps.ts";
import type { Effect } from "./effects.ts";
import { needsReview } from "./intake.ts";
import { claimIdOfCrew } from "./messages.ts";
import type { CrewQueueMessage } from "./messages.ts";
import { performEffects } from "./perform.ts";

/** What one crew-queue message did. */
export type OrchestratorOutcome = "STARTED" | "ADVANCED" | "DUPLICATE" | "IGNORED" | "REPAIRED";

/** Frozen clock for one delivery: every deadline computed while handling a message uses the same instant. */
function instant(now: number) {
  return { now: () => now };
}

/** Handles one crew-queue message for a claim. Throws `VersionConflictError` when another consumer won a race (retry). */
export async function handleCrewMessage(
  message: CrewQueueMessage,
  deps: Pick<PipelineDeps, "claims" | "sessions" | "queues" | "audit" | "publisher" | "clock" | "agent" | "settings">,
): Promise<OrchestratorOutcome> {
  const claimId = claimIdOfCrew(message.crewId);
  let stored = await deps.sessions.loadSession(claimId);
  let repaired = false;
  if (stored && stored.outbox.length > 0) {
    await performEffects(stored.outbox, deps);
    await deps.sessions.clearOutbox(claimId, stored.version);
    stored = { ...stored, outbox: [] };
    repaired = true;
  }
  const record = await deps.claims.getClaim(claimId);
  if (!record || !record.claim) return repaired ? "REPAIRED" : "IGNORED";
  const now = deps.clock.now();
  const graph = claimsCrewGraph(deps.settings.timeouts);
  const clock = instant(now);

  let events: OutboundCrewEvent[];
  let snapshot: unknown;
  let nextDeadline: number | undefined;
  const effects: Effect[] = [];
  if (message.type === "claim.start") {
    if (stored) return repaired ? "REPAIRED" : "DUPLICATE";
    const session = createCrewSession({ crewId: claimId, graph, clock });
    const rootInput = claimsCrewInput(record.claim, record.received_at);
    events = session.start(rootInput, { description: `Decide refund claim ${claimId}` });
    snapshot = session.snapshot();
    nextDeadline = session.nextDeadlineMs();
    effects.push(
      { kind: "claim_update", claimId, patch: { status: "RUNNING", updated_at: new Date(now).toISOString() }, onlyFrom: ["RECEIVED"] },
      { kind: "audit", event: claimAudit(record, "CREW_STARTED", "RUNNING", now, { crew_id: claimId, root_input: rootInput, now_ms: now, crew: graph.name, timeouts: deps.settings.timeouts }) },
    );
  } else {
    if (!stored) return repaired ? "REPAIRED" : "IGNORED";
    const resumed = resumeCrewSession(stored.snapshot, [message], { graph, clock });
    events = resumed.events;
    snapshot = resumed.session.snapshot();
    nextDeadline = resumed.session.nextDeadlineMs();
    const onlyDiagnostics = events.length > 0 && events.every((e) => e.type === "crew.diagnostic");
    if (events.length === 0 && message.type === "crew.tick") return repaired ? "REPAIRED" : "IGNORED";
    if (onlyDiagnostics) {
      const codes = events.map((e) => (e.type === "crew.diagnostic" ? e.code : ""));
      if (codes.every((c) => c === "DUPLICATE_DELIVERY" || c === "LATE_DELIVERY")) return repaired ? "REPAIRED" : "DUPLICATE";
    }
    const type = message.type === "agent.step.completed" ? "AGENT_STEP" : "AGENT_STEP_FAILED";
    effects.push({ kind: "audit", event: claimAudit(record, type, "RUNNING", now, { inbound: message, now_ms: now, caused: events.map((e) => e.type) }, type === "AGENT_STEP" ? "INFO" : "WARN") });
  }

  effects.push(...routeCrewEvents(events, record, now, deps));
  // A new step means a new deadline: arrange a tick for the earliest one (the sweep catches lost timers).
  if (nextDeadline !== undefined && events.some((e) => e.type === "agent.step.requested")) effects.push({ kind: "timer", claimId, dueMs: nextDeadline });

  const version = (stored?.version ?? 0) + 1;
  await deps.sessions.saveSession({ claimId, version, snapshot, outbox: effects });
  await performEffects(effects, deps);
  await deps.sessions.clearOutbox(claimId, version);
  return message.type === "claim.start" ? "STARTED" : "ADVANCED";
}

/** Turns the crew's outbound events into pipeline effects: step requests, the proposal, or human review. */
export function routeCrewEvents(
  events: readonly OutboundCrewEvent[],
  record: ClaimRecord,
  now: number,
  deps: Pick<PipelineDeps, "agent" | "settings">,
): Effect[] {
  const effects: Effect[] = [];
  for (const event of events) {
    switch (event.type) {
      case "agent.step.requested":
        effects.push({ kind: "agent_step", message: { claim_id: record.claim_id, dfid: record.dfid, request: event } });
        break;
      case "fixer.invoked":
        effects.push({ kind: "audit", event: claimAudit(record, "AGENT_STEP_FAILED", "RUNNING", now, { fixer: event }, "WARN") });
        break;
      case "crew.completed":
        effects.push(...completionEffects(event.output, record, now, deps));
        break;
      case "crew.failed":
        effects.push(
          ...needsReview(record, now, "CREW_FAILED", `The crew could not produce a proposal: ${event.reason}`, {}, { type: "CREW_FAILED", details: { code: event.code, role: event.role } }),
        );
        break;
      default:
        break;
    }
  }
  return effects;
}

function completionEffects(output: unknown, record: ClaimRecord, now: number, deps: Pick<PipelineDeps, "agent" | "settings">): Effect[] {
  const parsed = RefundProposalOutputSchema.safeParse(output);
  if (!parsed.success) {
    return needsReview(record, now, "CREW_OUTPUT_INVALID", "The crew's final output is not a valid refund proposal", {}, { type: "CREW_FAILED", details: { output } });
  }
  const check = selfCheck(parsed.data, deps.agent.responsibility);
  if (!check.ok) {
    const reason = `Self-check failed: ${check.failures.map((f) => f.message).join("; ")}`;
    return [
      { kind: "claim_update", claimId: record.claim_id, patch: { proposal: parsed.data } },
      ...needsReview(record, now, "CLAIMS_SELF_CHECK_FAILED", reason, {}, { type: "CLAIMS_SELF_CHECK_FAILED", details: { output: parsed.data, failures: check.failures } }),
    ];
  }
  const createdAt = new Date(now).toISOString();
  const proposal = buildProposal({ dfid: record.dfid, agentId: deps.agent.agentId, output: parsed.data, createdAt, validForMs: deps.settings.proposalValidityMs });
  return [
    { kind: "claim_update", claimId: record.claim_id, patch: { proposal: parsed.data, updated_at: createdAt }, onlyFrom: ["RUNNING"] },
    { kind: "audit", event: claimAudit(record, "AGENT_DECISION", "RUNNING", now, { output: parsed.data, proposal, self_check: "passed" }) },
    {
      kind: "proposal",
      message: {
        claim_id: record.claim_id,
        dfid: record.dfid,
        root_dfid: record.root_dfid,
        ...(record.simulation_id ? { simulation_id: record.simulation_id } : {}),
        claim: record.claim!,
        received_at: record.received_at,
        sent_at: createdAt,
        proposal,
      },
    },
  ];
}
