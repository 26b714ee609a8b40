// `npm run chaos -- --emulators`: chaos flows on the local stack (dynalite, fauxqs, the local bus; the production
// handlers and adapters through the real AWS SDK, driven by the event-source pollers). The same plans as in
// process (each flow's ids under its own prefix, so flows run side by side on one stack), with faults where the
// stack lets them in: a crash right after a side-effecting call of any handler (local/testing/fault-injection.ts, one per
// claim, so several per flow), sends duplicated, delayed or lost (timers) on the SQS client, a second consumer
// racing the poller, the model slow, hung, failing or garbled, reviewers deciding (some at once), the sweep every
// few seconds. Interleavings come from real concurrency, so a flow's plan is reproduced, its timing is not.
// The stack is the durable one of `claims serve` (the table in LevelDB, the queues' journal, under a state
// directory), and a flow's planned whole-stack restart happens right after its n-th side-effecting call: every
// invocation dies at once (each later port call fails, answers in flight and batch responses are lost), the stack
// is stopped and started again on the same directories, which sends the journaled messages again and re-drives
// every open claim, as `claims serve` does after a kill -9. It is an in-process abrupt stop, not a kill -9 of a
// child process: nothing is flushed that a kill would not have written (the table's LevelDB log and the queue
// journal are written before each answer; closing them only releases their files), and the only work that still
// ends after the kill is requests already on the wire, which a kill an instant later would have let through too.
// A restart hits every flow running at the time; clients whose request got no answer send it again.
// Refunds are paid as in process (issue 39): the production refund executor, which the bus's payments rule delivers
// to (journaled, so a restart delivers what it cut off again), calls each flow's faulty provider
// (chaos/payment-provider.ts: refused, timed out before or after the work, settled late); the provider's webhooks
// reach the production webhook handler signed (twice, stale or forged at times); a crash can come right after the
// provider's answer or a settlement's write; reviewers RETRY or CLOSE the failed refunds through the review API.
// After every flow is final, the invariants of chaos/invariants.ts are checked on the stores and events.jsonl,
// the money the flows' providers paid included.
import { type LedgerEntry } from "../core/kernel/index.ts";
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import type { SendMessageBatchRequestEntry } from "@aws-sdk/client-sqs";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { auditClaimId } from "../core/history/audit-events.ts";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import type { Claim } from "../core/claim/claim.ts";
import type { ReviewRecord } from "../core/kernel/review.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { AuditEvent, Order } from "../core/integrity/index.ts";
import { seedOrders } from "../adapters/aws/index.ts";
import { scannedVerdictRecord } from "../adapters/aws/dynamo-verdicts.ts";
import { QUEUES } from "../app/manifest.ts";
import type { QueueRole } from "../app/manifest.ts";
import { createFaultInjector, fastQueues, readJournal } from "../local/testing/fault-injection.ts";
import { InjectedCrashError as StackCrashError } from "../local/errors.ts";
import type { CrashPoint, EffectCall } from "../local/testing/fault-injection.ts";
import { LOCAL_TABLE_NAME, startLocalStack } from "../local/stack.ts";
import type { LocalStack } from "../local/stack.ts";
import type { StoredVerdict } from "../pipeline/ports.ts";
import Stripe from "stripe";
import type { PaymentProvider } from "../pipeline/payments.ts";
import { createChaosLlm } from "./chaos-llm.ts";
import type { LlmCounts } from "./chaos-llm.ts";
import { chaosEnv, planFlowPayments, providerRng } from "./flow.ts";
import type { FlowCounts } from "./flow.ts";
import { openWork, settle } from "./emulator-settle.ts";
import type { SettlingStack } from "./emulator-settle.ts";
import { checkFlowInvariants } from "./invariants.ts";
import { apiRequest, LAMBDA_CONTEXT, sqsBatch } from "./lambda-events.ts";
import { planFlow } from "./plan.ts";
import type { FlowPlan, LlmProfile, PaymentPlan } from "./plan.ts";
import { createFaultyProvider } from "./payment-provider.ts";
import type { FaultyProvider, ProviderWebhook } from "./payment-provider.ts";
import { createRng, flowSeed } from "./rng.ts";
import type { Rng } from "./rng.ts";
import { flowNumbers, reproduction } from "./run.ts";
import type { ChaosOptions } from "./run.ts";
import { addToTally, createTally, emptyPaymentTotals, formatTally } from "./tally.ts";
import type { Tally } from "./tally.ts";
import { emptyReturnCounts } from "./returns.ts";
import { emptyOutcomeCounts } from "./outcomes.ts";
import { orderTotalMajor } from "../core/kernel/order-view.ts";

