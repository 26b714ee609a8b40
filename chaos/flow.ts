// One chaos flow in process: the production handlers of functions/ (and so the pipeline services they call)
// over the in-memory stores, driven by a seeded scheduler instead of Lambda's event sources. Work is delivered
// from simulated SQS queues in a random order, several deliveries at once (their port calls interleave at
// random), with the flow's faults: duplicates, delays, crashes right after side-effecting calls, racing
// consumers, lost timers, a whole-stack restart, and a model that is slow, failing or garbled. Customers submit
// through the intake API (retrying after a crash with the same Idempotency-Key), reviewers decide through the
// review API (some at once), the sweep runs every five simulated minutes. Authorised refunds go, as the payments
// rule sends them, to the production refund executor, which pays through a faulty provider (chaos/payment-provider.ts:
// refused, timed out, settled late); the provider's webhooks reach POST /webhooks/stripe signed (twice, stale, or
// forged at times), and reviewers RETRY or CLOSE failed refunds through the review API. When nothing is left to do,
// the invariants are checked. Time is simulated, so a flow takes milliseconds.
import { type LedgerEntry } from "../core/kernel/index.ts";
import type { Order } from "../core/integrity/index.ts";
import Stripe from "stripe";
import { parseConfig } from "../core/claim/config.ts";
import type { ClaimsConfig } from "../core/claim/config.ts";
import type { Claim } from "../core/claim/claim.ts";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { isFinal } from "../core/kernel/claim-record.ts";
import type { ReviewRecord } from "../core/kernel/review.ts";
import { createAgentRegistry } from "../core/integrity/index.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { createIntakeApiHandler } from "../functions/intake-api.ts";
import { createIntakeExtractHandler } from "../functions/intake-extract.ts";
import { createKernelHandler } from "../functions/kernel.ts";
import { createPaymentWebhookHandler } from "../functions/payment-webhook.ts";
import { createRefundExecutorHandler } from "../functions/refund-executor.ts";
import type { SqsHandler } from "../functions/consumers/sqs-consumer.ts";
import { createOrchestratorHandler } from "../functions/orchestrator.ts";
import { createReviewApiHandler } from "../functions/review-api.ts";
import { createSweepHandler } from "../functions/sweep.ts";
import { createTimerHandler } from "../functions/timer.ts";
import { createWorkerHandler } from "../functions/worker.ts";
import { FUNCTIONS, PAYMENT_RULE, QUEUES } from "../app/manifest.ts";
import { matchesPattern } from "../local/eventbridge/matcher.ts";
import { KERNEL_SOURCE } from "../core/kernel/events.ts";
import { DEFAULT_PIPELINE_SETTINGS } from "../pipeline/deps.ts";
import type { PipelineDeps } from "../pipeline/deps.ts";
import {
  createInMemoryAuditLog,
  createInMemoryClaimRepository,
  createInMemoryContextStore,
  createInMemoryRefundLedger,
  createInMemoryReviewRepository,
  createInMemorySessionRepository,
  createInMemorySettlementRepository,
  createInMemoryVerdictRepository,
  createRecordingPublisher,
} from "../pipeline/in-memory.ts";
import { sequentialIds } from "../pipeline/in-process.ts";
import type { HandlerLogger } from "../functions/observability/logger.ts";
import { createChaosLlm } from "./chaos-llm.ts";
import { ChaosCrashError } from "./errors.ts";
import { checkFlowInvariants } from "./invariants.ts";
import type { FlowObservation, InvariantResult } from "./invariants.ts";
import { apiRequest, LAMBDA_CONTEXT, sqsBatch, watchingLogger } from "./lambda-events.ts";
import { LLM_PROFILES, planFlow, planOutage, planPayments, planStepTimers } from "./plan.ts";
import type { FlowPlan, LlmOutage, LlmProfile, PaymentPlan, PlannedClaim } from "./plan.ts";
import { createFaultyProvider } from "./payment-provider.ts";
import type { ProviderBugs, ProviderWebhook } from "./payment-provider.ts";
import { createRng, flowSeed } from "./rng.ts";
import type { Rng } from "./rng.ts";
import { createSimQueues } from "./sim-queues.ts";
import type { SimMessage, SimRole } from "./sim-queues.ts";
import { emptyPaymentTotals } from "./tally.ts";
import type { FlowTotals } from "./tally.ts";
import { orderTotalMajor, viewOrder } from "../core/kernel/order-view.ts";
import { returnDfid } from "../core/kernel/claim-record.ts";
import { PAYS } from "../core/kernel/returns.ts";
import type { PayOn } from "../core/kernel/returns.ts";
import { recordedReturnEvents } from "../pipeline/decide/returns.ts";
import { drawReturnPosts, emptyReturnCounts, MAX_RETURN_DEADLINE_DAYS, planReturns } from "./returns.ts";
import type { AskedReturn, ReturnPost, ReturnsPlan } from "./returns.ts";
import { emptyOutcomeCounts, planOutcomes } from "./outcomes.ts";
import type { OutcomesPlan } from "./outcomes.ts";

/** What the chaos runs decide with: the bundled agent and its contract. */
export interface ChaosEnv {
  config: ClaimsConfig;
}

/** Reads the agent of `configPath` (scenarios/config.yaml); its orders are not used, each flow draws its own. */
export function chaosEnv(configText: string, file: string): ChaosEnv {
  return { config: parseConfig(configText, file, Date.parse("2026-06-01T12:00:00Z")) };
}

/** Everything a flow counted: faults by kind, what the model and the clients did, what came out. */
export type FlowCounts = FlowTotals;

/** The outcome of one flow. */
export interface FlowResult {
  plan: FlowPlan;
  violations: string[];
  counts: FlowCounts;
  simulatedMs: number;
  invariants?: InvariantResult;
  /** What the flow left behind (with `keep`: for a reproduction's details). */
  observation?: FlowObservation;
}

