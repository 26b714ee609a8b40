// The production handlers of functions/ over the in-memory stores and simulated SQS queues (chaos/sim-queues.ts), on
// a simulated clock, with a model port the test builds (the openai adapter against the scripted server, behind its
// endpoint check or the Batch API): claims are submitted, then every message is delivered and the sweep run until
// nothing is left, and the run's claims, audit, events, invariants and replays are returned. Used by the outage hold's
// and the batch mode's tests (chaos/outage.test.ts, chaos/batch-mode.test.ts). Time is simulated: no test waits.
import { readFileSync } from "node:fs";
import { parseConfig } from "../core/claim/config.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import { createAgentRegistry } from "../core/integrity/index.ts";
import type { LlmPort } from "../core/llm/index.ts";
import { createIntakeExtractHandler } from "../functions/intake-extract.ts";
import { createKernelHandler } from "../functions/kernel.ts";
import type { SqsHandler } from "../functions/consumers/sqs-consumer.ts";
import { createOrchestratorHandler } from "../functions/orchestrator.ts";
import { createSweepHandler } from "../functions/sweep.ts";
import { createTimerHandler } from "../functions/timer.ts";
import { createWorkerHandler } from "../functions/worker.ts";
import type { QueueRole } from "../app/manifest.ts";
import type { PipelineDeps, PipelineSettings } from "../pipeline/deps.ts";
import {
  createInMemoryAuditLog,
  createInMemoryClaimRepository,
  createInMemoryContextStore,
  createInMemoryRefundLedger,
  createInMemoryReviewRepository,
  createInMemorySessionRepository,
  createInMemoryVerdictRepository,
  createRecordingPublisher,
} from "../pipeline/in-memory.ts";
import { sequentialIds } from "../pipeline/in-process.ts";
import { submitClaim } from "../pipeline/intake.ts";
import { checkFlowInvariants } from "./invariants.ts";
import { LAMBDA_CONTEXT, sqsBatch, watchingLogger } from "./lambda-events.ts";
import { createRng } from "./rng.ts";
import { createSimQueues } from "./sim-queues.ts";

export const START = Date.parse("2026-06-01T12:00:00Z");
export const MIN = 60_000;
export const config = parseConfig(
  readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"),
  "config.yaml",
  START,
);

/** What the scripted model answers, by the order the request is about. */
export const ANSWERS = {
  ord_001: {
    extraction: {
      order_id: "ord_001",
      amount_eur: 299.99,
      category: "electronics",
      reason: "The screen is dead.",
      purchase_date: "2026-05-29",
      currency: "EUR",
    },
    proposal: {
      action: "REFUND",
      order_id: "ord_001",
      amount_eur: 299.99,
      category: "electronics",
      reason: "Within the contract's bounds.",
      confidence: 0.9,
    },
  },
  ord_010: {
    extraction: {
      order_id: "ord_010",
      amount_eur: 120,
      category: "home",
      reason: "The lamp arrived broken.",
      purchase_date: "2026-05-27",
      currency: "EUR",
    },
    proposal: {
      action: "REFUND",
      order_id: "ord_010",
      amount_eur: 120,
      category: "home",
      reason: "Within the contract's bounds.",
      confidence: 0.9,
    },
  },
} as const;

const orderOf = (raw: string) => (raw.includes("ord_010") ? "ord_010" : "ord_001");

/** The scripted server's answers for the two claims: extraction, the two agents' and the compact crew's steps. */
export const SCRIPTED_ANSWERS = {
  refund_proposal: (r: { raw: string }) => JSON.stringify(ANSWERS[orderOf(r.raw)].proposal),
  // The compact crew's one step (docs/llm.md, "Crew shape"): its analysis, then the same proposal.
  claim_decision: (r: { raw: string }) =>
    JSON.stringify({ analysis: "Within the contract as stated.", ...ANSWERS[orderOf(r.raw)].proposal }),
  claim_extraction: (r: { raw: string }) => JSON.stringify(ANSWERS[orderOf(r.raw)].extraction),
  text: "The claim is within every boundary as stated.",
};

/** The two claims every run submits: one structured, one free text. */
export const CLAIM_BODIES: readonly Record<string, unknown>[] = [
  { claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "The screen is dead." } },
  { claim_text: "Order ord_010: the lamp (home, 120 EUR) arrived broken, I want my money back." },
];

/** A run of the stack: the model ports and settings, what is submitted, and what to do on each turn. */
export interface LlmStackRun {
  readonly clock: { now: () => number; set: (ms: number) => void };
  readonly llm: LlmPort;
  readonly batchLlm?: LlmPort;
  readonly settings: PipelineSettings;
  readonly bodies?: readonly Record<string, unknown>[];
  /** Called at each turn before messages are delivered (what a test watches, e.g. /health). */
  readonly onTurn?: (now: number) => void;
}

