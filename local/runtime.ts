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
import { DEFAULT_PIPELINE_SETTINGS } from "../pipeline/deps.ts";
import { createSimulatedDecline } from "../adapters/payments/simulated.ts";
import type { ReviewerIdentity } from "../core/kernel/review.ts";
import type { AuditEvent, Order } from "../core/integrity/index.ts";
import type { LlmPort } from "../core/llm/index.ts";
import type { Clock, IdSource, WorkQueues } from "../pipeline/ports.ts";
import { frozenClock } from "../core/crew/index.ts";
import { postReturnEvent, sweepDueReturns } from "../pipeline/returns.ts";
import type { ReturnEventResult, ReturnSweepResult } from "../pipeline/returns.ts";

/** What the batch runner, `serve` and the tests need from a running pipeline. */
export interface ClaimsRuntime {
  /** Says what runs underneath, for the console header. */
  readonly description: string;
  submit(body: unknown, opts?: { claimId?: string; idempotencyKey?: string }): Promise<SubmitResult>;
  /** Waits until the claim is DECIDED or NEEDS_REVIEW (or nothing is left to do) and returns it. */
  settle(claimId: string): Promise<ClaimRecord | undefined>;
  /** Resolves once nothing runs (queues empty, no handler busy): a batch run waiting for the Batch API (cli/batch-wait.ts). */
  idle?(): Promise<void>;
  getClaim(claimId: string): Promise<ClaimRecord | undefined>;
  /**
   * A reviewer's decision on the claim's review, as `POST /claims/{id}/review` takes it (docs/reviews.md); `by` is
   * who decides as their credential would say (a batch step's reviewer with a limit of their own), else the body's.
   */
  decideReview(claimId: string, body: unknown, by?: ReviewerIdentity, atMs?: number): Promise<ReviewResult>;
  /**
   * A batch run's `payment:` step (docs/config.md): the payment provider's decline (`declined`, e.g. `card_declined`)
   * of the refund the claim executed, rehearsed with the simulated provider through the same settlement, RefundFailed
   * and refund review a real decline opens. Only a simulation's refund; never a configured provider.
   */
  rehearseDecline(claimId: string, declined: string, atMs?: number): Promise<ClaimRehearsal>;
  /**
   * A return event for the claim, as `POST /claims/{id}/return-events` takes it (docs/returns.md), recorded at `atMs`
   * (a batch step's instant; default the runtime's clock); what it pays is settled before this resolves.
   */
  postReturnEvent(claimId: string, body: unknown, atMs?: number): Promise<ReturnEventResult>;
  /** The sweep's pass over the returns that are due (docs/returns.md) as of `atMs`; undefined: the policy asks none. */
  sweepReturns(atMs: number): Promise<ReturnSweepResult | undefined>;
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
  /** LLM_BATCH_MODE=batch: the run's claims ask `llm` (the Batch API) and wait up to `holdMs`; delayed sends go through `wrapQueues`. */
  batch?: RuntimeBatch;
}

/** What a runtime needs to run a batch's claims through the OpenAI Batch API (docs/llm.md, "Batch mode"). */
export interface RuntimeBatch {
  readonly llm: LlmPort;
  readonly holdMs: number;
  readonly wrapQueues: (queues: WorkQueues) => WorkQueues;
}

/** The whole pipeline in this process over in-memory ports (no emulators). */
export function createInProcessRuntime(opts: RuntimeOptions): ClaimsRuntime {
  const { batch, ...rest } = opts;
  const pipeline = createInProcessPipeline({
    ...rest,
    ...(batch
      ? {
          settings: { ...DEFAULT_PIPELINE_SETTINGS, llmBatchHoldMs: batch.holdMs },
          overrides: { batchLlm: batch.llm },
          wrapQueues: batch.wrapQueues,
        }
      : {}),
  });
  if (!pipeline.handshake.ok)
    throw new Error(`agent ${opts.agent.agentId} was refused by the registry: ${pipeline.handshake.message}`);
  return {
    description: "in-process (in-memory ports)",
    submit: (body, o = {}) => pipeline.submit(body, o),
    async settle(claimId) {
      await pipeline.drain();
      return pipeline.claims.getClaim(claimId);
    },
    async idle() {
      await pipeline.drain();
    },
    getClaim: (claimId) => pipeline.claims.getClaim(claimId),
    async decideReview(claimId, body, by, atMs) {
      const result = await decideReview(claimId, body, depsAt(pipeline.deps, atMs), by);
      await pipeline.drain();
      return result;
    },
    async rehearseDecline(claimId, declined, atMs) {
      const rehearsal = await rehearseDecline(depsAt(pipeline.deps, atMs), claimId, declined);
      await pipeline.drain();
      return rehearsal;
    },
    async postReturnEvent(claimId, body, atMs) {
      const result = await postReturnEvent(claimId, body, depsAt(pipeline.deps, atMs));
      await pipeline.drain();
      return result;
    },
    async sweepReturns(atMs) {
      const result = await sweepDueReturns(depsAt(pipeline.deps, atMs), { pageSize: SWEEP_PAGE });
      await pipeline.drain();
      return result;
    },
    appendAudit: (event) => pipeline.audit.append(event),
    auditBySimulation: (id) => pipeline.audit.bySimulation(id),
    async close() {},
  };
}

/** How many claims a batch step's sweep reads a page (as the timers' sweep). */
export const SWEEP_PAGE = 100;

/** A runtime's ports with the clock standing at `atMs` (a batch step's instant); as they are without one. */
export function depsAt(deps: PipelineDeps, atMs: number | undefined): PipelineDeps {
  return atMs === undefined ? deps : { ...deps, clock: frozenClock(atMs) };
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
