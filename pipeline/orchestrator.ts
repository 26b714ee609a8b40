// Orchestrator: load the claim's crew snapshot, step the crew (stepCrewMany), save snapshot + outbox
// with a version condition, then perform the outbox. A redelivery finding an unperformed outbox performs it.
import { initialCrewSnapshot, stepCrewMany } from "../core/crew/index.ts";
import type { CrewBatchResult, JsonValue, OutboundCrewEvent } from "../core/crew/index.ts";
import { buildProposal } from "../core/integrity/index.ts";
import type { ClaimRecord } from "../core/claims/claim-record.ts";
import { claimsCrewGraph, claimsCrewInput, crewFailureReview } from "../core/claims/crew.ts";
import { RefundProposalOutputSchema } from "../core/claims/proposal-output.ts";
import { selfCheck } from "../core/claims/self-check.ts";
import { claimAudit } from "./audit-events.ts";
import type { PipelineDeps } from "./deps.ts";
import type { Effect } from "./effects.ts";
import { needsReview } from "./intake.ts";
import { claimIdOfCrew } from "./messages.ts";
import type { CrewQueueMessage } from "./messages.ts";
import { performEffects } from "./perform.ts";

/** What one crew-queue message did. */
type OrchestratorOutcome = "STARTED" | "ADVANCED" | "DUPLICATE" | "IGNORED" | "REPAIRED";

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
 * one load, one pure batch step of the crew over every message that reaches it (all at one instant),
 * one conditional save of snapshot + outbox, then the outbox is performed. Returns one outcome per
 * message. Throws `VersionConflictError` on a lost race: the whole group is retried, and the engine
 * ignores what it already applied.
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
  const claim = record.claim;
  const now = deps.clock.now();
  const graph = claimsCrewGraph(deps.settings.timeouts);
  // A start reaches the crew only when it has none yet; anything else only once it has one.
  let rootInput: JsonValue | undefined;
  let exists = stored !== undefined;
  const inbound: unknown[] = [];
  const reaches = messages.map((message) => {
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
    effects.push(...routeCrewEvents(events, record, now, deps, cause));
    // One timer per claim, not per step: armed at the start for the first deadline, and re-armed by
    // each tick while steps are still in flight (later deadlines are never earlier than the armed one).
    // The 5-minute sweep catches a timer that went missing.
    const nextDeadline = result.nextDeadlineMs;
    if (nextDeadline !== undefined && (message.type === "claim.start" || message.type === "crew.tick"))
      effects.push({ kind: "timer", claimId, dueMs: nextDeadline });
  }
  if (rearm !== undefined && !effects.some((e) => e.kind === "timer"))
    await performEffects([{ kind: "timer", claimId, dueMs: rearm }], deps);
  if (!step || effects.length === 0) return outcomes;

  const version = (stored?.version ?? 0) + 1;
  await deps.sessions.saveSession({ claimId, version, snapshot: step.snapshot, outbox: effects });
  await performEffects(effects, deps);
  await deps.sessions.clearOutbox(claimId, version);
  return outcomes;
}

/**
 * Turns the crew's outbound events into pipeline effects: step requests, the proposal, or human review.
 * `cause` is the step failure being delivered: when the crew fails because the model could not be used
 * at all (LLM_UNREACHABLE, LLM_AUTH_FAILED), the review names that code and the endpoint's message.
 */
function routeCrewEvents(
  events: readonly OutboundCrewEvent[],
  record: ClaimRecord,
  now: number,
  deps: Pick<PipelineDeps, "agent" | "settings" | "sha256">,
  cause?: { readonly code?: string | undefined; readonly message: string },
): Effect[] {
  const effects: Effect[] = [];
  // A claim that is already final (e.g. it ran out of time and went to review) spends no more model
  // calls, and a late proposal never crosses the wall: a person decides it now.
  if (record.status === "DECIDED" || record.status === "NEEDS_REVIEW") {
    const late = events.find((e) => e.type === "crew.completed");
    if (late !== undefined) {
      effects.push({
        kind: "audit",
        event: claimAudit(
          record,
          "CREW_COMPLETED",
          record.status,
          now,
          {
            discarded: `the claim is already ${record.status}; the late proposal was not sent to the kernel`,
            output: late.output,
          },
          "WARN",
        ),
      });
    }
    return effects;
  }
  for (const event of events) {
    switch (event.type) {
      case "agent.step.requested":
        effects.push({ kind: "agent_step", message: { claim_id: record.claim_id, dfid: record.dfid, request: event } });
        break;
      case "fixer.invoked":
        effects.push({
          kind: "audit",
          event: claimAudit(record, "AGENT_STEP_FAILED", "RUNNING", now, { fixer: event }, "WARN"),
        });
        break;
      case "crew.completed":
        effects.push(...completionEffects(event.output, record, now, deps));
        break;
      case "crew.failed": {
        const review = crewFailureReview(event.reason, cause);
        effects.push(
          ...needsReview(
            record,
            now,
            review.reason_code,
            review.reason,
            {},
            { type: "CREW_FAILED", details: { code: event.code, role: event.role } },
          ),
        );
        break;
      }
      default:
        break;
    }
  }
  return effects;
}

function completionEffects(
  output: unknown,
  record: ClaimRecord,
  now: number,
  deps: Pick<PipelineDeps, "agent" | "settings" | "sha256">,
): Effect[] {
  const parsed = RefundProposalOutputSchema.safeParse(output);
  if (!parsed.success) {
    return needsReview(
      record,
      now,
      "CREW_OUTPUT_INVALID",
      "The crew's final output is not a valid refund proposal",
      {},
      { type: "CREW_FAILED", details: { output } },
    );
  }
  const check = selfCheck(parsed.data, deps.agent.responsibility, record.claim!);
  if (!check.ok) {
    const reason = `Self-check failed: ${check.failures.map((f) => f.message).join("; ")}`;
    return [
      { kind: "claim_update", claimId: record.claim_id, patch: { proposal: parsed.data } },
      ...needsReview(
        record,
        now,
        "CLAIMS_SELF_CHECK_FAILED",
        reason,
        {},
        { type: "CLAIMS_SELF_CHECK_FAILED", details: { output: parsed.data, failures: check.failures } },
      ),
    ];
  }
  const createdAt = new Date(now).toISOString();
  const proposal = buildProposal({
    dfid: record.dfid,
    agentId: deps.agent.agentId,
    output: parsed.data,
    createdAt,
    validForMs: deps.settings.proposalValidityMs,
    ...(deps.sha256 ? { sha256: deps.sha256 } : {}),
  });
  return [
    {
      kind: "claim_update",
      claimId: record.claim_id,
      patch: { proposal: parsed.data, updated_at: createdAt },
      onlyFrom: ["RUNNING"],
    },
    {
      kind: "audit",
      event: claimAudit(record, "AGENT_DECISION", "RUNNING", now, {
        output: parsed.data,
        proposal,
        self_check: "passed",
      }),
    },
    {
      kind: "proposal",
      message: { claim_id: record.claim_id, dfid: record.dfid, proposal },
    },
  ];
}
