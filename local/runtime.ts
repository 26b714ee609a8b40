// A runtime the CLI drives: the pipeline in one process (in-memory ports) or on the local stack.
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { createInProcessPipeline } from "../pipeline/in-process.ts";
import type { AgentSettings, PipelineWaits } from "../pipeline/deps.ts";
import type { SubmitResult } from "../pipeline/intake.ts";
import { decideReview } from "../pipeline/review.ts";
import type { ReviewResult } from "../pipeline/review.ts";
import { rehearseClaimPayment } from "../pipeline/payments.ts";
import type { ClaimRehearsal } from "../pipeline/payments.ts";
import type { PipelineDeps } from "../pipeline/deps.ts";
import { createSimulatedDecline } from "../adapters/payments/simulated.ts";
import type { ReviewerIdentity } from "../core/kernel/review.ts";
import type { AuditEvent, Order } from "../core/integrity/index.ts";
import type { LlmPort } from "../core/llm/index.ts";
import type { Clock, IdSource } from "../pipeline/ports.ts";

/** What the batch runner, `serve` and the tests need from a running pipeline. */
export interface ClaimsRuntime {
  /** Says what runs underneath, for the console header. */
  readonly description: string;
  submit(body: unknown, opts?: { claimId?: string; idempotencyKey?: string }): Promise<SubmitResult>;
  /** Waits until the claim is DECIDED or NEEDS_REVIEW (or nothing is left to do) and returns it. */
  settle(claimId: string): Promise<ClaimRecord | undefined>;
  getClaim(claimId: string): Promise<ClaimRecord | undefined>;
  /**
   * A reviewer's decision on the claim's review, as `POST /claims/{id}/review` takes it (docs/reviews.md); `by` is
   * who decides as their credential would say (a batch step's reviewer with a limit of their own), else the body's.
   */
  decideReview(claimId: string, body: unknown, by?: ReviewerIdentity): Promise<ReviewResult>;
  /**
   * A batch run's `payment:` step (docs/config.md): the payment provider's decline (`declined`, e.g. `card_declined`)
   * of the refund the claim executed, rehearsed with the simulated provider through the same settlement, RefundFailed
   * and refund review a real decline opens. Only a simulation's refund; never a configured provider.
   */
  rehearseDecline(claimId: string, declined: string): Promise<ClaimRehearsal>;
  appendAudit(event: AuditEvent): Promise<void>;
  auditBySimulation(simulationId: string): Promise<AuditEvent[]>;
  close(): Promise<void>;
}

/** What any runtime is built from. */
export interface RuntimeOptions {
  agent: AgentSettings;
  orders: readonly Order[];
  llm: LlmPort;
  clock: Clock;
  ids?: IdSource;
  /** The waits derived from the LLM settings (crew step deadlines, invocation and settle limits); the local stack uses them. */
  waits?: PipelineWaits;
}

/** The whole pipeline in this process over in-memory ports (no emulators). */
export function createInProcessRuntime(opts: RuntimeOptions): ClaimsRuntime {
  const pipeline = createInProcessPipeline(opts);
  if (!pipeline.handshake.ok)
    throw new Error(`agent ${opts.agent.agentId} was refused by the registry: ${pipeline.handshake.message}`);
  return {
    description: "in-process (in-memory ports)",
    submit: (body, o = {}) => pipeline.submit(body, o),
    async settle(claimId) {
      await pipeline.drain();
      return pipeline.claims.getClaim(claimId);
    },
    getClaim: (claimId) => pipeline.claims.getClaim(claimId),
    decideReview: (claimId, body, by) => decideReview(claimId, body, pipeline.deps, by),
    async rehearseDecline(claimId, declined) {
      const rehearsal = await rehearseDecline(pipeline.deps, claimId, declined);
      await pipeline.drain();
      return rehearsal;
    },
    appendAudit: (event) => pipeline.audit.append(event),
    auditBySimulation: (id) => pipeline.audit.bySimulation(id),
    async close() {},
  };
}

/**
 * The provider's decline of a batch run's refund, rehearsed over a runtime's ports with the simulated provider
 * declining `declined` (never the configured one): ClaimsRuntime.rehearseDecline of both runtimes.
 */
export function rehearseDecline(deps: PipelineDeps, claimId: string, declined: string): Promise<ClaimRehearsal> {
  return rehearseClaimPayment(claimId, {
    ...deps,
    settlements: deps.settlements,
    provider: createSimulatedDecline(declined),
  });
}