/** The side-effecting methods of each port: a crash is injected right after one of them succeeded. */
const SIDE_EFFECTS: Readonly<Partial<Record<keyof PipelineDeps, readonly string[]>>> = {
  claims: ["createClaim", "updateClaim"],
  sessions: ["saveSession", "clearOutbox"],
  verdicts: ["putVerdictOnce", "recordExecution", "markPublished"],
  ledger: ["reserve", "markReviewPending", "clearReviewPending", "releaseRefund"],
  audit: ["append", "appendAll"],
  queues: ["sendAgentSteps", "sendProposal", "sendCrewEvents", "scheduleTimer", "requestExtraction"],
  publisher: ["publish"],
  reviews: ["openReview", "updateReview"],
  settlements: ["create", "update"],
  // A crash right after the provider answered: the refund exists at the provider, the settlement does not know it.
  payments: ["refund"],
};
const WRAPPED: readonly (keyof PipelineDeps)[] = [
  "claims",
  "sessions",
  "verdicts",
  "ledger",
  "audit",
  "queues",
  "publisher",
  "reviews",
  "orders",
  "llm",
  "settlements",
  "payments",
];

const SWEEP_EVERY_MS = 300_000;
/** Sweeps run on an idle flow before its unfinished claims count as stuck (an hour). */
const IDLE_SWEEPS = 12;
const MAX_STEPS = 20_000;
const MAX_SIMULATED_MS = 24 * 3_600_000;

/** One handler invocation: a process that may die. */
interface Invocation {
  dead: boolean;
  label: string;
}

type Job =
  | { kind: "queue"; role: SimRole; messages: SimMessage[] }
  | { kind: "submit"; claim: PlannedClaim; attempt: number }
  | { kind: "review"; claimId: string; body: Record<string, unknown>; attempt: number; refundReview?: string }
  | { kind: "webhook"; webhook: ProviderWebhook; attempt: number }
  | { kind: "settle"; settle: () => void }
  | { kind: "returnEvent"; post: ReturnPost; attempt: number }
  | { kind: "sweep" };

/** The signing secret of the flow's webhook endpoint (a forged webhook is signed with another). */
const WEBHOOK_SECRET = "whsec_chaos";
/** How often an operator redrives the refund executor's DLQ after its alarm, at most, in one flow. */
const MAX_REDRIVES = 5;

type Planned = { at: number; job: Job; together?: string };

const emptyCounts = (): FlowCounts => ({
  faults: { duplicate: 0, delay: 0, crash: 0, race: 0, lostTimer: 0, restart: 0 },
  llm: { calls: 0, slow: 0, hang: 0, fail: 0, garble: 0 },
  deadLetters: 0,
  clientRetries: 0,
  reviewDecisions: 0,
  deliveries: 0,
  sweeps: 0,
  claims: 0,
  decided: 0,
  needsReview: 0,
  refunds: 0,
  payments: emptyPaymentTotals(),
  returns: emptyReturnCounts(),
  outcomes: emptyOutcomeCounts(),
});

/**
 * Options of a flow: `keep` returns what it left behind; `mutate` replaces ports (tests plant bugs to see them found);
 * `outage` and `llm` replace what the plan drew (null: no outage).
 */
export interface FlowOptions {
  keep?: boolean;
  mutate?: (deps: PipelineDeps) => PipelineDeps;
  outage?: LlmOutage | null;
  llm?: LlmProfile["name"];
  /** Replaces the payment provider's plan the flow drew (tests). */
  payments?: PaymentPlan;
  /** Breaks the payment provider (tests show the invariants catch it). */
  providerBugs?: ProviderBugs;
  /** Replaces the return policy and warehouse the flow drew (null: none, the bundled policy). */
  returns?: ReturnsPlan | null;
  /** Replaces the outcome policy the flow drew (null: none, every ACCEPT refunds). */
  outcomes?: OutcomesPlan | null;
}

/** Keeps the outage's draws apart from the plan's (the same plan with or without an outage). */
const OUTAGE_SALT = 0x6f757461;
/** Keeps the payment provider's plan and draws apart from the rest (the same plan whatever the provider does). */
const PAYMENTS_SALT = 0x70617973;
const PROVIDER_SALT = 0x70726f76;
/** Keeps the return policy's draws, and its warehouse's, apart from the rest (a flow without returns is unchanged). */
const RETURNS_SALT = 0x72657475;
const WAREHOUSE_SALT = 0x77617265;
/** Keeps the outcome policy's draw apart from the rest (a flow without outcomes is unchanged). */
const OUTCOMES_SALT = 0x6f75746b;
/** Salt of the rng that draws the step timers' mode (chaos/plan.ts `planStepTimers`). */
const STEP_TIMERS_SALT = 0x74696d72;

/**
 * The payment provider's plan of flow `flow` of `seed` (or `given`), and the flow's orders with the shop's payment to
 * refund: every order has one, but for a few (their refunds fail without a provider call). Drawn apart from the rest
 * of the plan, the same in process and on the emulators.
 */
export function planFlowPayments(
  seed: number,
  flow: number,
  drawnOrders: readonly Order[],
  given?: PaymentPlan,
): { payments: PaymentPlan; orders: Order[] } {
  const paymentsRng = createRng(flowSeed(seed, flow) ^ PAYMENTS_SALT);
  const payments = given ?? planPayments(paymentsRng);
  const orders = drawnOrders.map((o) =>
    paymentsRng.chance(payments.noPaymentRef) ? o : { ...o, payment_ref: `pi_chaos_${o.order_id}` },
  );
  return { payments, orders };
}

/** The rng of flow `flow`'s payment provider (its fates: refused, timed out, late), apart from every other draw. */
export function providerRng(seed: number, flow: number): Rng {
  return createRng(flowSeed(seed, flow) ^ PROVIDER_SALT);
}

/** Runs flow `flow` of the run seeded `seed`. */
export async function runChaosFlow(
  env: ChaosEnv,
  seed: number,
  flow: number,
  opts: FlowOptions = {},
): Promise<FlowResult> {
  const { plan, rng } = drawFlow(seed, flow, opts);
  return runPlannedFlow(env, plan, rng, opts);
}

/** The plan of flow `flow` of the run seeded `seed`, as `runChaosFlow` draws it (without running it). */
export function chaosPlan(seed: number, flow: number, opts: FlowOptions = {}): FlowPlan {
  return drawFlow(seed, flow, opts).plan;
}