/** Flows worked on at once (they share the stack, so the pollers have work from several). */
const CONCURRENT_FLOWS = 8;
/** How long a flow's claims may take to become final on the stack before they count as stuck. */
const SETTLE_TIMEOUT_MS = 120_000;
/** Fast visibility timeouts: a crashed or failed delivery comes back within seconds. */
const FAST = { visibilityTimeoutS: 2 };
/** Where a claim's crash can be planned: right after these calls of these functions. */
const CRASH_POINTS: readonly CrashPoint[] = [
  { fn: "orchestrator", op: "sessions.saveSession", occurrence: 1 },
  { fn: "orchestrator", op: "sessions.saveSession", occurrence: 2 },
  { fn: "orchestrator", op: "queues.sendAgentSteps", occurrence: 1 },
  { fn: "orchestrator", op: "queues.sendProposal", occurrence: 1 },
  // After the decision maker's step was sent (the last effect of the analyst answer's step, which no marker records):
  // the redelivered answer proves nothing, so the step's outbox is performed again.
  { fn: "orchestrator", op: "queues.sendAgentSteps", occurrence: 2 },
  { fn: "orchestrator", op: "audit.append", occurrence: 3 },
  { fn: "worker", op: "audit.append", occurrence: 1 },
  { fn: "worker", op: "queues.sendCrewEvents", occurrence: 1 },
  { fn: "worker", op: "queues.sendCrewEvents", occurrence: 2 },
  { fn: "kernel", op: "verdicts.putVerdictOnce", occurrence: 1 },
  { fn: "kernel", op: "ledger.reserve", occurrence: 1 },
  { fn: "kernel", op: "verdicts.recordExecution", occurrence: 1 },
  { fn: "kernel", op: "audit.append", occurrence: 2 },
  { fn: "kernel", op: "publisher.publish", occurrence: 1 },
  { fn: "kernel", op: "verdicts.markPublished", occurrence: 1 },
  { fn: "kernel", op: "claims.updateClaim", occurrence: 1 },
  { fn: "intakeExtract", op: "claims.updateClaim", occurrence: 1 },
  { fn: "intakeExtract", op: "audit.append", occurrence: 1 },
  { fn: "intakeExtract", op: "queues.sendCrewEvents", occurrence: 1 },
  { fn: "reviewApi", op: "ledger.reserve", occurrence: 1 },
  { fn: "reviewApi", op: "publisher.publish", occurrence: 1 },
  { fn: "reviewApi", op: "audit.append", occurrence: 1 },
  { fn: "timer", op: "queues.sendCrewEvents", occurrence: 1 },
];
/** Where a claim's crash can be planned on the refund's way (one claim in three of a flow with payments draws one). */
const PAYMENT_CRASH_POINTS: readonly CrashPoint[] = [
  // The provider did the work, the settlement does not know it: the redelivery asks again under the same key.
  { fn: "refundExecutor", op: "payments.refund", occurrence: 1 },
  { fn: "refundExecutor", op: "settlements.create", occurrence: 1 },
  { fn: "refundExecutor", op: "settlements.update", occurrence: 1 },
  { fn: "refundExecutor", op: "publisher.publish", occurrence: 1 },
  { fn: "paymentWebhook", op: "settlements.update", occurrence: 1 },
  { fn: "reviewApi", op: "settlements.update", occurrence: 1 },
  { fn: "reviewApi", op: "ledger.releaseRefund", occurrence: 1 },
  { fn: "sweep", op: "ledger.releaseRefund", occurrence: 1 },
];
/** The signing secret of the stack's webhook endpoint in a chaos run (a forged webhook is signed with another). */
const WEBHOOK_SECRET = "whsec_chaos_emulators";
/** A provider's delay (simulated: up to hours) in real time on the stack: a hundredth, at most 3 s. */
const providerDelayMs = (ms: number) => Math.min(3_000, Math.max(0, ms / 100));

/** What one flow did on the stack. */
interface StackFlow {
  plan: FlowPlan;
  rng: Rng;
  prefix: string;
  ids: number;
  /** Every claim id the flow's requests created or a review resubmitted. */
  claims: Set<string>;
  violations: string[];
  counts: FlowCounts;
  /** The flow's side-effecting calls so far (its planned restart comes right after the n-th). */
  effects: number;
  /** The flow's payment provider (its plan in `plan.payments`), and its settles and webhooks not yet done. */
  provider: FaultyProvider;
  providerWork: number;
  /** Failed refunds' reviews seen by the reviewers, and what they were told succeeded (review id → decisions). */
  refundReviewsSeen: Set<string>;
  refundDecidedOk: Map<string, string[]>;
}

/** The stack the flows share, restarted now and then. */
interface SharedStack extends SettlingStack {
  /** The running stack, once any restart in progress is over. */
  ready(): Promise<LocalStack>;
  readonly injector: ReturnType<typeof createFaultInjector>;
}

/** What tests change in an emulator run: the plans (to place a restart), or a restart that loses the state (a planted bug). */
export interface EmulatorRunHooks {
  adjustPlan?: (plan: FlowPlan) => FlowPlan;
  /** The planted bug: the stack restarts on an empty state directory, as if it kept nothing on disk. */
  loseStateOnRestart?: boolean;
  /**
   * At most how long to wait for a flow's claims to become final (default two minutes). A claim that was lost never
   * does: waiting ends sooner once nothing moves any more (chaos/emulator-settle.ts).
   */
  settleTimeoutMs?: number;
  /** Replaces the payment provider's plan every flow drew (tests). */
  payments?: PaymentPlan;
  /** Restarts the stack right after a side-effecting call this answers true for (tests: at a place, whatever the count). */
  restartWhen?: (call: EffectCall) => boolean;
  /**
   * Each delivery to the refund executor waits until every claim of the flows is final with no review decision in
   * progress (tests: no re-drive of an open claim, no repair of a review, publishes the refund again after a restart).
   */
  holdRefundsUntilClaimsFinal?: boolean;
  /** The planted bug: the restart loses the refund executor's journaled deliveries. */
  dropRefundDeliveriesOnRestart?: boolean;
}

/** The outcome of an emulator run: the totals, and what each restart recovered. */
export interface EmulatorRunResult {
  violations: number;
  flows: number;
  tally: Tally;
  restarts: LocalStack["recovered"][];
}

const FLOW_OF_CLAIM = /^clm_f(\d+)_/;
const FLOW_OF_ORDER = /ord_f(\d+)_/;

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
  // The stack's one policy is the bundled config's: its flows draw no return or outcome policy (docs/testing.md).
  returns: emptyReturnCounts(),
  outcomes: emptyOutcomeCounts(),
});

