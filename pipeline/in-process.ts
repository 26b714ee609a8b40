// The whole pipeline in one process over in-memory ports: the same services the Lambda handlers
// call, with the queues drained in a loop. Used by tests, benchmarks and replay checks.
import { createAgentRegistry } from "../core/integrity/index.ts";
import type { AuditEvent, Order } from "../core/integrity/index.ts";
import type { LlmPort } from "../core/llm/index.ts";
import type { Clock, IdSource, WorkQueues } from "./ports.ts";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import type { AgentSettings, PipelineDeps, PipelineSettings } from "./deps.ts";
import { DEFAULT_PIPELINE_SETTINGS } from "./deps.ts";
import type { InMemoryWork } from "./in-memory.ts";
import {
  createInMemoryAuditLog,
  createInMemoryClaimRepository,
  createInMemoryReviewRepository,
  createInMemoryContextStore,
  createInMemoryRefundLedger,
  createInMemorySettlementRepository,
  createInMemorySessionRepository,
  createInMemoryVerdictRepository,
  createInMemoryWorkQueues,
  createRecordingPublisher,
} from "./in-memory.ts";
import { extractClaim, submitClaim } from "./intake.ts";
import type { SubmitResult } from "./intake.ts";
import { handleProposal } from "./kernel-service.ts";
import { handleCrewMessage } from "./orchestrator.ts";
import { handleAgentStep } from "./worker.ts";
import { withReviewOpened } from "./review-opened.ts";
import { DEFAULT_REVIEW_DUE_MS } from "../core/kernel/review.ts";

/** Sequential ids `prefix_000001`, for tests and deterministic runs. */
export function sequentialIds(seed = ""): IdSource {
  let n = 0;
  return { next: (prefix) => `${prefix}_${seed}${String(++n).padStart(6, "0")}` };
}

/** Options of the in-process pipeline. */
interface InProcessOptions {
  agent: AgentSettings;
  orders: readonly Order[];
  llm: LlmPort;
  clock: Clock;
  ids?: IdSource;
  settings?: PipelineSettings;
  /** Replace any port (e.g. a failing publisher in a test). */
  overrides?: Partial<PipelineDeps>;
  /** Wraps the queues the services send through (a batch run with LLM_BATCH_MODE=batch keeps delayed messages: cli/batch-wait.ts). */
  wrapQueues?: (queues: WorkQueues) => WorkQueues;
}

/** The in-process pipeline: submit claims, drain the queues, read claims and the audit. */
export function createInProcessPipeline(opts: InProcessOptions) {
  const registry = createAgentRegistry({ acceptedMajor: 1 });
  const handshake = registry.handshake({
    agent_id: opts.agent.agentId,
    version: opts.agent.version,
    contract: opts.agent.responsibility,
  });
  const queues = createInMemoryWorkQueues();
  const claims = createInMemoryClaimRepository();
  const audit = createInMemoryAuditLog();
  const publisher = createRecordingPublisher();
  const verdicts = createInMemoryVerdictRepository();
  const deps: PipelineDeps = {
    claims,
    // A save records the step's own audit events in the audit port the pipeline uses (an override's too).
    sessions: createInMemorySessionRepository(opts.overrides?.audit ?? audit),
    verdicts,
    queues: opts.wrapQueues ? opts.wrapQueues(queues) : queues,
    // A ReviewOpened beside each ReviewRequested, as the composed functions publish (pipeline/review-opened.ts).
    publisher: withReviewOpened(publisher, () => opts.agent.review?.dueMs ?? DEFAULT_REVIEW_DUE_MS),
    audit,
    ledger: createInMemoryRefundLedger(),
    // Settlements of a batch run's rehearsed payments (docs/payments.md); nothing here pays a refund.
    settlements: createInMemorySettlementRepository(),
    reviews: createInMemoryReviewRepository(),
    orders: createInMemoryContextStore(opts.orders),
    llm: opts.llm,
    clock: opts.clock,
    ids: opts.ids ?? sequentialIds(),
    agent: opts.agent,
    registry,
    settings: opts.settings ?? DEFAULT_PIPELINE_SETTINGS,
    ...opts.overrides,
  };

  /** Processes queued work until every queue is empty; returns how many messages it handled. */
  async function drain(): Promise<number> {
    let handled = 0;
    for (let work = queues.take(); work; work = queues.take()) {
      handled++;
      await handleWork(work, deps);
    }
    return handled;
  }

  return {
    deps,
    handshake,
    audit,
    publisher,
    claims,
    verdicts,
    queues,
    /** Submits a claim body (`{ claim }` or `{ claim_text }`, optional `simulation_id`, `label`). */
    submit(body: unknown, options: { idempotencyKey?: string; claimId?: string } = {}): Promise<SubmitResult> {
      return submitClaim(body, options, deps);
    },
    drain,
    /** Submits one claim and drains the queues; returns the claim as it ends. */
    async decide(
      body: unknown,
      options: { idempotencyKey?: string; claimId?: string } = {},
    ): Promise<{ submit: SubmitResult; record?: ClaimRecord }> {
      const submit = await submitClaim(body, options, deps);
      await drain();
      return { submit, ...(submit.ok ? { record: await claims.getClaim(submit.claimId) } : {}) };
    },
    /** Every audit event so far. */
    auditEvents(): AuditEvent[] {
      return audit.all();
    },
  };
}

/** Hands one queued message to the service its queue feeds (as the Lambda event source mappings do). */
export async function handleWork(work: InMemoryWork, deps: PipelineDeps): Promise<void> {
  switch (work.queue) {
    case "extraction":
      await extractClaim(work.claimId, { finalAttempt: true }, deps);
      break;
    case "crew-events":
      await handleCrewMessage(work.message, deps);
      break;
    case "agent-steps":
      await handleAgentStep(work.message, deps);
      break;
    case "proposals":
      // In one process nothing delivers a message again: an order source that cannot answer ends the claim at once.
      await handleProposal(work.message, deps, { finalAttempt: true });
      break;
    case "timers":
      break;
  }
}

/** The in-process pipeline's type. */
export type InProcessPipeline = ReturnType<typeof createInProcessPipeline>;