/** Draws the plan of a flow; the rng it returns is where the run takes its later random choices from. */
function drawFlow(seed: number, flow: number, opts: FlowOptions): { plan: FlowPlan; rng: Rng } {
  const rng = createRng(flowSeed(seed, flow));
  const drawn = planFlow(rng, seed, flow);
  const outage = opts.outage === undefined ? planOutage(createRng(flowSeed(seed, flow) ^ OUTAGE_SALT)) : opts.outage;
  const { payments, orders } = planFlowPayments(seed, flow, drawn.orders, opts.payments);
  const returns =
    opts.returns === undefined ? planReturns(createRng(flowSeed(seed, flow) ^ RETURNS_SALT)) : opts.returns;
  const outcomes =
    opts.outcomes === undefined ? planOutcomes(createRng(flowSeed(seed, flow) ^ OUTCOMES_SALT)) : opts.outcomes;
  const stepTimers = planStepTimers(createRng(flowSeed(seed, flow) ^ STEP_TIMERS_SALT));
  const plan: FlowPlan = {
    ...drawn,
    orders,
    payments,
    stepTimers,
    ...(returns ? { returns } : {}),
    ...(outcomes ? { outcomes } : {}),
    ...(outage ? { outage } : {}),
    ...(opts.llm ? { llm: { name: opts.llm, ...LLM_PROFILES[opts.llm] } } : {}),
  };
  return { plan, rng };
}