/** Runs the flows of `opts` on one local stack (restarted where a flow plans it); returns the violations and totals. */
export async function runOnEmulators(
  opts: ChaosOptions,
  out: (line: string) => void,
  configPath: string,
  hooks: EmulatorRunHooks = {},
): Promise<EmulatorRunResult> {
  const env = chaosEnv(readFileSync(configPath, "utf8"), configPath);
  const agent = env.config.agent;
  const started = performance.now();
  const settleMs = hooks.settleTimeoutMs ?? SETTLE_TIMEOUT_MS;
  const dataDir = mkdtempSync(join(tmpdir(), "claims-chaos-"));
  const numbers = flowNumbers(opts);
  const flows = new Map<number, StackFlow>();
  // The stack's clock is the wall clock, moved ahead while a slow model "thinks".
  let offset = 0;
  const clock = { now: () => Date.now() + offset };
  for (const k of numbers) {
    const rng = createRng(flowSeed(opts.seed, k));
    const prefix = `f${k}_`;
    const drawn = planFlow(rng, opts.seed, k, { prefix, startMs: Date.now() });
    // The payment provider's plan and the orders' payments, drawn as in process.
    const { payments, orders } = planFlowPayments(opts.seed, k, drawn.orders, hooks.payments);
    const plan = { ...drawn, orders, payments };
    flows.set(k, {
      plan: hooks.adjustPlan ? hooks.adjustPlan(plan) : plan,
      rng,
      prefix,
      ids: 0,
      claims: new Set(),
      violations: [],
      counts: emptyCounts(),
      effects: 0,
      provider: createFaultyProvider({ plan: payments, rng: providerRng(opts.seed, k), now: clock.now }),
      providerWork: 0,
      refundReviewsSeen: new Set(),
      refundDecidedOk: new Map(),
    });
  }
  const flowOf = (id: unknown, re: RegExp) => {
    const m = typeof id === "string" ? re.exec(id) : null;
    return m ? flows.get(Number(m[1])) : undefined;
  };

  const global = createRng(opts.seed);
  const current = new AsyncLocalStorage<StackFlow>();
  let unattributed = 0;
  const ids = {
    next: (p: string) => {
      const f = current.getStore();
      return f ? `${p}_${f.prefix}${++f.ids}` : `${p}_chaos${++unattributed}`;
    },
  };

  // The model: each call behaves as the flow of its order says (the order id is in the claim or its text).
  const rules = createRulesModel({ contract: agent.contract, responsibility: agent.responsibility });
  const llmCounts: LlmCounts = { calls: 0, slow: 0, hang: 0, fail: 0, garble: 0 };
  const models = new Map<StackFlow | undefined, ReturnType<typeof createChaosLlm>>();
  const modelOf = (f: StackFlow | undefined) => {
    let m = models.get(f);
    if (!m) {
      const profile: LlmProfile = f?.plan.llm ?? { name: "healthy", slow: 0, hang: 0, fail: 0, garble: 0 };
      // A slow answer moves the clock a little (the sweep then ticks the claim); a hung one kills the invocation.
      m = createChaosLlm(rules, {
        rng: global,
        profile,
        advance: (ms) => (offset += Math.min(ms, 30_000)),
        counts: f?.counts.llm ?? llmCounts,
        functionTimeoutMs: 1_000,
      });
      models.set(f, m);
    }
    return m;
  };
  const llm = {
    provider: rules.provider,
    model: rules.model,
    complete: ((request) => {
      const facts = request.facts as { claim?: Claim; claim_text?: string } | undefined;
      return modelOf(flowOf(facts?.claim?.order_id ?? facts?.claim_text ?? "", FLOW_OF_ORDER)).complete(request);
    }) as ReturnType<typeof createChaosLlm>["complete"],
  };

  process.env.CLAIMS_SWEEP_STALLED_AFTER_MS ??= "3000";
  // The flows in runStackFlow: the ones a restart hits.
  const active = new Set<StackFlow>();
  let restart: (reason: string) => void = () => undefined;
  const injector = createFaultInjector({
    payments: true,
    onEffect: (call) => {
      const f = flowOf(call.claimId, FLOW_OF_CLAIM);
      if (!f) return;
      f.effects++;
      if ((f.plan.faults.restartAfterCall === f.effects || hooks.restartWhen?.(call) === true) && active.has(f))
        restart(
          `flow ${f.plan.flow} restarts the stack after its side-effecting call ${f.effects}, ${call.fn} ${call.op}`,
        );
    },
  });
  // The harness's invocations under way (clients' requests, webhooks, refund deliveries, racers) and started so far:
  // the stack is idle only with none under way (chaos/emulator-settle.ts).
  let invoking = 0;
  let invoked = 0;
  const invokeOnce = injector.invoke;
  injector.invoke = async <T>(work: () => Promise<T>): Promise<T> => {
    invoking++;
    invoked++;
    try {
      return await invokeOnce(work);
    } finally {
      invoking--;
    }
  };
  // The stack's own sweeps started so far (every generation).
  let sweeps = 0;
  // The refund executor's provider: each refund goes to the provider of the flow its order belongs to (a claim a
  // reviewer's RESUBMIT made has an id of its own, but its order is one of the flow's).
  const provider: PaymentProvider = {
    name: "stripe",
    needsPaymentRef: true,
    refund(request) {
      const f = flowOf(request.orderId, FLOW_OF_ORDER) ?? flowOf(request.claimId, FLOW_OF_CLAIM);
      if (!f) throw new Error(`chaos: a refund of ${request.claimId} on ${request.orderId}, an order of no flow`);
      return f.provider.provider.refund(request);
    },
  };
  const allOrders = [...flows.values()].flatMap((f) => f.plan.orders);
  let generation = 0;
  const start = (orders: readonly Order[]) =>
    startLocalStack({
      configPath,
      clock,
      llm,
      ids,
      dataDir,
      stateDir: join(dataDir, hooks.loseStateOnRestart ? `store-${generation}` : "store"),
      logLevel: "SILENT",
      orders,
      // No batching window on the timers (fastQueues): the timers' poller busy a minute filling a batch after each
      // step deadline kept settling from seeing the stack idle (chaos/emulator-settle.ts) for minutes.
      queues: fastQueues(FAST),
      pollerConcurrency: 3,
      sweepEveryMs: 3_000,
      wrapDeps: (fn, deps) => injector.wrapDeps(fn, { ...deps, payments: provider }),
      payments: { provider: "stripe", env: { STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET } },
      wrapHandler: injector.wrapHandler,
      wrapRefundDelivery: hooks.holdRefundsUntilClaimsFinal
        ? (delivery) =>
            injector.invoke(async () => {
              await claimsFinal();
              return delivery();
            })
        : injector.invoke,
      onSweep: async () => void sweeps++,
      onPollerError: () => undefined,
    });
  let stack: LocalStack;
  try {
    stack = await start(allOrders);
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const racing: Promise<unknown>[] = [];
  installSendFaults(stack, flowOf, racing, injector);

  // A whole-stack restart: everything running dies now; the stack stops and starts again on the same state.
  const received = (s: LocalStack) =>
    (Object.keys(s.pollers) as QueueRole[]).reduce((n, role) => n + s.pollers[role].stats.received, 0);
  let deliveredBefore = 0;
  let restarting: Promise<void> | undefined;
  let closing = false;
  const restarts: LocalStack["recovered"][] = [];
  // Reads of the harness on the stack in flight: a restart lets them end before it stops the emulators.
  let reads = 0;
  let readsDone: (() => void) | undefined;
  restart = (reason) => {
    if (restarting || closing) return;
    const onTheWire = injector.killAll(reason);
    for (const f of active) f.counts.faults.restart++;
    const old = stack;
    // The new stack (its pollers, its sweep timer) belongs to no invocation and no flow.
    restarting = current.exit(() =>
      injector.outside(async () => {
        // Requests already sent end (their answers are lost); then the stack stops under none (dynalite's reads fail badly when closed under them).
        await onTheWire;
        if (reads > 0) await new Promise<void>((resolve) => (readsDone = resolve));
        deliveredBefore += received(old);
        await old.stop();
        generation++;
        // The planted bug: the refund executor's deliveries not kept (as before issue 39), so one cut off is lost.
        if (hooks.dropRefundDeliveriesOnRestart) rmSync(join(dataDir, "store", "payments.jsonl"), { force: true });
        // The durable table keeps the orders; an emptied one (the planted bug) gets them again.
        stack = await start(hooks.loseStateOnRestart ? allOrders : []);
        installSendFaults(stack, flowOf, racing, injector);
        restarts.push(stack.recovered);
        restarting = undefined;
      }),
    );
    restarting.catch(() => undefined); // awaited by every user of the stack; a failed restart fails the run there
  };
  const ready = async () => {
    while (restarting) await restarting;
    return stack;
  };
  const shared: SharedStack = {
    ready,
    injector,
    async use(work) {
      for (;;) {
        const s = await ready();
        const kills = injector.kills;
        reads++;
        try {
          return await work(s);
        } catch (error) {
          if (injector.kills === kills) throw error;
        } finally {
          if (--reads === 0) readsDone?.();
        }
      }
    },
    async idle() {
      const busy = () =>
        restarting !== undefined || invoking > 0 || [...flows.values()].some((f) => f.providerWork > 0);
      if (busy()) return undefined;
      const seen = await shared.use(async (s) => {
        const roles = Object.keys(s.pollers) as QueueRole[];
        const before = roles.map((role) => s.pollers[role].activity());
        if (before.some((a) => a.busy)) return undefined;
        // The timers wait out their delays (a step's deadline): a claim that waits on one is the sweep's to re-drive.
        const depths = await Promise.all(roles.filter((r) => r !== "timers").map((r) => s.pollers[r].queueDepth()));
        const after = roles.map((role) => s.pollers[role].activity());
        if (depths.some((d) => d > 0) || after.some((a, i) => a.busy || a.epoch !== before[i]!.epoch)) return undefined;
        const bus = s.bus.local.stats();
        return [restarts.length, received(s), bus.accepted, bus.deliveries, bus.failedAttempts, invoked].join(",");
      });
      return busy() ? undefined : seen;
    },
    sweeps: () => sweeps,
    // Outside every flow and invocation, as the stack's timer runs it; a restart that kills it leaves the rest to the next.
    sweep: () =>
      current.exit(() =>
        injector.outside(() =>
          shared.use(async (s) => {
            await s.handlers.sweep().catch((error: unknown) => {
              if (!(error instanceof StackCrashError)) throw error;
            });
          }),
        ),
      ),
    now: () => clock.now(),
    stalledAfterMs: Number(process.env.CLAIMS_SWEEP_STALLED_AFTER_MS),
  };
  /**
   * Every claim of the flows final, with no review decision in progress (a held refund delivery waits for it), or the
   * stack died meanwhile: the delivery then dies with it (a restart stops the bus only once its deliveries ended, so
   * the wait reads the stack it started on, never the next one).
   */
  const claimsFinal = async () => {
    const kills = injector.kills;
    const on = stack;
    const here = { use: <T>(work: (s: LocalStack) => Promise<T>) => work(on) };
    const claims = () => [...flows.values()].map((f) => ({ claims: f.claims, providerWork: 0 }));
    // A delivery the restart cut off (or one the new stack makes while it starts) is not held: it goes on at once.
    while (injector.kills === kills && restarting === undefined && stack === on) {
      const open = await openWork(here, claims(), true).catch(() => undefined);
      if (open?.size === 0 && injector.kills === kills) return;
      await sleep(100);
    }
  };

  // The providers' later work: a pending refund settles (or fails) and its webhooks go out, at a hundredth of the
  // provider's delay; a webhook the stack did not answer (a crash, a restart) is sent again, as Stripe does.
  for (const f of flows.values()) {
    const later = (at: number, work: () => Promise<void> | void) => {
      f.providerWork++;
      setTimeout(
        () => {
          void current
            .run(f, async () => work())
            .catch((e: unknown) => f.violations.push(`the chaos provider failed: ${(e as Error).message}`))
            .finally(() => f.providerWork--);
        },
        providerDelayMs(at - clock.now()),
      );
    };
    f.provider.onSettle = (at, settle) => later(at, settle);
    const send = (webhook: ProviderWebhook, attempt: number) =>
      later(webhook.at, async () => {
        const answered = await deliverWebhook(shared, f, webhook, clock);
        if (!answered && attempt < 30) send({ ...webhook, at: clock.now() + 50_000 }, attempt + 1);
      });
    f.provider.onWebhook = (webhook) => send(webhook, 1);
  }

  let violations = 0;
  const tally = createTally();
  try {
    const queue = [...flows.values()];
    let finished = 0;
    const work = async () => {
      for (let f = queue.shift(); f; f = queue.shift()) {
        active.add(f);
        await current.run(f, () => runStackFlow(shared, f!, settleMs)).finally(() => active.delete(f!));
        // Progress on stderr every 50 flows: a 500-flow run takes a quarter of an hour.
        if (++finished % 50 === 0)
          process.stderr.write(
            `chaos: ${finished} flows run in ${((performance.now() - started) / 1000).toFixed(1)} s (checked once the stack drains)\n`,
          );
      }
    };
    await Promise.all(Array.from({ length: opts.concurrent ?? CONCURRENT_FLOWS }, work));
    closing = true;
    await ready();
    await Promise.allSettled(racing);
    await stack.drained(SETTLE_TIMEOUT_MS).catch(() => undefined);
    const { open: unsettled, stuck } = await settle(shared, [...flows.values()], settleMs);
    for (const [f, open] of unsettled)
      f.violations.push(
        `the flow did not settle ${stuck ? "(nothing moved over the stack's sweeps)" : `within ${settleMs / 1000} s`}: ${open.slice(0, 3).join("; ")}${open.length > 3 ? ` (+${open.length - 3})` : ""}`,
      );
    await stack.drained(SETTLE_TIMEOUT_MS).catch((e: Error) => out(`chaos: the stack did not drain: ${e.message}`));

    // The invariants, on what the stores and the bus journal hold.
    const journal = await readJournal(stack);
    const verdicts = await scanVerdicts(stack);
    for (const f of flows.values()) {
      for (const [claimId, point] of injector.fired) if (f.claims.has(claimId) && point) f.counts.faults.crash++;
      const observed = await observe(stack, f, journal, verdicts);
      const settlements = (await Promise.all([...f.claims].map((id) => stack.deps.settlements?.get(id)))).filter(
        (x) => x !== undefined,
      );
      paymentTotals(f, observed.events);
      // What reviewers were told a RETRY / CLOSE did is what the bus announced for that review.
      for (const [reviewId, decisions] of f.refundDecidedOk) {
        const distinct = [...new Set(decisions)];
        const onBus = [
          ...new Set(
            observed.events
              .filter((e) => e.detailType === "ReviewDecided" && e.detail.review_id === reviewId)
              .map((e) => String(e.detail.decision)),
          ),
        ];
        if (distinct.length > 1)
          f.violations.push(`refund review ${reviewId}: reviewers were told ${distinct.join(" and ")} both succeeded`);
        if (onBus.length !== 1 || onBus[0] !== distinct[0])
          f.violations.push(
            `refund review ${reviewId}: a reviewer was told ${distinct[0]} succeeded, the bus announced [${onBus.join(", ")}]`,
          );
      }
      // No claim lost: every claim a client was answered 202 for (or a review resubmitted) is stored.
      for (const id of f.claims)
        if (!observed.claims.some((c) => c.claim_id === id))
          f.violations.push(`claim ${id} was accepted but is not stored: lost`);
      const result = checkFlowInvariants({
        ...observed,
        orders: f.plan.orders,
        limitEur: agent.contract.max_refund_without_escalation,
        currencies: agent.contract.currencies,
        customerLimits: agent.contract.customer_limits,
        responsibility: agent.responsibility,
        payments: { settlements, book: f.provider.book },
      });
      f.violations.push(...result.violations);
      f.counts.claims = observed.claims.length;
      f.counts.decided = observed.claims.filter((c) => c.status === "DECIDED").length;
      f.counts.needsReview = observed.claims.filter((c) => c.status === "NEEDS_REVIEW").length;
      f.counts.refunds = result.money.refunds;
      addToTally(tally, f);
      if (f.violations.length > 0) {
        violations += f.violations.length;
        out(`✗ flow ${f.plan.flow} (seed ${opts.seed}, on the stack): ${f.violations.length} violation(s)`);
        for (const v of f.violations.slice(0, opts.verbose ? 100 : 5)) out(`    ${v}`);
        if (opts.verbose) {
          // What a stuck claim's record, crew session and audit say: where it stopped.
          for (const c of observed.claims.filter((x) => x.status === "RECEIVED" || x.status === "RUNNING")) {
            const session = await stack.deps.sessions.loadSession(c.claim_id);
            out(
              `    ${c.claim_id}: ${c.status} since ${c.updated_at}; session v${session?.version ?? "-"}, outbox ${session?.outbox.length ?? "-"} ${JSON.stringify(session?.snapshot ? { status: (session.snapshot as { status?: unknown }).status, phase: (session.snapshot as { phase?: unknown }).phase } : null)}`,
            );
            for (const e of observed.audit.filter((a) => auditClaimId(a) === c.claim_id))
              out(`      ${e.created_at} ${e.event_type}`);
          }
        }
        out(`    reproduce: ${reproduction(opts.seed, f.plan.flow, true)}`);
      }
    }
    tally.llm.calls += llmCounts.calls;
    tally.sweeps = -1; // the stack's own timer runs them, every 3 s
    tally.deadLetters = await deadLetters(stack);
    tally.deliveries = deliveredBefore + received(stack);
  } finally {
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const sum = (k: "messages" | "restarted") => restarts.reduce((n, r) => n + r[k], 0);
  out(
    `whole-stack restarts: ${restarts.length} (journaled messages sent again ${sum("messages")}, open claims re-driven ${sum("restarted")})`,
  );
  out(formatTally(tally, (performance.now() - started) / 1000));
  return { violations, flows: flows.size, tally, restarts };
}

/** One flow: its claims submitted (some twice, some at once), every claim final, reviews decided, final again. */
async function runStackFlow(shared: SharedStack, f: StackFlow, settleMs: number): Promise<void> {
  const injector = shared.injector;
  await shared.use((stack) => seedOrders(stack.clients.dynamo, LOCAL_TABLE_NAME, f.plan.orders));
  const crashesLeft = { n: f.plan.faults.crashAfterCalls.length };
  const keyToClaim = new Map<string, string>();
  const submit = async (c: FlowPlan["claims"][number]) => {
    for (let attempt = 1; attempt <= 10; attempt++) {
      const stack = await shared.ready();
      const kills = injector.kills;
      const res = await injector
        .invoke(() =>
          stack.handlers.intakeApi(
            apiRequest("POST /claims", "/claims", {
              body: JSON.stringify(c.body),
              headers: { "content-type": "application/json", "idempotency-key": c.idempotencyKey },
            }),
          ),
        )
        .catch((error: unknown) => (injector.kills !== kills ? undefined : Promise.reject(error)));
      if (res === undefined || injector.kills !== kills) {
        // The stack died under the request: no answer. The client sends it again, with its Idempotency-Key.
        f.counts.clientRetries++;
        continue;
      }
      const status = typeof res === "string" ? 200 : (res.statusCode ?? 200);
      const body = typeof res === "string" ? res : (res.body ?? "");
      if (status !== 202) {
        f.violations.push(
          `POST /claims (claim ${c.index}, attempt ${attempt}) answered ${status}: ${body.slice(0, 200)}`,
        );
        return;
      }
      const claimId = String((JSON.parse(body) as { claim_id: string }).claim_id);
      const known = keyToClaim.get(c.idempotencyKey);
      if (known && known !== claimId)
        f.violations.push(`Idempotency-Key ${c.idempotencyKey} answered ${known}, then ${claimId}`);
      keyToClaim.set(c.idempotencyKey, claimId);
      if (!f.claims.has(claimId) && crashesLeft.n > 0 && f.rng.chance(0.7)) {
        crashesLeft.n--;
        injector.planCrash(claimId, f.rng.pick(f.rng.chance(0.3) ? PAYMENT_CRASH_POINTS : CRASH_POINTS));
      }
      f.claims.add(claimId);
      return;
    }
  };
  await Promise.all(
    f.plan.claims.map(async (c) => {
      await sleep(Math.min(c.submitAtMs / 100, 2_000));
      if (c.resend === "concurrent") await Promise.all([submit(c), submit(c)]);
      else await submit(c);
      if (c.resend === "later") {
        await sleep(f.rng.int(100, 2_000));
        await submit(c);
      }
    }),
  );

  // Reviewers decide what the flow's claims left to a person, then the resubmitted claims run; twice at most. The
  // failed refunds' reviews are decided as they open (a RETRY that fails again opens another), five rounds at most.
  for (let round = 0, claimRounds = 0; round < 6; round++) {
    await settle(shared, [f], settleMs);
    const pending: ReviewRecord[] = [];
    const refunds: { claimId: string; reviewId: string }[] = [];
    for (const claimId of f.claims) {
      const [r, s] = await shared.use((stack) =>
        Promise.all([stack.deps.reviews.getReview(claimId), stack.deps.settlements?.get(claimId)]),
      );
      if (r?.status === "PENDING" && !r.intent && claimRounds < 2) pending.push(r);
      const refundReview = s?.review;
      if (refundReview?.status === "PENDING" && !f.refundReviewsSeen.has(refundReview.review_id)) {
        f.refundReviewsSeen.add(refundReview.review_id);
        refunds.push({ claimId, reviewId: refundReview.review_id });
      }
    }
    if (round === 5 || (pending.length === 0 && refunds.length === 0)) break;
    if (pending.length > 0) claimRounds++;
    await Promise.all([
      ...pending.map(async (r) => {
        if (!f.rng.chance(f.plan.reviewer.decide)) return;
        const first = decisionFor(f, r, "alice");
        const together = f.rng.chance(f.plan.reviewer.concurrent)
          ? [decide(shared, f, r, f.rng.chance(0.5) ? first : decisionFor(f, r, "bob"))]
          : [];
        await Promise.all([decide(shared, f, r, first), ...together]);
        if (f.rng.chance(f.plan.reviewer.repeat)) await decide(shared, f, r, first);
      }),
      ...refunds.map(({ claimId, reviewId }) => decideRefund(shared, f, claimId, reviewId)),
    ]);
    for (const claimId of [...f.claims]) {
      const r = await shared.use((stack) => stack.deps.reviews.getReview(claimId));
      if (r?.resubmitted_claim_id) f.claims.add(r.resubmitted_claim_id);
    }
  }
}

/** A reviewer's decision through the review API; a crash (no answer) is tried again as the policy says. */
async function decide(
  shared: SharedStack,
  f: StackFlow,
  r: ReviewRecord,
  body: Record<string, unknown>,
): Promise<void> {
  await reviewRequest(shared, f, r.claim_id, body);
}

/** A reviewer's RETRY / CLOSE of a failed refund, as the flow's policy says: at times two reviewers at once, or twice. */
async function decideRefund(shared: SharedStack, f: StackFlow, claimId: string, reviewId: string): Promise<void> {
  const policy = f.plan.payments!.reviewer;
  if (!f.rng.chance(policy.decide)) return;
  const body = (reviewer: string, decision: "RETRY" | "CLOSE"): Record<string, unknown> =>
    decision === "CLOSE"
      ? { decision, reviewer, note: f.rng.pick(["refunded by bank transfer instead", "customer withdrew the claim"]) }
      : { decision, reviewer, ...(f.rng.chance(0.5) ? { note: "the customer updated the card" } : {}) };
  const first = body("alice", f.rng.chance(policy.retry) ? "RETRY" : "CLOSE");
  const told = (answer: Record<string, unknown> | undefined, sent: Record<string, unknown>) => {
    // A RETRY / CLOSE decides the claim's current refund review, which the answer names.
    const id = (answer?.review as { review_id?: string } | undefined)?.review_id ?? reviewId;
    f.refundDecidedOk.set(id, [...(f.refundDecidedOk.get(id) ?? []), String(sent.decision)]);
  };
  const send = async (sent: Record<string, unknown>) => {
    const answer = await reviewRequest(shared, f, claimId, sent);
    if (answer) told(answer, sent);
  };
  if (f.rng.chance(policy.concurrent))
    await Promise.all([send(first), send(body("bob", f.rng.chance(0.5) ? "RETRY" : "CLOSE"))]);
  else await send(first);
  if (f.rng.chance(policy.repeat)) await send(first);
}

/** POST /claims/{id}/review with `body` through the review API; the answer's body when it was 200 (else undefined). */
async function reviewRequest(
  shared: SharedStack,
  f: StackFlow,
  claimId: string,
  body: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  for (let attempt = 1; attempt <= 3; attempt++) {
    f.counts.reviewDecisions++;
    const path = `/claims/${claimId}/review`;
    const stack = await shared.ready();
    const kills = shared.injector.kills;
    let res;
    try {
      res = await shared.injector.invoke(() =>
        stack.handlers.reviewApi(
          apiRequest("POST /claims/{id}/review", path, {
            body: JSON.stringify(body),
            headers: { "content-type": "application/json" },
            pathParameters: { id: claimId },
            // The reviewer the authorizer authenticated: the one the body names (else REVIEWER_MISMATCH).
            reviewer: String(body.reviewer ?? "reviewer"),
          }),
        ),
      );
    } catch (error) {
      if (!(error instanceof StackCrashError) && shared.injector.kills === kills) throw error;
      res = { statusCode: 599 };
    }
    if (shared.injector.kills !== kills) res = { statusCode: 599 };
    const status = typeof res === "string" ? 200 : (res.statusCode ?? 200);
    if (status === 500 || status === 599) {
      if (!f.rng.chance(f.plan.reviewer.retryAfterCrash)) return undefined;
      f.counts.clientRetries++;
      continue;
    }
    const text = typeof res === "string" ? res : (res.body ?? "");
    if (status > 500 || status === 404)
      f.violations.push(`POST ${path} ${JSON.stringify(body).slice(0, 120)} answered ${status}: ${text.slice(0, 200)}`);
    return status === 200 ? (JSON.parse(text) as Record<string, unknown>) : undefined;
  }
  return undefined;
}

/**
 * Stripe delivering one webhook to POST /webhooks/stripe, signed at the moment it is sent (a forged one with another
 * secret); true when the stack answered (200, or 400 for the forged one), false when it died under it.
 */
async function deliverWebhook(
  shared: SharedStack,
  f: StackFlow,
  webhook: ProviderWebhook,
  clock: { now(): number },
): Promise<boolean> {
  const stack = await shared.ready();
  const handler = stack.handlers.paymentWebhook;
  if (!handler) throw new Error("chaos: the stack has no webhook endpoint (no webhook secret)");
  const kills = shared.injector.kills;
  const forged = webhook.kind === "forged";
  const signature = Stripe.webhooks.generateTestHeaderString({
    payload: webhook.payload,
    secret: forged ? "whsec_someone_else" : WEBHOOK_SECRET,
    timestamp: Math.floor(clock.now() / 1000),
  });
  let res;
  try {
    res = await shared.injector.invoke(() =>
      handler(
        apiRequest("POST /webhooks/stripe", "/webhooks/stripe", {
          body: webhook.payload,
          headers: { "content-type": "application/json", "stripe-signature": signature },
        }),
      ),
    );
  } catch (error) {
    if (!(error instanceof StackCrashError) && shared.injector.kills === kills) throw error;
    return false;
  }
  if (shared.injector.kills !== kills) return false;
  const status = typeof res === "string" ? 200 : (res.statusCode ?? 200);
  if (status === 500) return false;
  if (status !== (forged ? 400 : 200))
    f.violations.push(
      `POST /webhooks/stripe (${webhook.kind} ${webhook.payload.slice(0, 80)}…) answered ${status}: ${(typeof res === "string" ? res : (res.body ?? "")).slice(0, 200)}`,
    );
  return true;
}

/** The flow's payment figures for the report: the provider's counts, its payouts, and the reviews and failures the bus carried. */
function paymentTotals(f: StackFlow, events: readonly { detailType: string; detail: Record<string, unknown> }[]): void {
  Object.assign(f.counts.payments, f.provider.counts);
  f.counts.payments.payouts = f.provider.book.payouts.length;
  const decided = new Map<string, string>();
  for (const e of events)
    if (e.detailType === "ReviewDecided" && (e.detail.decision === "RETRY" || e.detail.decision === "CLOSE"))
      decided.set(String(e.detail.review_id), String(e.detail.decision));
  f.counts.payments.retried = [...decided.values()].filter((d) => d === "RETRY").length;
  f.counts.payments.closed = [...decided.values()].filter((d) => d === "CLOSE").length;
  f.counts.payments.refundsFailed = new Set(
    events.filter((e) => e.detailType === "RefundFailed").map((e) => String(e.detail.execution_id)),
  ).size;
}

function decisionFor(f: StackFlow, r: ReviewRecord, reviewer: string): Record<string, unknown> {
  const rng = f.rng;
  if (r.origin === "ESCALATE") {
    const kind = rng.weighted({ approve: 45, lower: 15, deny: 35, resubmit: 5 });
    const amount = r.amount_eur ?? 0;
    if (kind === "approve") return { decision: "APPROVE", reviewer };
    if (kind === "lower")
      return {
        decision: "APPROVE",
        reviewer,
        amount_eur: amount > 0.02 ? Math.max(0.01, Math.round(amount * rng.int(10, 90)) / 100) : amount,
        note: "part refunded",
      };
    if (kind === "resubmit") return { decision: "RESUBMIT", reviewer, claim: corrected(f, r) };
    return { decision: "DENY", reviewer, note: "checked" };
  }
  // A resubmitted claim's own review is denied: one resubmission per claim of the plan.
  return rng.chance(0.5) && FLOW_OF_CLAIM.test(r.claim_id)
    ? { decision: "RESUBMIT", reviewer, claim: corrected(f, r) }
    : { decision: "DENY", reviewer, note: "checked" };
}

function corrected(f: StackFlow, r: ReviewRecord): Claim {
  const planned = f.plan.claims.map((c) => c.claim).find((c) => c.order_id === r.order_id) ?? f.plan.claims[0]!.claim;
  const order = f.rng.pick(f.plan.orders);
  return {
    ...planned,
    order_id: planned.order_id.startsWith("ord_f") ? planned.order_id : order.order_id,
    amount_eur: Math.max(0.01, Math.min(Math.abs(planned.amount_eur) || 1, orderTotalMajor(order))),
  };
}

/** Duplicates, delays, loses (timers) and races the flows' sends on the stack's SQS client, as each flow's faults say. */
function installSendFaults(
  stack: LocalStack,
  flowOf: (id: unknown, re: RegExp) => StackFlow | undefined,
  racing: Promise<unknown>[],
  injector: ReturnType<typeof createFaultInjector>,
): void {
  const roleOf = new Map((Object.keys(stack.queues) as QueueRole[]).map((role) => [stack.queues[role].url, role]));
  const claimOf = (body: string | undefined): string | undefined => {
    try {
      const m = JSON.parse(body ?? "null") as { claim_id?: string; crewId?: string } | null;
      return m?.claim_id ?? (m?.crewId ? m.crewId.split("/")[0] : undefined);
    } catch {
      return undefined;
    }
  };
  let dupes = 0;
  stack.clients.sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as {
        QueueUrl?: string;
        MessageBody?: string;
        MessageGroupId?: string;
        MessageDeduplicationId?: string;
        DelaySeconds?: number;
        Entries?: SendMessageBatchRequestEntry[];
      };
      const role = input.QueueUrl ? roleOf.get(input.QueueUrl) : undefined;
      const batch = context.commandName === "SendMessageBatchCommand";
      if (!role || (context.commandName !== "SendMessageCommand" && !batch)) return next(args);
      const entries: SendMessageBatchRequestEntry[] = batch
        ? [...(input.Entries ?? [])]
        : [
            {
              Id: "one",
              MessageBody: input.MessageBody,
              ...(input.MessageGroupId ? { MessageGroupId: input.MessageGroupId } : {}),
              ...(input.MessageDeduplicationId ? { MessageDeduplicationId: input.MessageDeduplicationId } : {}),
              ...(input.DelaySeconds !== undefined ? { DelaySeconds: input.DelaySeconds } : {}),
            },
          ];
      const kept: SendMessageBatchRequestEntry[] = [];
      const copies: SendMessageBatchRequestEntry[] = [];
      for (const e of entries) {
        const f = flowOf(claimOf(e.MessageBody), FLOW_OF_CLAIM);
        const faults = f?.plan.faults;
        if (f && faults && role === "timers" && faults.lostTimer > 0 && f.rng.chance(faults.lostTimer)) {
          f.counts.faults.lostTimer++;
          continue;
        }
        const entry = { ...e };
        if (f && faults && !QUEUES[role].fifo && faults.delay > 0 && f.rng.chance(faults.delay)) {
          f.counts.faults.delay++;
          entry.DelaySeconds = Math.max(entry.DelaySeconds ?? 0, f.rng.int(1, 3));
        }
        kept.push(entry);
        if (f && faults && faults.duplicate > 0 && f.rng.chance(faults.duplicate)) {
          f.counts.faults.duplicate++;
          copies.push({
            ...entry,
            Id: `${entry.Id}-dup`,
            ...(entry.MessageDeduplicationId
              ? { MessageDeduplicationId: `${entry.MessageDeduplicationId.slice(0, 100)}#dup${++dupes}` }
              : {}),
          });
        }
        // A racing consumer: the same message handed to a second invocation of the queue's handler right away.
        if (f && faults && faults.race > 0 && role !== "timers" && f.rng.chance(faults.race)) {
          f.counts.faults.race++;
          const event = sqsBatch(
            [{ id: `race-${++dupes}`, body: entry.MessageBody ?? "", receives: 1, group: entry.MessageGroupId }],
            `arn:aws:sqs:us-east-1:000000000000:${role}`,
          );
          // An invocation of its own: a crash of the racer is not the sender's.
          racing.push(
            Promise.resolve()
              .then(() => injector.invoke(() => stack.handlers[role](event, LAMBDA_CONTEXT)))
              .catch(() => undefined),
          );
        }
      }
      const send = (list: SendMessageBatchRequestEntry[]) => {
        if (batch) return next({ ...args, input: { ...input, Entries: list } as typeof args.input });
        const [e] = list;
        return next({
          ...args,
          input: {
            QueueUrl: input.QueueUrl,
            MessageBody: e!.MessageBody,
            ...(e!.MessageGroupId ? { MessageGroupId: e!.MessageGroupId } : {}),
            ...(e!.MessageDeduplicationId ? { MessageDeduplicationId: e!.MessageDeduplicationId } : {}),
            ...(e!.DelaySeconds !== undefined ? { DelaySeconds: e!.DelaySeconds } : {}),
          } as typeof args.input,
        });
      };
      // Everything dropped (lost timers): answer as SQS would have, with nothing sent.
      const result =
        kept.length > 0
          ? await send(kept)
          : {
              output: { $metadata: {}, ...(batch ? { Successful: [], Failed: [] } : { MessageId: "lost" }) },
              response: {},
            };
      for (const copy of copies) await send([copy]);
      return result as Awaited<ReturnType<typeof next>>;
    },
    { step: "initialize", name: "chaosSendFaults" },
  );
}

