// A model outage is not a pile of reviews (docs/llm.md: the outage hold). The production handlers of functions/
// over the in-memory stores and simulated SQS queues (chaos/sim-queues.ts), on a simulated clock, with the openai
// adapter behind its endpoint check against the scripted OpenAI-compatible server, which is down, then up again.
// Claims that need the model wait while it is down and are decided normally once it answers; past the hold they
// end NEEDS_REVIEW LLM_UNREACHABLE; without a hold (claims batch --keep-going) at once. Nothing is lost or done
// twice, and every claim replays. Time is simulated: no test waits for the clock.
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAiModel } from "../adapters/llm/openai.ts";
import { guardWithPreflight, preflightLlm } from "../adapters/llm/preflight.ts";
import { answerBySchema, startScriptedLlmServer } from "../adapters/llm/scripted-server.ts";
import type { ScriptedLlmServer } from "../adapters/llm/scripted-server.ts";
import { parseConfig } from "../core/claim/config.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import { createAgentRegistry } from "../core/integrity/index.ts";
import { createIntakeExtractHandler } from "../functions/intake-extract.ts";
import { createKernelHandler } from "../functions/kernel.ts";
import type { SqsHandler } from "../functions/consumers/sqs-consumer.ts";
import { createOrchestratorHandler } from "../functions/orchestrator.ts";
import { createSweepHandler } from "../functions/sweep.ts";
import { createTimerHandler } from "../functions/timer.ts";
import { createWorkerHandler } from "../functions/worker.ts";
import type { QueueRole } from "../app/manifest.ts";
import { DEFAULT_PIPELINE_SETTINGS } from "../pipeline/deps.ts";
import type { PipelineDeps } from "../pipeline/deps.ts";
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

const START = Date.parse("2026-06-01T12:00:00Z");
const MIN = 60_000;
const config = parseConfig(
  readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"),
  "config.yaml",
  START,
);

