// Crew completion, decided: the crew's outbound events become pipeline effects — step requests for the worker,
// the proposal for the kernel (after the self-check), or a review when the crew failed or its output is unusable.
import type { OutboundCrewEvent } from "../../core/crew/index.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { crewFailureReview } from "../../core/agents/crew.ts";
import { RefundProposalOutputSchema } from "../../core/claim/proposal-output.ts";
import { selfCheck } from "../../core/agents/self-check.ts";
import { buildProposal } from "../../core/integrity/index.ts";
import type { AuditEvent, PolicyProposal } from "../../core/integrity/index.ts";
import { AUDIT_EVENTS } from "../../core/history/audit-events.ts";
import { claimAudit } from "./audit.ts";
import type { PipelineDeps } from "../deps.ts";
import type { Effect } from "../effects.ts";
import { needsReview } from "./needs-review.ts";

/** What the decision reads beyond the claim: the proposing agent, the proposal's validity, the hash to key it with. */
type CrewPolicy = Pick<PipelineDeps, "agent" | "settings" | "sha256">;

/**
 * Turns the crew's outbound events into pipeline effects: step requests, the proposal, or human review.
 * `cause` is the step failure being delivered: when the crew fails because the model could not be used
 * at all (LLM_UNREACHABLE, LLM_AUTH_FAILED), the review names that code and the endpoint's message.
 */
export function crewEffects(
  events: readonly OutboundCrewEvent[],
  record: ClaimRecord,
  now: number,
  policy: CrewPolicy,
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
        effects.push({
          kind: "agent_step",
          message: {
            claim_id: record.claim_id,
            dfid: record.dfid,
            root_dfid: record.root_dfid,
            ...(record.simulation_id === undefined ? {} : { simulation_id: record.simulation_id }),
            request: event,
          },
        });
        break;
      case "fixer.invoked":
        effects.push({
          kind: "audit",
          event: claimAudit(record, "AGENT_STEP_FAILED", "RUNNING", now, { fixer: event }, "WARN"),
        });
        break;
      case "crew.completed":
        effects.push(...completionEffects(event.output, record, now, policy));
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

function completionEffects(output: unknown, record: ClaimRecord, now: number, policy: CrewPolicy): Effect[] {
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
  const check = selfCheck(parsed.data, policy.agent.responsibility, record.claim!);
  if (!check.ok) {
    const reason = `Self-check failed: ${check.failures.map((f) => f.message).join("; ")}`;
    // The claim keeps the proposal a person is asked about, written with its NEEDS_REVIEW update (one write).
    return needsReview(
      record,
      now,
      "CLAIMS_SELF_CHECK_FAILED",
      reason,
      {},
      { type: "CLAIMS_SELF_CHECK_FAILED", details: { output: parsed.data, failures: check.failures } },
      parsed.data,
    );
  }
  const createdAt = new Date(now).toISOString();
  const proposal = buildProposal({
    dfid: record.dfid,
    agentId: policy.agent.agentId,
    output: parsed.data,
    createdAt,
    validForMs: policy.settings.proposalValidityMs,
    ...(policy.sha256 ? { sha256: policy.sha256 } : {}),
  });
  // No claim update here: the kernel writes the proposal with the claim's final update (DECIDED or NEEDS_REVIEW),
  // one write fewer per claim; the audit keeps the output meanwhile (docs/kernel.md).
  return [
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

/**
 * The proposal a claim's crew sent to the kernel, as its AGENT_DECISION audit event records it (the latest of the
 * claim's, among a flow's `events`); undefined when none is recorded or it no longer parses. The sweep sends it again
 * for a claim whose crew completed but which no verdict finished (decide/timers.ts): the very proposal, so the kernel
 * finds the verdict it stored under its key, or decides on what the audit already says crossed the wall.
 */
export function sentProposalIn(events: readonly AuditEvent[], claimId: string): PolicyProposal | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.event_type !== "AGENT_DECISION" || event.details.claim_id !== claimId) continue;
    const parsed = AUDIT_EVENTS.AGENT_DECISION.safeParse(event.details);
    return parsed.success ? parsed.data.proposal : undefined;
  }
  return undefined;
}