/** Every stored verdict, by claim id (a scan: the table keeps them by idempotency key). */
async function scanVerdicts(stack: LocalStack): Promise<Map<string, StoredVerdict[]>> {
  const out = new Map<string, StoredVerdict[]>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await stack.clients.dynamo.send(
      new ScanCommand({
        TableName: LOCAL_TABLE_NAME,
        ConsistentRead: true,
        FilterExpression: "sk = :v",
        ExpressionAttributeValues: { ":v": "VERDICT" },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const i of page.Items ?? []) {
      const v: StoredVerdict = {
        idempotency_key: String(i.pk).replace(/^VERDICT#/, ""),
        claim_id: String(i.claim_id),
        record: scannedVerdictRecord(i),
        layer: Number(i.layer),
        checks: [],
        execution: i.execution as StoredVerdict["execution"],
        events: [],
        published: i.published === true,
      };
      out.set(v.claim_id, [...(out.get(v.claim_id) ?? []), v]);
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
}

/** What the stack holds for one flow: its claims, their verdicts, reviews, ledgers, events and audit. */
async function observe(
  stack: LocalStack,
  f: StackFlow,
  journal: Awaited<ReturnType<typeof readJournal>>,
  verdicts: Map<string, StoredVerdict[]>,
) {
  const claims: ClaimRecord[] = [];
  const reviews: ReviewRecord[] = [];
  const audit: AuditEvent[] = [];
  for (const id of f.claims) {
    const c = await stack.deps.claims.getClaim(id);
    if (!c) continue;
    claims.push(c);
    const r = await stack.deps.reviews.getReview(id);
    if (r) reviews.push(r);
    audit.push(...(await stack.deps.audit.byDfid(c.dfid)));
  }
  const events = journal
    .filter((e) => f.claims.has(String(e.detail.claim_id)))
    .map((e) => ({ detailType: e["detail-type"], detail: e.detail }));
  const orderIds = new Set([
    ...f.plan.orders.map((o) => o.order_id),
    ...claims.flatMap((c) => (c.claim ? [c.claim.order_id] : [])),
    ...reviews.flatMap((r) => (r.order_id ? [r.order_id] : [])),
    ...events.map((e) => String(e.detail.order_id ?? "")),
  ]);
  const scopes = new Set<string | undefined>([undefined, ...claims.map((c) => c.simulation_id)]);
  const ledgers: { scope?: string; entry: LedgerEntry }[] = [];
  for (const orderId of orderIds) {
    if (!orderId) continue;
    for (const scope of scopes) {
      const entry = await stack.deps.ledger.get(orderId, scope);
      // An order another flow shares (an unknown order id a garbled proposal named) holds other flows' claims too.
      if (entry)
        ledgers.push({
          ...(scope ? { scope } : {}),
          entry: {
            ...entry,
            claims: Object.fromEntries(Object.entries(entry.claims).filter(([c]) => f.claims.has(c))),
            pending_reviews: (entry.pending_reviews ?? []).filter((c) => f.claims.has(c)),
            released: (entry.released ?? []).filter((c) => f.claims.has(c)),
          },
        });
    }
  }
  return { claims, verdicts: [...f.claims].flatMap((id) => verdicts.get(id) ?? []), reviews, ledgers, events, audit };
}

/** Messages in the DLQs of the work queues. */
async function deadLetters(stack: LocalStack): Promise<number> {
  let n = 0;
  for (const role of Object.keys(stack.queues) as QueueRole[]) {
    const dlq = stack.queues[role].dlq;
    if (!dlq) continue;
    const out = await stack.clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: dlq.url,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      }),
    );
    n +=
      Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) +
      Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
  }
  return n;
}
