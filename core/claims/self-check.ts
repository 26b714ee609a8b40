// The agent-side self-check (SPEC §4.5): before a proposal crosses the wall, the agent checks its own contract.
import { createAuditEvent, type AuditEvent } from "../integrity/audit.ts";
import type { ResponsibilityContract } from "../integrity/contracts.ts";
import type { RefundProposalOutput } from "./proposal-output.ts";

/** One failed self-check. */
export type SelfCheckFailure = { check: "policy_kind" | "confidence"; message: string };

/** The self-check result: pass, or `CLAIMS_SELF_CHECK_FAILED` with every failure (not just the first). */
export type SelfCheckResult = { ok: true } | { ok: false; code: "CLAIMS_SELF_CHECK_FAILED"; failures: SelfCheckFailure[] };

/**
 * Checks a Decision Maker output against the agent's own contract: the policy kind is in
 * `allowed_policy_types` and the confidence is at least `escalate_on_uncertainty` (equal passes).
 * A failure means the claim goes to NEEDS_REVIEW instead of the kernel.
 */
export function selfCheck(output: RefundProposalOutput, responsibility: ResponsibilityContract): SelfCheckResult {
  const failures: SelfCheckFailure[] = [];
  if (!responsibility.allowed_policy_types.includes(output.action)) {
    failures.push({ check: "policy_kind", message: `Policy kind '${output.action}' not in allowed_policy_types [${responsibility.allowed_policy_types.join(", ")}]` });
  }
  if (!(typeof output.confidence === "number" && output.confidence >= responsibility.escalate_on_uncertainty)) {
    failures.push({ check: "confidence", message: `Confidence ${String(output.confidence)} below escalate_on_uncertainty (${responsibility.escalate_on_uncertainty})` });
  }
  return failures.length === 0 ? { ok: true } : { ok: false, code: "CLAIMS_SELF_CHECK_FAILED", failures };
}

/** The audit event of a failed self-check (`CLAIMS_SELF_CHECK_FAILED`, claim state `NEEDS_REVIEW`). */
export function selfCheckFailedEvent(input: {
  dfid: string;
  rootDfid?: string;
  claimId: string;
  agentId: string;
  output: RefundProposalOutput;
  failures: SelfCheckFailure[];
  at: string;
  simulationId?: string;
}): AuditEvent {
  return createAuditEvent({
    dfid: input.dfid,
    ...(input.rootDfid === undefined ? {} : { rootDfid: input.rootDfid }),
    type: "CLAIMS_SELF_CHECK_FAILED",
    severity: "WARN",
    state: "NEEDS_REVIEW",
    details: { claim_id: input.claimId, agent_id: input.agentId, output: input.output, failures: input.failures },
    at: input.at,
    ...(input.simulationId === undefined ? {} : { simulationId: input.simulationId }),
  });
}
