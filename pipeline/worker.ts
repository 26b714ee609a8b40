// Worker: runs one agent step through the LLM port and sends the answer back to the claim's crew.
import { runClaimsAgentStep } from "../core/agents/agent-step.ts";
import { selfCheckRepairReason } from "../core/agents/self-check.ts";
import { claimAudit } from "./decide/audit.ts";
import type { PipelineDeps } from "./deps.ts";
import type { AgentStepMessage } from "./messages.ts";
import { performEffects } from "./perform.ts";
import { holdDecision } from "./decide/outage.ts";
import type { AuditEvent } from "../core/integrity/audit.ts";
import type { CrewQueueMessage } from "./messages.ts";
import type { EffectPorts } from "./deps.ts";

/** Above this size the step's audit is appended here rather than carried in the answer (the queue's 256 KiB). */
const CARRY_AUDIT_UP_TO_BYTES = 64 * 1024;

/**
 * Sends the crew its answer carrying the step's audit, which the orchestrator stores with the step the answer makes
 * (one write instead of two, docs/architecture.md). An audit too large to carry is appended first, as is the audit of an answer
 * that could not be sent (the step is retried, and its model call is audited all the same).
 */
async function answerWithAudit(
  claimId: string,
  answer: Extract<CrewQueueMessage, { type: "agent.step.completed" | "agent.step.failed" }>,
  audit: AuditEvent[],
  ports: EffectPorts,
): Promise<void> {
  const appendAudit = () =>
    performEffects(
      audit.map((event) => ({ kind: "audit" as const, event })),
      ports,
    );
  if (Buffer.byteLength(JSON.stringify(audit)) > CARRY_AUDIT_UP_TO_BYTES) {
    await appendAudit();
    await performEffects([{ kind: "crew_event", claimId, message: answer }], ports);
    return;
  }
  try {
    await performEffects([{ kind: "crew_event", claimId, message: { ...answer, audit } }], ports);
  } catch (error) {
    await appendAudit().catch(() => undefined); // the send's error is the one to report
    throw error;
  }
}

/**
 * Runs the step and sends `agent.step.completed` / `agent.step.failed`; a model failure is an answer, not an error.
 * While the model cannot be reached and the claim's outage hold lasts (docs/llm.md), the crew gets no answer: the
 * step goes back to its queue to be tried again a little later ("HELD").
 */
export async function handleAgentStep(
  message: AgentStepMessage,
  deps: Pick<
    PipelineDeps,
    "claims" | "llm" | "agent" | "queues" | "audit" | "publisher" | "clock" | "reviews" | "ledger" | "settings"
  >,
): Promise<"COMPLETED" | "FAILED" | "HELD"> {
  const started = deps.clock.now();
  const result = await runClaimsAgentStep(message.request, {
    llm: deps.llm,
    contract: deps.agent.contract,
    responsibility: deps.agent.responsibility,
  });
  const now = deps.clock.now();
  const record = {
    claim_id: message.claim_id,
    dfid: message.dfid,
    root_dfid: message.root_dfid ?? message.dfid,
    simulation_id: message.simulation_id,
  };
  // The claim is read only when the message does not name its flow, or for a failed step (the outage hold).
  const failed = result.event.type === "agent.step.failed";
  const claim = failed || message.root_dfid === undefined ? await deps.claims.getClaim(message.claim_id) : undefined;
  if (claim) Object.assign(record, { root_dfid: claim.root_dfid, simulation_id: claim.simulation_id });
  if (claim && result.event.type === "agent.step.failed") {
    const hold = holdDecision(claim, result.event.error, now, deps.settings, {
      step: "agent_step",
      key: message.request.correlationId,
    });
    if (hold) {
      const again = { kind: "agent_step" as const, message, delayMs: hold.retryInMs };
      await performEffects(hold.resend ? [again, ...hold.effects] : [], deps);
      return "HELD";
    }
  }
  const ok = result.event.type === "agent.step.completed";
  const repair = result.selfCheckRepair;
  const audit: AuditEvent[] = [
    // The Decision Maker's first proposal failed the self-check and got one repair round (docs/kernel.md).
    ...(repair === undefined
      ? []
      : [
          claimAudit(
            record,
            "CLAIMS_SELF_CHECK_FAILED",
            "RUNNING",
            now,
            {
              role: message.request.role,
              correlation_id: message.request.correlationId,
              reason_code: "CLAIMS_SELF_CHECK_FAILED",
              reason: selfCheckRepairReason(repair.failures),
              output: repair.output,
              failures: repair.failures,
            },
            "WARN",
          ),
        ]),
    claimAudit(
      record,
      "LLM_CALL",
      "RUNNING",
      now,
      {
        role: message.request.role,
        agent_id: message.request.agentId,
        correlation_id: message.request.correlationId,
        ok,
        ...(result.event.type === "agent.step.failed" ? { error: result.event.error } : {}),
        model: result.model,
        attempts: result.attempts,
        ...(result.calls === undefined ? {} : { calls: result.calls }),
        usage: result.usage,
        duration_ms: now - started,
      },
      ok ? "INFO" : "WARN",
    ),
  ];
  await answerWithAudit(message.claim_id, result.event as never, audit, deps);
  return ok ? "COMPLETED" : "FAILED";
}