/** Runs a drawn plan, taking every later random choice from `rng`. */
async function runPlannedFlow(env: ChaosEnv, plan: FlowPlan, rng: Rng, opts: FlowOptions = {}): Promise<FlowResult> {
  const counts = emptyCounts();
  const violations: string[] = [];
  // A flow that drew a return policy, or an outcome policy, decides under it (the bundled agent's, with its `returns`
  // and `outcomes` replaced).
  const agent =
    plan.returns || plan.outcomes
      ? {
          ...env.config.agent,
          contract: {
            ...env.config.agent.contract,
            ...(plan.returns ? { returns: plan.returns.policy } : {}),
            ...(plan.outcomes ? { outcomes: plan.outcomes } : {}),
          },
        }
      : env.config.agent;
  let now = plan.startMs;
  // Every reading moves the clock by a millisecond, so no two deliveries — racing ones included — share an instant
  // (as on a real machine, and as local/testing/fault-injection.ts's tickingClock does).
  const clock = { now: () => ++now };
  const advance = (ms: number) => {
    now += ms;
  };

  // The stores (they survive any crash or restart: they are the database).
  const claims = createInMemoryClaimRepository();
  const verdicts = createInMemoryVerdictRepository();
  const reviews = createInMemoryReviewRepository();
  // Reviews as they open, for the reviewers (cheaper than listing every review after every delivery).
  const opened: string[] = [];
  const reviewsPort: typeof reviews = {
    ...reviews,
    async openReview(review) {
      const stored = await reviews.openReview(review);
      opened.push(stored.claim_id);
      return stored;
    },
  };
  const audit = createInMemoryAuditLog();
  const publisher = createRecordingPublisher();
  const ledger = createInMemoryRefundLedger();
  const queues = createSimQueues({ clock, rng, faults: plan.faults });
  // The payments rule of the bus: RefundExecuted that is not a simulation's goes to the refund executor's queue.
  const publisherPort: typeof publisher = {
    ...publisher,
    async publish(entries) {
      await publisher.publish(entries);
      for (const e of entries) {
        if (e.detailType === "ReturnRequested") returnAsked(e.detail);
        if (e.detailType === "RefundExecuted") await returnPaid(e.detail);
      }
      if (!plan.payments) return;
      for (const e of entries) {
        const envelope = { source: KERNEL_SOURCE, "detail-type": e.detailType, detail: e.detail };
        if (matchesPattern(PAYMENT_RULE.pattern, envelope)) queues.sendToPayments(envelope);
      }
    },
  };
  // Settlements, and the failed refunds' reviews as they open (for the reviewers).
  const settlements = createInMemorySettlementRepository();
  const refundOpened: { claimId: string; reviewId: string }[] = [];
  const settlementsPort: typeof settlements = {
    ...settlements,
    async update(next) {
      await settlements.update(next);
      if (next.review?.status === "PENDING")
        refundOpened.push({ claimId: next.claim_id, reviewId: next.review.review_id });
    },
  };
  const faultyProvider = plan.payments
    ? createFaultyProvider({
        plan: plan.payments,
        rng: providerRng(plan.seed, plan.flow),
        now: () => now,
        ...(opts.providerBugs ? { bugs: opts.providerBugs } : {}),
      })
    : undefined;
  const registry = createAgentRegistry({ acceptedMajor: 1 });
  registry.handshake({ agent_id: agent.agentId, version: agent.version, contract: agent.responsibility });
  const llm = createChaosLlm(createRulesModel({ contract: agent.contract, responsibility: agent.responsibility }), {
    rng,
    profile: plan.llm,
    advance,
    counts: counts.llm,
    functionTimeoutMs: FUNCTIONS.worker.timeoutSeconds * 1000,
    ...(plan.outage ? { down: () => isDown(plan, now) } : {}),
  });
  const unmutated: PipelineDeps = {
    claims,
    sessions: createInMemorySessionRepository(audit),
    verdicts,
    queues: queues.port,
    publisher: publisherPort,
    audit,
    ledger,
    reviews: reviewsPort,
    orders: createInMemoryContextStore(plan.orders),
    llm,
    clock,
    ids: sequentialIds(),
    agent,
    registry,
    settings: {
      ...DEFAULT_PIPELINE_SETTINGS,
      ...(plan.outage ? { llmOutageHoldMs: plan.outage.holdMs } : {}),
      ...(plan.stepTimers ? { stepTimers: plan.stepTimers } : {}),
    },
    ...(faultyProvider
      ? { settlements: settlementsPort, payments: faultyProvider.provider, webhookSecret: () => WEBHOOK_SECRET }
      : {}),
  };
  const base = opts.mutate ? opts.mutate(unmutated) : unmutated;

  // Faults at the ports: a crash right after the n-th side-effecting call of the flow, a restart that kills every
  // running invocation, and random switches between concurrent invocations at every port call.
  const crashAt = new Set(plan.faults.crashAfterCalls);
  const live = new Set<Invocation>();
  let calls = 0;
  const interleave = async () => {
    for (let n = rng.int(0, 2); n > 0; n--) await null;
  };
  const wrapPort = <T extends object>(inv: Invocation, name: keyof PipelineDeps, port: T): T => {
    const effects = SIDE_EFFECTS[name] ?? [];
    return new Proxy(port, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop);
        if (typeof value !== "function" || typeof prop !== "string") return value;
        const method = value as (...a: unknown[]) => Promise<unknown>;
        return async (...args: unknown[]) => {
          if (inv.dead) throw new ChaosCrashError(`${inv.label}: ${name}.${prop} after the process died`);
          await interleave();
          if (inv.dead) throw new ChaosCrashError(`${inv.label}: ${name}.${prop} after the process died`);
          const result = await method.apply(target, args);
          if (!effects.includes(prop)) return result;
          calls++;
          if (crashAt.has(calls)) {
            counts.faults.crash++;
            inv.dead = true;
            throw new ChaosCrashError(
              `${inv.label} crashed right after ${name}.${prop} (side-effecting call ${calls})`,
            );
          }
          if (plan.faults.restartAfterCall === calls) {
            counts.faults.restart++;
            for (const l of live) l.dead = true;
            throw new ChaosCrashError(`the stack restarted right after ${name}.${prop} (side-effecting call ${calls})`);
          }
          return result;
        };
      },
    });
  };
  const depsFor = (inv: Invocation): PipelineDeps => {
    const wrapped = { ...base };
    for (const name of WRAPPED)
      (wrapped as unknown as Record<string, object>)[name] = wrapPort(inv, name, base[name] as object);
    return wrapped;
  };
  const loggerFor = (inv: Invocation): HandlerLogger =>
    watchingLogger((line) => {
      if (!inv.dead) violations.push(`${inv.label} logged an error no fault explains: ${line}`);
    });
  const consumer = (role: SimRole, deps: PipelineDeps, logger: HandlerLogger): SqsHandler => {
    const o = { logger };
    switch (role) {
      case "payments":
        return createRefundExecutorHandler(() => deps, o);
      case "crewEvents":
        return createOrchestratorHandler(() => deps, o);
      case "agentSteps":
        return createWorkerHandler(() => deps, o);
      case "proposals":
        return createKernelHandler(() => deps, o);
      case "extraction":
        return createIntakeExtractHandler(() => deps, { ...o, maxReceives: QUEUES.extraction.maxReceives });
      case "timers":
        return createTimerHandler(() => deps, o);
    }
  };

  // The agenda: client requests and reviewer decisions at their instants; the sweep every five minutes.
  const agenda: Planned[] = plan.claims.flatMap((c): Planned[] => {
    const first: Planned = {
      at: plan.startMs + c.submitAtMs,
      job: { kind: "submit", claim: c, attempt: 1 },
      ...(c.resend === "concurrent" ? { together: `submit-${c.index}` } : {}),
    };
    if (!c.resend) return [first];
    const again: Planned = { ...first, at: c.resend === "later" ? first.at + rng.int(1_000, 900_000) : first.at };
    return [first, again];
  });
  let nextSweep = plan.startMs + SWEEP_EVERY_MS;
  if (faultyProvider) {
    faultyProvider.onSettle = (at, settle) => agenda.push({ at, job: { kind: "settle", settle } });
    faultyProvider.onWebhook = (webhook) =>
      agenda.push({ at: webhook.at, job: { kind: "webhook", webhook, attempt: 1 } });
  }

  // What the clients saw: the claim each Idempotency-Key answered, the decisions reviewers were told succeeded.
  const keyToClaim = new Map<string, string>();
  const plannedOf = new Map<string, Claim>();
  const decidedOk = new Map<string, string[]>();
  const refundDecidedOk = new Map<string, string[]>();
  const reviewSeen = new Set<string>();
  let label = 0;

  const submit = async (job: Extract<Job, { kind: "submit" }>, inv: Invocation) => {
    const handler = createIntakeApiHandler(() => depsFor(inv), { logger: loggerFor(inv) });
    const res = await handler(
      apiRequest("POST /claims", "/claims", {
        body: JSON.stringify(job.claim.body),
        headers: { "content-type": "application/json", "idempotency-key": job.claim.idempotencyKey },
      }),
    );
    if (inv.dead) {
      if (rng.chance(job.claim.retryAfterCrash)) {
        counts.clientRetries++;
        agenda.push({ at: now + rng.int(1_000, 60_000), job: { ...job, attempt: job.attempt + 1 } });
      }
      return;
    }
    const status = typeof res === "string" ? 200 : (res.statusCode ?? 200);
    const body = typeof res === "string" ? res : (res.body ?? "");
    if (status !== 202) {
      violations.push(
        `POST /claims (claim ${job.claim.index}, attempt ${job.attempt}) answered ${status}: ${body.slice(0, 200)}`,
      );
      return;
    }
    const claimId = String((JSON.parse(body) as { claim_id: string }).claim_id);
    const known = keyToClaim.get(job.claim.idempotencyKey);
    if (known && known !== claimId)
      violations.push(`Idempotency-Key ${job.claim.idempotencyKey} answered ${known}, then ${claimId}`);
    keyToClaim.set(job.claim.idempotencyKey, claimId);
    plannedOf.set(claimId, job.claim.claim);
  };

  const review = async (job: Extract<Job, { kind: "review" }>, inv: Invocation) => {
    const handler = createReviewApiHandler(() => depsFor(inv), { logger: loggerFor(inv) });
    const path = `/claims/${job.claimId}/review`;
    const res = await handler(
      apiRequest("POST /claims/{id}/review", path, {
        body: JSON.stringify(job.body),
        headers: { "content-type": "application/json" },
        pathParameters: { id: job.claimId },
        // The reviewer the authorizer authenticated: the one the body names.
        reviewer: String(job.body.reviewer ?? "reviewer"),
      }),
    );
    counts.reviewDecisions++;
    if (inv.dead) {
      if (rng.chance(plan.reviewer.retryAfterCrash)) {
        counts.clientRetries++;
        agenda.push({ at: now + rng.int(1_000, 120_000), job: { ...job, attempt: job.attempt + 1 } });
      }
      return;
    }
    const status = typeof res === "string" ? 200 : (res.statusCode ?? 200);
    const body = typeof res === "string" ? res : (res.body ?? "");
    if (status >= 500 || status === 404)
      violations.push(
        `POST ${path} ${JSON.stringify(job.body).slice(0, 120)} answered ${status}: ${body.slice(0, 200)}`,
      );
    if (status !== 200) return;
    const told = job.refundReview ? refundDecidedOk : decidedOk;
    // A RETRY / CLOSE decides the claim's current refund review, which the answer names (after a RETRY that failed
    // again, a late repeat decides the new review).
    const answered = job.refundReview
      ? (JSON.parse(body) as { review?: { review_id?: string } }).review?.review_id
      : undefined;
    // A first approval under four eyes (per order, or per customer in the window) is recorded on the review and
    // waits for a different reviewer: the reviewer was told it waits, not that the review was decided.
    if (
      !job.refundReview &&
      (JSON.parse(body) as { review?: { awaiting?: string } }).review?.awaiting === "SECOND_APPROVAL"
    )
      return;
    const key = answered ?? job.claimId;
    told.set(key, [...(told.get(key) ?? []), String(job.body.decision)]);
  };

  // Stripe delivering a webhook, signed at the moment it is sent; without a 2xx (a crash) it sends it again later.
  const webhook = async (job: Extract<Job, { kind: "webhook" }>, inv: Invocation) => {
    const handler = createPaymentWebhookHandler(() => depsFor(inv), { logger: loggerFor(inv) });
    const forged = job.webhook.kind === "forged";
    const signature = Stripe.webhooks.generateTestHeaderString({
      payload: job.webhook.payload,
      secret: forged ? "whsec_someone_else" : WEBHOOK_SECRET,
      timestamp: Math.floor(now / 1000),
    });
    const res = await handler(
      apiRequest("POST /webhooks/stripe", "/webhooks/stripe", {
        body: job.webhook.payload,
        headers: { "content-type": "application/json", "stripe-signature": signature },
      }),
    );
    if (inv.dead) {
      agenda.push({ at: now + rng.int(60_000, 3_600_000), job: { ...job, attempt: job.attempt + 1 } });
      return;
    }
    const status = typeof res === "string" ? 200 : (res.statusCode ?? 200);
    const body = typeof res === "string" ? res : (res.body ?? "");
    if (status !== (forged ? 400 : 200))
      violations.push(
        `POST /webhooks/stripe (${job.webhook.kind} ${job.webhook.payload.slice(0, 80)}…) answered ${status}: ${body.slice(0, 200)}`,
      );
  };

  // The warehouse (chaos/returns.ts): each return asked has its events drawn once, from the warehouse's own rng, and
  // posted at their instants; a refund a return releases is checked as it goes out (docs/returns.md).
  const warehouseRng = createRng(flowSeed(plan.seed, plan.flow) ^ WAREHOUSE_SALT);
  const asked = new Map<string, AskedReturn & { execution_id: string }>();
  const returnAsked = (detail: Record<string, unknown>) => {
    const claimId = String(detail.claim_id);
    if (asked.has(claimId)) return;
    const a = {
      claim_id: claimId,
      return_by: String(detail.return_by),
      pay_on: String(detail.pay_on),
      execution_id: String(detail.execution_id),
    };
    asked.set(claimId, a);
    counts.returns.asked++;
    if (!plan.returns) return;
    for (const post of drawReturnPosts(warehouseRng, plan.returns, a, now))
      agenda.push({
        at: post.postAtMs,
        job: { kind: "returnEvent", post, attempt: 1 },
        ...(post.together ? { together: post.together } : {}),
      });
  };
  // A return's refund goes out only once an event that reaches its pay_on is recorded, and never for a claim whose
  // return the deadline closed or a person was given.
  const returnPaid = async (detail: Record<string, unknown>) => {
    const a = asked.get(String(detail.claim_id));
    if (!a || detail.approved_by !== undefined || detail.execution_id !== a.execution_id) return;
    const recorded = recordedReturnEvents(await audit.byDfid(returnDfid(a.claim_id)));
    if (!recorded.some((e) => PAYS[a.pay_on as PayOn]?.includes(e.event)))
      violations.push(
        `claim ${a.claim_id}: its refund went out before a return event reached ${a.pay_on} (recorded: ${recorded.map((e) => e.event).join(", ") || "none"})`,
      );
    // Shipped late (nothing happened by return_by): a person decides, the refund never pays (docs/returns.md).
    if (recorded.length > 0 && recorded.every((e) => Date.parse(e.at) > Date.parse(a.return_by)))
      violations.push(
        `claim ${a.claim_id}: its refund went out on a return whose every event came after its deadline ${a.return_by}`,
      );
    const record = await claims.getClaim(a.claim_id);
    if (record?.return?.outcome === "NOT_RECEIVED" || record?.return?.outcome === "REVIEW")
      violations.push(
        `claim ${a.claim_id}: its refund went out after its return ended ${record.return.outcome} (${record.status})`,
      );
  };
  const returnEvent = async (job: Extract<Job, { kind: "returnEvent" }>, inv: Invocation) => {
    const handler = createReviewApiHandler(() => depsFor(inv), { logger: loggerFor(inv) });
    const { claimId, body } = job.post;
    const path = `/claims/${claimId}/return-events`;
    counts.returns.posted++;
    if (now > Date.parse(asked.get(claimId)?.return_by ?? "")) counts.returns.late++;
    const res = await handler(
      apiRequest("POST /claims/{id}/return-events", path, {
        body: JSON.stringify(body),
        headers: { "content-type": "application/json" },
        pathParameters: { id: claimId },
      }),
    );
    if (inv.dead) {
      if (warehouseRng.chance(plan.returns?.retryAfterCrash ?? 0)) {
        counts.clientRetries++;
        agenda.push({ at: now + warehouseRng.int(1_000, 600_000), job: { ...job, attempt: job.attempt + 1 } });
      }
      return;
    }
    const status = typeof res === "string" ? 200 : (res.statusCode ?? 200);
    const text = typeof res === "string" ? res : (res.body ?? "");
    const answer = JSON.parse(text || "{}") as { decision?: string; error?: { code?: string } };
    if (status === 200 && answer.decision === "RECORDED") counts.returns.repeats++;
    else if (status === 409 && answer.error?.code === "NOT_AWAITING_RETURN") counts.returns.refused++;
    else if (status !== 200)
      violations.push(
        `POST ${path} ${JSON.stringify(body)} (attempt ${job.attempt}) answered ${status}: ${text.slice(0, 200)}`,
      );
  };
  /** The earliest return deadline still to come of a claim awaiting its return (the sweep closes it then), if any. */
  const nextReturnBy = (): number | undefined => {
    const due = claims
      .all()
      .flatMap((c) => (c.status === "AWAITING_RETURN" && c.return ? [Date.parse(c.return.return_by)] : []))
      .filter((at) => at > now);
    return due.length > 0 ? Math.min(...due) : undefined;
  };

  // Reviewers: each review that opens is decided (or left pending) as the flow's policy says.
  const planReviews = async () => {
    // A failed refund's review: RETRY (pay again) or CLOSE with a note; at times two reviewers at once, or a repeat.
    while (refundOpened.length > 0 && plan.payments) {
      const { claimId, reviewId } = refundOpened.shift()!;
      const policy = plan.payments.reviewer;
      if (reviewSeen.has(reviewId) || !rng.chance(policy.decide)) {
        reviewSeen.add(reviewId);
        continue;
      }
      reviewSeen.add(reviewId);
      const at = now + rng.int(1_000, 30 * 60_000);
      const first = refundDecision("alice", rng.chance(policy.retry) ? "RETRY" : "CLOSE");
      const job = (body: Record<string, unknown>): Job => ({
        kind: "review",
        claimId,
        body,
        attempt: 1,
        refundReview: reviewId,
      });
      if (rng.chance(policy.concurrent)) {
        const together = `refund-${reviewId}`;
        const other = refundDecision("bob", rng.chance(0.5) ? "RETRY" : "CLOSE");
        agenda.push({ at, job: job(first), together }, { at, job: job(other), together });
      } else agenda.push({ at, job: job(first) });
      if (rng.chance(policy.repeat)) agenda.push({ at: at + rng.int(1_000, 600_000), job: job(first) });
    }
    while (opened.length > 0) {
      const r = await reviews.getReview(opened.shift()!);
      if (!r || r.status !== "PENDING" || reviewSeen.has(r.claim_id)) continue;
      reviewSeen.add(r.claim_id);
      if (!rng.chance(plan.reviewer.decide)) continue;
      const at = now + rng.int(1_000, 20 * 60_000);
      const first = decisionFor(r, "alice");
      const together = rng.chance(plan.reviewer.concurrent) ? `review-${r.claim_id}` : undefined;
      agenda.push({
        at,
        job: { kind: "review", claimId: r.claim_id, body: first, attempt: 1 },
        ...(together ? { together } : {}),
      });
      if (together)
        agenda.push({
          at,
          job: {
            kind: "review",
            claimId: r.claim_id,
            body: rng.chance(0.5) ? first : decisionFor(r, "bob"),
            attempt: 1,
          },
          together,
        });
      if (rng.chance(plan.reviewer.repeat))
        agenda.push({
          at: at + rng.int(1_000, 600_000),
          job: { kind: "review", claimId: r.claim_id, body: first, attempt: 1 },
        });
    }
  };
  const refundDecision = (reviewer: string, decision: "RETRY" | "CLOSE"): Record<string, unknown> =>
    decision === "CLOSE"
      ? rng.chance(0.5)
        ? { decision, reviewer, paid_out_of_band: true, note: "refunded by bank transfer instead" }
        : { decision, reviewer, paid_out_of_band: false, note: "customer withdrew the claim" }
      : { decision, reviewer, ...(rng.chance(0.5) ? { note: "the customer updated the card" } : {}) };
  const decisionFor = (r: ReviewRecord, reviewer: string): Record<string, unknown> => {
    const note = rng.chance(0.3) ? { note: rng.pick(["checked with the customer", "photo attached 📷", ""]) } : {};
    // A DENY and an APPROVE of less than proposed need a note (NOTE_REQUIRED).
    const why = { note: note.note || "checked with the customer" };
    if (r.origin === "ESCALATE") {
      const kind = rng.weighted({ approve: 45, lower: 15, tooMuch: 5, deny: 30, resubmit: 5 });
      const amount = r.amount_eur ?? 0;
      if (kind === "approve") return { decision: "APPROVE", reviewer, ...note };
      if (kind === "lower")
        return {
          decision: "APPROVE",
          reviewer,
          amount_eur: amount > 0.02 ? Math.max(0.01, Math.round(amount * rng.int(10, 90)) / 100) : amount,
          ...why,
        };
      if (kind === "tooMuch")
        return { decision: "APPROVE", reviewer, amount_eur: Math.round((amount + 10) * 100) / 100 };
      if (kind === "resubmit") return { decision: "RESUBMIT", reviewer, claim: correctedClaim(r) };
      return { decision: "DENY", reviewer, ...why };
    }
    const kind = rng.weighted({ resubmit: 50, deny: 40, approve: 10 });
    if (kind === "approve") return { decision: "APPROVE", reviewer };
    if (kind === "resubmit" && depth(r.claim_id) < 2)
      return { decision: "RESUBMIT", reviewer, claim: correctedClaim(r), ...note };
    return { decision: "DENY", reviewer, ...why };
  };
  const depth = (claimId: string): number => {
    let d = 0;
    for (let id: string | undefined = claimId; id; d++) id = claimsById(id)?.parent_claim_id;
    return d - 1;
  };
  const claimsById = (id: string): ClaimRecord | undefined => claims.all().find((c) => c.claim_id === id);
  const correctedClaim = (r: ReviewRecord): Claim => {
    const planned = plannedOf.get(r.claim_id) ?? claimsById(r.claim_id)?.claim;
    const order = rng.pick(plan.orders);
    const claim: Claim = planned
      ? { ...planned }
      : {
          order_id: order.order_id,
          amount_eur: Math.min(orderTotalMajor(order), 100),
          category: viewOrder(order).lines[0]!.category,
          reason: "corrected by a reviewer",
        };
    if (rng.chance(0.4))
      claim.amount_eur = Math.max(0.01, Math.min(claim.amount_eur, Math.round(orderTotalMajor(order) * 50) / 100));
    return claim;
  };

  const runJob = async (job: Job): Promise<Map<SimMessage, boolean>> => {
    const inv: Invocation = {
      dead: false,
      label:
        job.kind === "queue"
          ? `${job.role === "payments" ? "refundExecutor" : QUEUES[job.role].consumer}#${++label}`
          : `${job.kind}#${++label}`,
    };
    live.add(inv);
    const results = new Map<SimMessage, boolean>();
    try {
      switch (job.kind) {
        case "queue": {
          counts.deliveries++;
          const handler = consumer(job.role, depsFor(inv), loggerFor(inv));
          let failed: Set<string>;
          try {
            const answer = await handler(
              sqsBatch(
                job.messages.map((m) => ({ id: String(m.id), body: m.body, receives: m.receives, group: m.group })),
                `arn:aws:sqs:us-east-1:000000000000:${job.role}`,
              ),
              LAMBDA_CONTEXT,
            );
            failed = new Set(answer.batchItemFailures.map((f) => f.itemIdentifier));
          } catch (error) {
            if (!(error instanceof ChaosCrashError) && !inv.dead)
              violations.push(`${inv.label} threw: ${(error as Error).message}`);
            failed = new Set(job.messages.map((m) => String(m.id)));
          }
          // A process that died loses its batch response: every message of the batch comes back.
          for (const m of job.messages) results.set(m, !inv.dead && !failed.has(String(m.id)));
          break;
        }
        case "submit":
          await submit(job, inv);
          break;
        case "review":
          await review(job, inv);
          break;
        case "webhook":
          await webhook(job, inv);
          break;
        case "settle":
          job.settle();
          break;
        case "returnEvent":
          await returnEvent(job, inv);
          break;
        case "sweep": {
          counts.sweeps++;
          try {
            await createSweepHandler(() => depsFor(inv), { logger: loggerFor(inv), env: {} })();
          } catch (error) {
            if (!(error instanceof ChaosCrashError) && !inv.dead)
              violations.push(`the sweep threw: ${(error as Error).message}`);
          }
          break;
        }
      }
    } finally {
      live.delete(inv);
    }
    return results;
  };

  // Settled: every claim final, no review decision left half done (a failed refund's included).
  const settled = async () =>
    claims.all().every((c) => isFinal(c.status)) &&
    // A claim awaiting its return is final, but its flow goes on until its deadline closes it (jumped to below).
    claims.all().every((c) => c.status !== "AWAITING_RETURN") &&
    (await quiet());
  // Quiet: nothing queued, every claim final, no review decision left half done (a failed refund's included).
  const quiet = async () =>
    queues.pending() === 0 &&
    claims.all().every((c) => isFinal(c.status)) &&
    reviews.all().every((r) => !r.intent) &&
    (await settlements.list()).every((s) => !s.review || s.review.status === "PENDING" || s.review.performed) &&
    (await returnsDone());
  // No return left half done: a claim its return closed or sent to a person holds no refund its return released,
  // and has its review (a crash between the claim's move and these steps leaves them to the sweep, docs/returns.md).
  const returnsDone = async () => {
    for (const c of claims.all()) {
      const asked = c.return;
      if (asked?.outcome !== "NOT_RECEIVED" && asked?.outcome !== "REVIEW") continue;
      if (c.status === "NEEDS_REVIEW" && !reviews.all().some((r) => r.claim_id === c.claim_id)) return false;
      const released = asked.outcome === "NOT_RECEIVED" || c.reason_code === "RETURN_AFTER_DEADLINE";
      const entry = released ? await ledger.get(asked.order_id, c.simulation_id) : undefined;
      if (entry && Object.hasOwn(entry.claims, c.claim_id)) return false;
    }
    return true;
  };
  let idle = 0;
  let redrives = 0;
  // A flow with returns runs past its deadlines (and the late events after them).
  const maxSimulatedMs = MAX_SIMULATED_MS + (plan.returns ? (MAX_RETURN_DEADLINE_DAYS + 1) * 86_400_000 : 0);
  for (let step = 0; ; step++) {
    if (step >= MAX_STEPS || now - plan.startMs > maxSimulatedMs) {
      violations.push(
        `the flow did not settle within ${MAX_STEPS} deliveries / ${maxSimulatedMs / 3_600_000} simulated hours (${queues.pending()} message(s) queued)`,
      );
      break;
    }
    await planReviews();
    const due = agenda.filter((p) => p.at <= now);
    const batches = queues.available(now);
    const sweepDue = now >= nextSweep;
    if (due.length === 0 && batches.length === 0 && !sweepDue) {
      const nextQueued = queues.nextVisibleAt();
      const nextPlanned = agenda.length > 0 ? Math.min(...agenda.map((p) => p.at)) : undefined;
      if (nextQueued === undefined && nextPlanned === undefined) {
        // The refund executor's DLQ alarmed: an operator redrives it (docs/payments.md).
        if (redrives < MAX_REDRIVES) {
          const n = queues.redrivePayments(now);
          if (n > 0) {
            redrives++;
            counts.payments.redriven += n;
            continue;
          }
        }
        if (await settled()) break;
        const returnBy = nextReturnBy();
        if (returnBy !== undefined && returnBy > now && (await quiet())) {
          now = Math.max(now + 1, returnBy);
          nextSweep = now;
          continue;
        }
        if (++idle > IDLE_SWEEPS) break;
      }
      let next = Math.min(nextQueued ?? Infinity, nextPlanned ?? Infinity, nextSweep);
      // With returns, days pass with nothing to do but wait for the warehouse or a deadline: when nothing is queued
      // and every claim is final, the clock jumps to the next post or deadline, and the sweep runs there.
      if (plan.returns && nextQueued === undefined && next === nextSweep && (await quiet())) {
        const later = Math.min(nextPlanned ?? Infinity, nextReturnBy() ?? Infinity);
        if (later !== Infinity && later > nextSweep) {
          next = later;
          nextSweep = later;
        }
      }
      now = Math.max(now + 1, next);
      continue;
    }
    if (queues.pending() > 0 || agenda.length > 0) idle = 0;

    type Candidate = { planned?: Planned; batch?: SimMessage[]; sweep?: true };
    const candidates: Candidate[] = [
      ...due.map((p) => ({ planned: p })),
      ...batches.map((b) => ({ batch: b })),
      ...(sweepDue ? [{ sweep: true as const }] : []),
    ];
    const chosen = rng.shuffle(candidates).slice(0, plan.concurrency);
    const jobs: Job[] = [];
    const take = (p: Planned) => {
      const at = agenda.indexOf(p);
      if (at === -1) return;
      agenda.splice(at, 1);
      jobs.push(p.job);
    };
    for (const c of chosen) {
      if (c.planned) {
        take(c.planned);
        // Requests planned together (a double submit, two reviewers at once) go out together.
        if (c.planned.together)
          for (const p of agenda.filter((q) => q.together === c.planned!.together && q.at <= now)) take(p);
      } else if (c.batch) {
        queues.receive(c.batch);
        jobs.push({ kind: "queue", role: c.batch[0]!.role, messages: c.batch });
        // A racing consumer: the visibility timeout ran out while the first still worked, so a second got the same messages.
        if (plan.faults.race > 0 && rng.chance(plan.faults.race)) {
          counts.faults.race++;
          queues.receive(c.batch);
          jobs.push({ kind: "queue", role: c.batch[0]!.role, messages: c.batch });
        }
      } else {
        nextSweep = now + SWEEP_EVERY_MS;
        jobs.push({ kind: "sweep" });
      }
    }
    const outcomes = await Promise.all(jobs.map(runJob));
    const merged = new Map<SimMessage, boolean>();
    for (const o of outcomes) for (const [m, ok] of o) merged.set(m, (merged.get(m) ?? false) || ok);
    queues.settle(merged, now);
    now += rng.int(1, 2_000);
  }

  counts.faults.duplicate = queues.counts.duplicate;
  counts.faults.delay = queues.counts.delay;
  counts.faults.lostTimer = queues.counts.lostTimer;
  counts.deadLetters = queues.deadLetters.length;

  // What the clients were told must match what is stored.
  const stored = new Map(reviews.all().map((r) => [r.claim_id, r]));
  for (const [claimId, decisions] of decidedOk) {
    const r = stored.get(claimId);
    const distinct = [...new Set(decisions)];
    if (distinct.length > 1)
      violations.push(`review of ${claimId}: reviewers were told ${distinct.join(" and ")} both succeeded`);
    if (!r?.decision || r.decision !== distinct[0])
      violations.push(
        `review of ${claimId}: a reviewer was told ${distinct[0]} succeeded, the review records ${r?.decision ?? r?.status ?? "nothing"}`,
      );
  }

  // A failed refund's review: what reviewers were told succeeded is the decision the bus announced for that review.
  const announced = new Map<string, Set<string>>();
  for (const e of publisher.published)
    if (e.detailType === "ReviewDecided") {
      const id = String(e.detail.review_id);
      announced.set(id, new Set([...(announced.get(id) ?? []), String(e.detail.decision)]));
    }
  for (const [reviewId, decisions] of refundDecidedOk) {
    const distinct = [...new Set(decisions)];
    const onBus = [...(announced.get(reviewId) ?? [])];
    if (distinct.length > 1)
      violations.push(`refund review ${reviewId}: reviewers were told ${distinct.join(" and ")} both succeeded`);
    if (onBus.length !== 1 || onBus[0] !== distinct[0])
      violations.push(
        `refund review ${reviewId}: a reviewer was told ${distinct[0]} succeeded, the bus announced [${onBus.join(", ")}]`,
      );
  }

  const observed: FlowObservation = {
    claims: claims.all(),
    verdicts: verdicts.all(),
    reviews: reviews.all(),
    ledgers: await ledgersOf(
      ledger,
      [
        ...plan.orders.map((o) => o.order_id),
        ...claims.all().flatMap((c) => (c.claim ? [c.claim.order_id] : [])),
        ...reviews.all().flatMap((r) => (r.order_id ? [r.order_id] : [])),
        ...publisher.published.map((e) => String((e.detail as { order_id?: unknown }).order_id ?? "")),
      ],
      claims.all(),
    ),
    events: publisher.published.map((e) => ({ detailType: e.detailType, detail: e.detail as Record<string, unknown> })),
    audit: audit.all(),
    orders: plan.orders,
    limitEur: agent.contract.max_refund_without_escalation,
    currencies: agent.contract.currencies,
    customerLimits: agent.contract.customer_limits,
    responsibility: agent.responsibility,
    ...(faultyProvider ? { payments: { settlements: await settlements.list(), book: faultyProvider.book } } : {}),
  };
  const invariants = checkFlowInvariants(observed);
  violations.push(...invariants.violations);
  counts.claims = observed.claims.length;
  counts.decided = observed.claims.filter((c) => c.status === "DECIDED").length;
  counts.needsReview = observed.claims.filter((c) => c.status === "NEEDS_REVIEW").length;
  counts.refunds = invariants.money.refunds;
  counts.outcomes.exchanges = new Set(
    publisher.published.filter((e) => e.detailType === "ExchangeRequested").map((e) => String(e.detail.claim_id)),
  ).size;
  // How the returns ended (each claim's outcomes once: a repeat of a completion is not another return).
  const ended = new Set<string>();
  for (const e of observed.audit)
    if (e.event_type === "RETURN_COMPLETED") ended.add(`${String(e.details.claim_id)}|${String(e.details.outcome)}`);
  for (const key of ended) {
    const outcome = key.split("|")[1];
    if (outcome === "PAID") counts.returns.paid++;
    if (outcome === "NOT_RECEIVED") counts.returns.released++;
    if (outcome === "REVIEW") counts.returns.reviewed++;
  }
  if (faultyProvider) {
    Object.assign(counts.payments, faultyProvider.counts);
    counts.payments.payouts = faultyProvider.book.payouts.length;
    counts.outcomes.credits = faultyProvider.book.payouts.filter((p) => p.credit).length;
    const decided = new Map<string, string>();
    for (const e of publisher.published)
      if (e.detailType === "ReviewDecided" && (e.detail.decision === "RETRY" || e.detail.decision === "CLOSE"))
        decided.set(String(e.detail.review_id), String(e.detail.decision));
    counts.payments.retried = [...decided.values()].filter((d) => d === "RETRY").length;
    counts.payments.closed = [...decided.values()].filter((d) => d === "CLOSE").length;
    counts.payments.refundsFailed = new Set(
      publisher.published.filter((e) => e.detailType === "RefundFailed").map((e) => String(e.detail.execution_id)),
    ).size;
  }
  return {
    plan,
    violations,
    counts,
    simulatedMs: now - plan.startMs,
    invariants,
    ...(opts.keep ? { observation: observed } : {}),
  };
}

/** Whether the flow's model is down at `now` (its outage). */
function isDown(plan: FlowPlan, now: number): boolean {
  const o = plan.outage;
  return o !== undefined && now >= plan.startMs + o.fromMs && now < plan.startMs + o.toMs;
}

/** Every ledger entry the flow can have touched (its orders, and any order a claim, review or event named), real and simulation scopes. */
async function ledgersOf(
  ledger: PipelineDeps["ledger"],
  orderIds: readonly string[],
  claims: readonly ClaimRecord[],
): Promise<{ scope?: string; entry: LedgerEntry }[]> {
  const scopes = new Set<string | undefined>([undefined, ...claims.map((c) => c.simulation_id)]);
  const out: { scope?: string; entry: LedgerEntry }[] = [];
  for (const orderId of new Set(orderIds)) {
    if (orderId === "") continue;
    for (const scope of scopes) {
      const entry = await ledger.get(orderId, scope);
      if (entry) out.push({ ...(scope ? { scope } : {}), entry });
    }
  }
  return out;
}