/** What the scripted model answers, by the order the request is about. */
const ANSWERS = {
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

let server: ScriptedLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * Runs two claims (one structured, one free text) submitted while the model is down from the start until `upAtMs`
 * after it (undefined: never up again), with an outage hold of `holdMs`, until nothing is left to deliver.
 */
async function runOutage(opts: { upAfterMs?: number; holdMs: number }) {
  let now = START;
  const clock = { now: () => now };
  const down = () => opts.upAfterMs === undefined || now < START + opts.upAfterMs;
  server = await startScriptedLlmServer(
    answerBySchema({
      refund_proposal: (r) => JSON.stringify(ANSWERS[orderOf(r.raw)].proposal),
      // The compact crew's one step (docs/llm.md, "Crew shape"): its analysis, then the same proposal.
      claim_decision: (r) =>
        JSON.stringify({ analysis: "Within the contract as stated.", ...ANSWERS[orderOf(r.raw)].proposal }),
      claim_extraction: (r) => JSON.stringify(ANSWERS[orderOf(r.raw)].extraction),
      text: "The claim is within every boundary as stated.",
    }),
    { down },
  );
  const llmConfig = {
    provider: "openai",
    baseURL: server.baseURL,
    model: "scripted",
    apiKey: "k",
    timeoutMs: 2_000,
    maxRetries: 1,
    temperature: 0,
  } as const;
  const guarded = guardWithPreflight(
    createOpenAiModel({ ...llmConfig, sleep: async () => undefined }),
    () => preflightLlm(llmConfig),
    { now: clock.now },
  );
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
    llm: guarded.port,
    clock,
    ids: sequentialIds(),
    agent,
    registry,
    settings: { ...DEFAULT_PIPELINE_SETTINGS, llmOutageHoldMs: opts.holdMs },
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

  // The endpoint check finds the model down: what `/health` reads.
  expect((await guarded.check()).ok).toBe(false);
  const health: { at: number; unreachable: boolean }[] = [];
  const submitted: string[] = [];
  for (const body of [
    { claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "The screen is dead." } },
    { claim_text: "Order ord_010: the lamp (home, 120 EUR) arrived broken, I want my money back." },
  ]) {
    const result = await submitClaim(body, {}, deps);
    if (!result.ok) throw new Error(`intake refused a claim during the outage: ${result.code}`);
    submitted.push(result.claimId);
  }

  let nextSweep = START + 5 * MIN;
  for (let step = 0; step < 5_000; step++) {
    health.push({ at: now, unreachable: guarded.unreachable() });
    const batches = queues.available(now);
    if (batches.length === 0) {
      const next = queues.nextVisibleAt();
      if (next === undefined && claims.all().every((c) => c.status === "DECIDED" || c.status === "NEEDS_REVIEW")) break;
      if (now >= nextSweep) {
        nextSweep = now + 5 * MIN;
        await sweep();
        continue;
      }
      now = Math.max(now + 1, Math.min(next ?? Infinity, nextSweep));
      // The recheck the health probe started runs on the real event loop: let it finish before time moves on.
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
    now += 1_000;
  }
  const all = audit.all();
  const invariants = checkFlowInvariants({
    claims: claims.all(),
    verdicts: verdicts.all(),
    reviews: reviews.all(),
    ledgers: (
      await Promise.all(["ord_001", "ord_010"].map(async (o) => ({ o, entry: await ledger.get(o, undefined) })))
    ).flatMap(({ entry }) => (entry ? [{ entry }] : [])),
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
    health,
    deadLetters: queues.deadLetters.length,
    endedAt: now,
    replays: submitted.map((id) => replayClaim(id, all, { review: reviews.all().find((r) => r.claim_id === id) })),
  };
}

const types = (audit: { event_type: string; details: { claim_id?: unknown } }[], claimId: string) =>
  audit.filter((e) => e.details.claim_id === claimId).map((e) => e.event_type);

describe("a model outage that ends within the hold", () => {
  it("holds the claims while the model is down and decides them normally once it answers: once each, replayable", async () => {
    const run = await runOutage({ upAfterMs: 20 * MIN, holdMs: 60 * MIN });
    expect(run.errors).toEqual([]);
    expect(run.deadLetters).toBe(0);
    expect(run.invariants.violations).toEqual([]);
    for (const claim of run.claims) {
      expect(claim, claim.reason).toMatchObject({
        status: "DECIDED",
        verdict: "ACCEPT",
        reason_code: "VALIDATION_PASSED",
      });
      expect(claim.llm_hold).toBeUndefined();
      const kinds = types(run.audit, claim.claim_id);
      expect(kinds.filter((k) => k === "CLAIM_HELD")).toHaveLength(1);
      expect(kinds.filter((k) => k === "CLAIM_RESUMED")).toHaveLength(1);
      expect(kinds).not.toContain("CLAIM_NEEDS_REVIEW");
      // Decided after the model came back, not before.
      expect(Date.parse(claim.updated_at)).toBeGreaterThanOrEqual(START + 20 * MIN);
    }
    // One verdict and one refund per claim: nothing lost, nothing twice.
    const detailTypes = run.published.map((e) => e.detailType).sort();
    expect(detailTypes).toEqual(["ClaimVerdict", "ClaimVerdict", "RefundExecuted", "RefundExecuted"]);
    expect(run.invariants.money.refunds).toBe(2);
    expect(run.replays.map((r) => r.status)).toEqual(["IDENTICAL", "IDENTICAL"]);
    // /health followed the model: unreachable while it was down, ok again after it answered.
    expect(run.health.filter((h) => h.at < START + 20 * MIN).every((h) => h.unreachable)).toBe(true);
    expect(run.health.at(-1)?.unreachable).toBe(false);
  });
});

describe("a model outage longer than the hold", () => {
  it("ends every claim that needs the model NEEDS_REVIEW LLM_UNREACHABLE once the hold has run out, not before", async () => {
    const run = await runOutage({ holdMs: 60 * MIN });
    expect(run.errors).toEqual([]);
    expect(run.invariants.violations).toEqual([]);
    for (const claim of run.claims) {
      expect(claim).toMatchObject({ status: "NEEDS_REVIEW", reason_code: "LLM_UNREACHABLE" });
      expect(Date.parse(claim.updated_at)).toBeGreaterThanOrEqual(START + 60 * MIN);
      const kinds = types(run.audit, claim.claim_id);
      expect(kinds.filter((k) => k === "CLAIM_HELD")).toHaveLength(1);
      expect(kinds).not.toContain("CLAIM_RESUMED");
      expect(kinds.filter((k) => k === "CLAIM_NEEDS_REVIEW")).toHaveLength(1);
    }
    expect(run.published.map((e) => e.detailType).sort()).toEqual([
      "ClaimNeedsReview",
      "ClaimNeedsReview",
      "ReviewRequested",
      "ReviewRequested",
    ]);
    expect(run.replays.map((r) => r.status)).toEqual(["IDENTICAL", "IDENTICAL"]);
  });

  it("without a hold (claims batch, --keep-going) ends them NEEDS_REVIEW LLM_UNREACHABLE at once", async () => {
    const run = await runOutage({ upAfterMs: 20 * MIN, holdMs: 0 });
    expect(run.invariants.violations).toEqual([]);
    for (const claim of run.claims) {
      expect(claim).toMatchObject({ status: "NEEDS_REVIEW", reason_code: "LLM_UNREACHABLE" });
      expect(Date.parse(claim.updated_at)).toBeLessThan(START + 5 * MIN);
      expect(types(run.audit, claim.claim_id)).not.toContain("CLAIM_HELD");
    }
    expect(run.replays.map((r) => r.status)).toEqual(["IDENTICAL", "IDENTICAL"]);
  });
});
