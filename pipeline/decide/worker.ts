// The worker's process, decided: one agent step, once the shell has run it through the LLM port, as one
// `decideWorker(state, observation) → { effects, next }` the shell (pipeline/worker.ts) loops over: the claim read
// when the message does not name its flow or the step failed (the outage hold, docs/llm.md); a held claim's step sent
// again a little later instead of answered; else the step's audit (a self-check repair round, the LLM_CALL) and the
// answer to the crew carrying it, which the orchestrator stores with the step the answer makes (one write instead of
// two, docs/architecture.md). A model failure is an answer, not an error.
import type { runClaimsAgentStep } from "../../core/agents/agent-step.ts";
import { selfCheckRepairReason } from "../../core/agents/self-check.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { AuditEvent } from "../../core/integrity/index.ts";
import type { PipelineSettings } from "../deps.ts";
import type { Effect } from "../effects.ts";
import type { AgentStepMessage } from "../messages.ts";
import { claimAudit } from "./audit.ts";
import { holdDecision, unheldFailure } from "./outage.ts";
import type { Observation } from "./requests.ts";
import { observedAs } from "./step.ts";
import type { Next, Step } from "./step.ts";

/** What the step came to: answered (completed or failed), or held for the model. */
export type WorkerOutcome = "COMPLETED" | "FAILED" | "HELD";

/** What the worker decides with: the outage hold's settings. */
export type WorkerPolicy = {
  settings: Pick<PipelineSettings, "llmOutageHoldMs" | "llmOutageRetryMs" | "llmBatchHoldMs">;
};

/** The step as the shell ran it: its result, and when the call started and ended. */
export type AgentStepRun = {
  result: Awaited<ReturnType<typeof runClaimsAgentStep>>;
  started: number;
  now: number;
  /** The step asked the model through the OpenAI Batch API (LLM_BATCH_MODE=batch): its LLM_CALL says so. */
  viaBatch?: boolean;
};

/** Where the worker stands with a step. */
export type WorkerState =
  /** The step ran: the shell gives its run as the first observation. */
  { at: "ran"; message: AgentStepMessage } | { at: "claim"; message: AgentStepMessage; run: AgentStepRun };

/** The first observation: the step as run. */
export type WorkerObservation = Observation | ({ kind: "ran" } & AgentStepRun);

type WorkerStep = Step<Next<WorkerOutcome, WorkerState>>;

/** Above this size the step's audit is appended before the answer rather than carried in it (the queue's 256 KiB). */
const CARRY_AUDIT_UP_TO_BYTES = 64 * 1024;

/** The state a step starts in. */
export function workerStart(message: AgentStepMessage): WorkerState {
  return { at: "ran", message };
}

/** The worker's next step on the answer to what it asked last. */
export function decideWorker(state: WorkerState, observed: WorkerObservation, policy: WorkerPolicy): WorkerStep {
  if (state.at === "ran") {
    if (observed.kind !== "ran") throw new Error(`decideWorker: asked for the step's run, answered ${observed.kind}`);
    const { kind: _kind, ...run } = observed;
    const { message } = state;
    // The claim is read only when the message does not name its flow, or for a failed step (the outage hold).
    if (run.result.event.type === "agent.step.failed" || message.root_dfid === undefined)
      return {
        effects: [],
        next: { awaiting: { kind: "claim", claimId: message.claim_id }, state: { ...state, at: "claim", run } },
      };
    return answered(message, run, undefined);
  }
  const claim = observedAs(observed as Observation, "claim").claim;
  const { message, run } = state;
  const { event } = run.result;
  if (claim && event.type === "agent.step.failed") {
    const hold = holdDecision(claim, event.error, run.now, policy.settings, {
      step: "agent_step",
      key: message.request.correlationId,
    });
    if (hold) {
      const again: Effect = { kind: "agent_step", message, delayMs: hold.retryInMs };
      return { effects: hold.resend ? [again, ...hold.effects] : [], next: { done: "HELD" } };
    }
    // No (more) waiting: a batch's answer that never came back is an outage for the crew.
    const error = unheldFailure(event.error, claim);
    if (error !== event.error)
      return answered(message, { ...run, result: { ...run.result, event: { ...event, error } } }, claim);
  }
  return answered(message, run, claim);
}

/**
 * The step's audit and the answer carrying it. An audit too large to carry is appended first; an answer that cannot
 * be sent has its audit appended all the same (`ifFailed`: the step is retried, and its model call is audited).
 */
function answered(message: AgentStepMessage, run: AgentStepRun, claim: ClaimRecord | undefined): WorkerStep {
  const { result, started, now } = run;
  const record = {
    claim_id: message.claim_id,
    dfid: message.dfid,
    root_dfid: claim ? claim.root_dfid : (message.root_dfid ?? message.dfid),
    simulation_id: claim ? claim.simulation_id : message.simulation_id,
  };
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
        ...(result.analysis === undefined ? {} : { analysis: result.analysis }),
        usage: result.usage,
        duration_ms: now - started,
        ...(run.viaBatch && ok ? { via: "batch" as const } : {}),
      },
      ok ? "INFO" : "WARN",
    ),
  ];
  const outcome: WorkerOutcome = ok ? "COMPLETED" : "FAILED";
  const appended = audit.map((event): Effect => ({ kind: "audit", event }));
  const answer = result.event as Extract<Effect, { kind: "crew_event" }>["message"];
  const claimId = message.claim_id;
  if (Buffer.byteLength(JSON.stringify(audit)) > CARRY_AUDIT_UP_TO_BYTES)
    return {
      effects: appended,
      next: { then: { effects: [{ kind: "crew_event", claimId, message: answer }], next: { done: outcome } } },
    };
  return {
    effects: [{ kind: "crew_event", claimId, message: { ...answer, audit } as typeof answer }],
    ifFailed: appended,
    next: { done: outcome },
  };
}