/** Submits the claims, then delivers every message and runs the sweep until nothing is left. */
export async function runLlmStack(run: LlmStackRun) {
  const { clock } = run;
  const queues = createSimQueues({
    clock,
    rng: createRng(7),
    faults: { duplicate: 0, delay: 0, maxDelayMs: 0, crashAfterCalls: [], race: 0, lostTimer: 0 },
  });
  const agent = config.agent;
  const registry = createAgentRegistry({ acceptedMajor: 1 });
  registry.handshake({ agent_id: agent.agentId, version: agent.version, contract: agent.responsibility });
  const claims = createInMemoryClaimRepository();
  const reviews = createInMemoryReviewRepository();
  const verdicts = createInMemoryVerdictRepository();
  const audit = createInMemoryAuditLog();
  const publisher = createRecordingPublisher();
  const ledger = createInMemoryRefundLedger();
  const deps: PipelineDeps = {
    claims,
    sessions: createInMemorySessionRepository(audit),
    verdicts,
    queues: queues.port,
    publisher,
    audit,
    ledger,
    reviews,
    orders: createInMemoryContextStore(config.orders),
    llm: run.llm,
    ...(run.batchLlm ? { batchLlm: run.batchLlm } : {}),
    clock,
    ids: sequentialIds(),
    agent,
    registry,
    settings: run.settings,
  };
  const errors: string[] = [];
  const logger = watchingLogger((line) => errors.push(line));
  const consumers: Record<QueueRole, SqsHandler> = {
    crewEvents: createOrchestratorHandler(() => deps, { logger }),
    agentSteps: createWorkerHandler(() => deps, { logger }),
    proposals: createKernelHandler(() => deps, { logger }),
    extraction: createIntakeExtractHandler(() => deps, { logger }),
    timers: createTimerHandler(() => deps, { logger }),
  };
  const sweep = createSweepHandler(() => deps, { logger, env: {} });

  const submitted: string[] = [];
  for (const body of run.bodies ?? CLAIM_BODIES) {
    const result = await submitClaim(body, {}, deps);
    if (!result.ok) throw new Error(`intake refused a claim: ${result.code}`);
    submitted.push(result.claimId);
  }

  let nextSweep = clock.now() + 5 * MIN;
  for (let step = 0; step < 5_000; step++) {
    const now = clock.now();
    run.onTurn?.(now);
    const batches = queues.available(now);
    if (batches.length === 0) {
      const next = queues.nextVisibleAt();
      if (next === undefined && claims.all().every((c) => c.status === "DECIDED" || c.status === "NEEDS_REVIEW")) break;
      if (now >= nextSweep) {
        nextSweep = now + 5 * MIN;
        await sweep();
        continue;
      }
      clock.set(Math.max(now + 1, Math.min(next ?? Infinity, nextSweep)));
      // A check the model port started runs on the real event loop: let it finish before time moves on.
      await new Promise((resolve) => setTimeout(resolve, 5));
      continue;
    }
    for (const batch of batches) {
      queues.receive(batch);
      // This stack has no refund executor: nothing routes to the payments queue.
      const role = batch[0]!.role as QueueRole;
      const answer = await consumers[role](
        sqsBatch(
          batch.map((m) => ({ id: String(m.id), body: m.body, receives: m.receives, group: m.group })),
          `arn:aws:sqs:us-east-1:000000000000:${role}`,
        ),
        LAMBDA_CONTEXT,
      );
      const failed = new Set(answer.batchItemFailures.map((f) => f.itemIdentifier));
      queues.settle(new Map(batch.map((m) => [m, !failed.has(String(m.id))])), now);
    }
    clock.set(clock.now() + 1_000);
  }
  const all = audit.all();
  const invariants = checkFlowInvariants({
    claims: claims.all(),
    verdicts: verdicts.all(),
    reviews: reviews.all(),
    // A batch run's claims reserve on their simulation's own ledger.
    ledgers: (
      await Promise.all(
        [...new Set(claims.all().map((c) => c.simulation_id))].flatMap((sim) =>
          ["ord_001", "ord_010"].map(async (o) => ({ scope: sim, entry: await ledger.get(o, sim) })),
        ),
      )
    ).flatMap(({ scope, entry }) => (entry ? [{ scope, entry }] : [])),
    events: publisher.published.map((e) => ({ detailType: e.detailType, detail: e.detail as Record<string, unknown> })),
    audit: all,
    orders: config.orders,
    limitEur: agent.contract.max_refund_without_escalation,
    responsibility: agent.responsibility,
  });
  return {
    claims: submitted.map((id) => claims.all().find((c) => c.claim_id === id)!),
    audit: all,
    published: publisher.published,
    invariants,
    errors,
    deadLetters: queues.deadLetters.length,
    endedAt: clock.now(),
    replays: submitted.map((id) => replayClaim(id, all, { review: reviews.all().find((r) => r.claim_id === id) })),
  };
}

/** The event types of one claim's audit, in order. */
export const types = (audit: { event_type: string; details: { claim_id?: unknown } }[], claimId: string) =>
  audit.filter((e) => e.details.claim_id === claimId).map((e) => e.event_type);

/** A settable simulated clock from START. */
export function simClock(): { now: () => number; set: (ms: number) => void } {
  let now = START;
  return { now: () => now, set: (ms) => void (now = ms) };
}
