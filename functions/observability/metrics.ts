// Metrics of the handlers (docs/architecture.md's operator needs to see what the system does): Powertools Metrics
// serializes each measurement as a CloudWatch Embedded Metric Format record, and what one invocation measured goes
// to stdout as one EMF line (functions/observability/emf.ts packs the records: as few lines as their values allow), which
// CloudWatch Logs turns into metrics — no API call, no latency. The measurements are taken here, in the shell, by
// wrapping the ports a handler already calls (a claim stored or made final, a refund reserved, a review decided, an
// LLM call), so core/ and pipeline/ stay free of metrics and each handler only names its function. What each metric
// means: app/metrics-catalog.ts.
import { AsyncLocalStorage } from "node:async_hooks";
import { Console } from "node:console";
import { MetricUnit, Metrics } from "@aws-lambda-powertools/metrics";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { toMajor } from "../../core/kernel/money.ts";
import { DEFAULT_REVIEW_DUE_MS } from "../../core/kernel/review.ts";
import type { AuditEvent } from "../../core/integrity/index.ts";
import type { LlmPort, LlmRequest, LlmResult } from "../../core/llm/index.ts";
import type { FunctionKey } from "../../app/manifest.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import type { ReviewRepository, StoredVerdict, VerdictRepository } from "../../pipeline/ports.ts";
import type { DepsSource } from "../composition/compose.ts";
import { LOCAL_METRICS_NAMESPACE, METRICS, METRICS_SERVICE } from "../../app/metrics-catalog.ts";
import type { MetricName, MetricUnitName } from "../../app/metrics-catalog.ts";
import { batchPrice, DEFAULT_PRICE_TABLE, priceOf, usageCostUsd } from "../../core/llm/prices.ts";
import { BATCH_PENDING_CODE } from "../../core/llm/errors.ts";
import { packEmf } from "./emf.ts";
import { keyInvocationHandler } from "../../adapters/vault/invocation-keys.ts";
import type { EmfDocument } from "./emf.ts";

/** The catalogue's units as Powertools spells them. */
const UNITS = {
  Count: MetricUnit.Count,
  Milliseconds: MetricUnit.Milliseconds,
  Seconds: MetricUnit.Seconds,
  None: MetricUnit.NoUnit,
} as const satisfies Record<MetricUnitName, string>;

type Env = Readonly<Record<string, string | undefined>>;

/** One EMF record: metrics and the dimension sets they are published under (besides `service`). */
export interface MetricRecord {
  readonly metrics: Partial<Record<MetricName, number>>;
  readonly dimensions: readonly Readonly<Record<string, string>>[];
  /** Searchable in Logs Insights, not a dimension (e.g. the claim id). */
  readonly metadata?: Readonly<Record<string, string>>;
}

/** Where a handler's metrics go. */
export interface HandlerMetrics {
  /** Records one measurement: written with the rest of its invocation's when that ends (at once outside one). */
  emit(record: MetricRecord): void;
  /** Emits ColdStart on the first invocation of this instance (Powertools keeps the flag). */
  coldStart(): void;
  /** Runs one invocation, then writes what it measured as one EMF line (more only where values differ). */
  invocation?<T>(run: () => Promise<T>): Promise<T>;
}

/** Metrics that go nowhere (local runs, unless they opt in). */
export const NO_METRICS: HandlerMetrics = { emit: () => undefined, coldStart: () => undefined };

/**
 * Whether metrics are written: in Lambda unless POWERTOOLS_METRICS_DISABLED is true; elsewhere only when it
 * is explicitly false (a local run's stdout is the CLI's output, so EMF lines there are opt-in).
 */
function metricsEnabled(env: Env): boolean {
  const flag = env.POWERTOOLS_METRICS_DISABLED?.trim().toLowerCase();
  if (flag === "true" || flag === "1") return false;
  if (flag === "false" || flag === "0") return true;
  return Boolean(env.AWS_LAMBDA_FUNCTION_NAME);
}

/**
 * Powertools' own warnings, except the one it gives for every record published under several dimension sets
 * (they share keys, e.g. Flow, by design): that one would add a log line per metric.
 */
const powertoolsWarnings = {
  debug: () => undefined,
  info: () => undefined,
  warn: (...args: unknown[]) => {
    if (!/is defined as both a dimension set and dimension set/.test(String(args[0]))) console.warn(...args);
  },
  error: (...args: unknown[]) => console.error(...args),
};

/** Powertools Metrics whose cold-start flag (Powertools' own: the first invocation of an on-demand instance) is read here. */
class InvocationMetrics extends Metrics {
  /** True on this instance's cold start, once. */
  takeColdStart(): boolean {
    return this.getColdStart();
  }
}

/**
 * Powertools Metrics for `fn`: namespace from POWERTOOLS_METRICS_NAMESPACE (infra sets `ClaimsCrew/<stage>`), one
 * `service` for all functions. Each invocation's records are kept apart (AsyncLocalStorage: concurrent invocations in
 * one process never mix) and written when it ends, packed into one line where their values allow; the line goes to
 * stdout through a Console of its own, as Powertools writes it (Lambda's JSON log format does not wrap it).
 */
export function createHandlerMetrics(fn: FunctionKey, env: Env = process.env): HandlerMetrics {
  if (!metricsEnabled(env)) return NO_METRICS;
  const functionName = env.AWS_LAMBDA_FUNCTION_NAME || fn;
  const metrics = new InvocationMetrics({
    namespace: env.POWERTOOLS_METRICS_NAMESPACE || LOCAL_METRICS_NAMESPACE,
    serviceName: METRICS_SERVICE,
    functionName,
    logger: powertoolsWarnings,
  });
  const out = new Console({ stdout: process.stdout, stderr: process.stderr });
  // The records of the invocation in whose async context a record is emitted, until the invocation has written them.
  const pending = new AsyncLocalStorage<{ docs: EmfDocument[]; open: boolean }>();
  // Synchronous from the first add to the serialization, so no other record gets in between.
  const serialize = (record: MetricRecord): EmfDocument => {
    try {
      for (const set of record.dimensions) metrics.addDimensions({ ...set });
      for (const [name, value] of Object.entries(record.metrics) as [MetricName, number][]) {
        metrics.addMetric(name, UNITS[METRICS[name].unit], value);
      }
      metrics.addMetadata("function", fn);
      for (const [key, value] of Object.entries(record.metadata ?? {})) metrics.addMetadata(key, value);
      return metrics.serializeMetrics() as unknown as EmfDocument;
    } finally {
      metrics.clearMetrics();
      metrics.clearDimensions();
      metrics.clearMetadata();
    }
  };
  const write = (docs: readonly EmfDocument[]) => {
    for (const line of packEmf(docs)) out.log(JSON.stringify(line));
  };
  const self: HandlerMetrics = {
    emit(record) {
      const doc = serialize(record);
      const invocation = pending.getStore();
      // Outside an invocation, or from work it left running after it ended (written already): at once.
      if (invocation?.open) invocation.docs.push(doc);
      else write([doc]);
    },
    coldStart() {
      if (metrics.takeColdStart())
        self.emit({ metrics: { ColdStart: 1 }, dimensions: [{ function_name: functionName }] });
    },
    async invocation(run) {
      const invocation = { docs: [] as EmfDocument[], open: true };
      try {
        return await pending.run(invocation, run);
      } finally {
        // Whatever the invocation measured before it failed happened (a conditional write succeeded): it counts.
        invocation.open = false;
        if (invocation.docs.length > 0) write(invocation.docs);
      }
    },
  };
  return self;
}

const flowOf = (simulationId: string | undefined) => (simulationId ? "simulation" : "live");

/** The records of a claim that just became final: its outcome, the review it opened, the latency from receipt. */
function finalClaimRecords(record: ClaimRecord): MetricRecord[] {
  const Flow = flowOf(record.simulation_id);
  const metadata = { claim_id: record.claim_id };
  const ReasonCode = record.reason_code ?? "UNKNOWN";
  const latency = Date.parse(record.updated_at) - Date.parse(record.received_at);
  const out: MetricRecord[] = [];
  let Outcome: string;
  if (record.status === "DECIDED") {
    const Verdict = record.verdict ?? "UNKNOWN";
    Outcome = Verdict;
    out.push({
      metrics: { ClaimsDecided: 1 },
      dimensions: [
        { Flow, Verdict },
        { Flow, Verdict, ReasonCode },
      ],
      metadata,
    });
    if (Verdict === "ESCALATE")
      out.push({ metrics: { ReviewsOpened: 1 }, dimensions: [{ Flow, Origin: "ESCALATE" }], metadata });
  } else {
    Outcome = "NEEDS_REVIEW";
    out.push({ metrics: { ClaimsNeedsReview: 1 }, dimensions: [{ Flow }, { Flow, ReasonCode }], metadata });
    out.push({ metrics: { ReviewsOpened: 1 }, dimensions: [{ Flow, Origin: "NEEDS_REVIEW" }], metadata });
  }
  if (Number.isFinite(latency) && latency >= 0)
    out.push({ metrics: { DecisionLatency: latency }, dimensions: [{ Flow }, { Flow, Outcome }], metadata });
  return out;
}

/** A kernel decision the shadow policy decided too (its stored KERNEL_VERDICT audit): 1 when it disagrees with the live verdict, 0 when it agrees. */
function shadowDecisionRecords(event: AuditEvent): MetricRecord[] {
  const shadow = event.event_type === "KERNEL_VERDICT" ? (event.details.shadow as { agrees?: unknown }) : undefined;
  if (typeof shadow?.agrees !== "boolean") return [];
  const simulationId = event.details.simulation_id;
  return [
    {
      metrics: { ShadowDisagreements: shadow.agrees ? 0 : 1 },
      dimensions: [{ Flow: flowOf(typeof simulationId === "string" ? simulationId : undefined) }],
      metadata: { claim_id: String(event.details.claim_id) },
    },
  ];
}

/** The records of one LLM call. */
function llmCallRecords(
  task: string,
  result: Pick<LlmResult<unknown>, "ok" | "usage"> & { code?: string; model?: string },
  latencyMs: number,
  batch = false,
): MetricRecord[] {
  const usage = result.usage;
  // Priced with the built-in price table (docs/llm.md), a Batch API call at its discount; a model it does not name is
  // left out.
  const listed = result.model === undefined ? undefined : priceOf(DEFAULT_PRICE_TABLE, result.model);
  const price = batch && typeof listed === "object" ? batchPrice(listed) : listed;
  const cost = usage && price !== undefined ? { LlmCallCostUsd: usageCostUsd(usage, price) } : {};
  const call: MetricRecord = {
    metrics: {
      LlmCalls: 1,
      LlmCallFailures: result.ok ? 0 : 1,
      LlmCallLatency: latencyMs,
      LlmPromptTokens: usage?.prompt_tokens ?? 0,
      LlmCompletionTokens: usage?.completion_tokens ?? 0,
      ...cost,
    },
    dimensions: [{ Task: task }],
  };
  return result.ok
    ? [call]
    : [call, { metrics: { LlmCallFailures: 1 }, dimensions: [{ Task: task, Code: result.code ?? "UNKNOWN" }] }];
}

/** A stand-in for `target()` whose `overrides` replace some members; every other member is the real one's (ports may grow). */
function override<T extends object>(target: () => T, overrides: Partial<T>): T {
  return new Proxy({} as T, {
    get(_t, prop) {
      if (Object.hasOwn(overrides, prop)) return (overrides as Record<PropertyKey, unknown>)[prop];
      const real = target();
      const value: unknown = Reflect.get(real, prop, real);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(real) : value;
    },
  });
}

/** `deps` whose ports emit the metrics of what they do; the ports themselves are only touched when used. */
function instrumentDeps(deps: PipelineDeps, metrics: HandlerMetrics, now: () => number = Date.now): PipelineDeps {
  const emitAll = (records: readonly MetricRecord[]) => records.forEach((r) => metrics.emit(r));
  const claims = override(() => deps.claims, {
    async createClaim(record, idempotency) {
      const result = await deps.claims.createClaim(record, idempotency);
      if (result.created) {
        const Flow = flowOf(record.simulation_id);
        metrics.emit({
          metrics: { ClaimsReceived: 1 },
          dimensions: [{ Flow }, { Flow, Input: "claim" in record.input ? "claim" : "claim_text" }],
          metadata: { claim_id: record.claim_id },
        });
      }
      return result;
    },
    async updateClaim(claimId, patch, onlyFrom) {
      const result = await deps.claims.updateClaim(claimId, patch, onlyFrom);
      const final = patch.status === "DECIDED" || patch.status === "NEEDS_REVIEW";
      if (final && result.changed && result.record) emitAll(finalClaimRecords(result.record));
      // The claim recorded DECIDED with a verdict proves its publication: its shadow decision counts now.
      if (patch.status === "DECIDED" && result.changed && patch.verdict_id)
        emitShadow(keyOfVerdict.get(patch.verdict_id));
      return result;
    },
  });
  const ledger = override(() => deps.ledger, {
    async reserve(request) {
      const result = await deps.ledger.reserve(request);
      if (result.ok) {
        const dims = {
          Flow: flowOf(request.scope),
          AuthorisedBy: request.mode.kind === "automatic" ? "kernel" : "reviewer",
        };
        // Each currency apart (no FX): the EUR metric counts EUR orders only, the per-currency one every order.
        const currency = request.currency ?? "EUR";
        const amount = toMajor({ minor: request.cents, currency });
        metrics.emit({
          metrics: { RefundsExecuted: 1, ...(currency === "EUR" ? { RefundedAmountEur: amount } : {}) },
          dimensions: [dims],
          metadata: { claim_id: request.claimId },
        });
        metrics.emit({
          metrics: { RefundedAmount: amount },
          dimensions: [{ ...dims, Currency: currency }],
          metadata: { claim_id: request.claimId },
        });
      }
      return result;
    },
  });
  const reviews = override<ReviewRepository>(() => deps.reviews, {
    async updateReview(next) {
      const result = await deps.reviews.updateReview(next);
      if (result.changed && next.status !== "PENDING") {
        metrics.emit({
          metrics: { ReviewsDecided: 1 },
          dimensions: [{ Flow: flowOf(next.simulation_id), Decision: next.status }],
          metadata: { claim_id: next.claim_id },
        });
      }
      return result;
    },
  });
  const measuredLlm = (port: () => LlmPort, batch: boolean) =>
    override<LlmPort>(port, {
      async complete<T>(request: LlmRequest<T>): Promise<LlmResult<T>> {
        const started = now();
        try {
          const result = await port().complete(request);
          // A Batch API call whose batch has not answered yet made no model call: nothing to count until it does.
          if (result.ok || result.code !== BATCH_PENDING_CODE)
            emitAll(
              llmCallRecords(
                request.task,
                {
                  ok: result.ok,
                  usage: result.usage,
                  model: result.model,
                  ...(result.ok ? {} : { code: result.code }),
                },
                now() - started,
                batch,
              ),
            );
          return result;
        } catch (error) {
          emitAll(llmCallRecords(request.task, { ok: false, usage: undefined, code: "EXCEPTION" }, now() - started));
          throw error;
        }
      },
    });
  const llm = measuredLlm(() => deps.llm, false);
  const batchLlm = deps.batchLlm === undefined ? undefined : measuredLlm(() => deps.batchLlm!, true);
  // The shadow policy's verdict is only in the stored verdict's audit. It is counted once per stored verdict: by
  // the one call that proves it published — the claim's update to DECIDED with it, or else the call that marks it
  // published (a redelivered or racing publish appends the same audit again, and counts nothing). The records are
  // taken from the verdict as last read, stored or settled under its key.
  const shadowOf = new Map<string, MetricRecord[]>();
  const keyOfVerdict = new Map<string, string>();
  const seen = (stored: StoredVerdict | undefined) => {
    if (!stored) return stored;
    shadowOf.delete(stored.idempotency_key);
    if (stored.published) return stored; // counted by the call that marked it
    shadowOf.set(stored.idempotency_key, (stored.audit ?? []).flatMap(shadowDecisionRecords));
    keyOfVerdict.set(stored.record.verdict_id, stored.idempotency_key);
    if (shadowOf.size > 1_000) shadowOf.delete(shadowOf.keys().next().value!);
    if (keyOfVerdict.size > 1_000) keyOfVerdict.delete(keyOfVerdict.keys().next().value!);
    return stored;
  };
  const emitShadow = (key: string | undefined) => {
    const records = key === undefined ? undefined : shadowOf.get(key);
    if (key !== undefined) shadowOf.delete(key);
    if (records) emitAll(records);
  };
  const verdicts = override<VerdictRepository>(() => deps.verdicts, {
    getVerdict: async (key) => seen(await deps.verdicts.getVerdict(key)),
    putVerdictOnce: async (verdict) => seen(await deps.verdicts.putVerdictOnce(verdict))!,
    recordExecution: async (key, outcome) => seen(await deps.verdicts.recordExecution(key, outcome))!,
    async markPublished(key) {
      const marked = await deps.verdicts.markPublished(key);
      if (marked) emitShadow(key);
      return marked;
    },
  });
  return { ...deps, claims, ledger, reviews, llm, ...(batchLlm ? { batchLlm } : {}), verdicts };
}

/**
 * A handler's metrics: the pending reviews, per flow, the sweep reports every run — how many, the oldest's wait, and
 * how many are past their due time (`requested_at` + `dueMs`, the policy's review_due_days / review_due_hours).
 */
export async function reviewBacklogRecords(
  reviews: Pick<ReviewRepository, "listReviews">,
  nowMs: number,
  cap = 1_000,
  dueMs = DEFAULT_REVIEW_DUE_MS,
): Promise<MetricRecord[]> {
  const backlog = {
    live: { count: 0, oldest: nowMs, overdue: 0 },
    simulation: { count: 0, oldest: nowMs, overdue: 0 },
  };
  let seen = 0;
  let cursor: string | undefined;
  do {
    const page = await reviews.listReviews({ status: "PENDING", limit: 200, ...(cursor ? { cursor } : {}) });
    for (const review of page.items) {
      const flow = backlog[flowOf(review.simulation_id)];
      flow.count++;
      flow.oldest = Math.min(flow.oldest, Date.parse(review.requested_at));
      if (Date.parse(review.requested_at) + dueMs < nowMs) flow.overdue++;
    }
    seen += page.items.length;
    cursor = page.nextCursor;
  } while (cursor && seen < cap);
  return (["live", "simulation"] as const).map((Flow) => ({
    metrics: {
      PendingReviews: Math.min(backlog[Flow].count, cap),
      OldestPendingReviewAge: Math.max(0, Math.round((nowMs - backlog[Flow].oldest) / 1000)),
      OverdueReviews: Math.min(backlog[Flow].overdue, cap),
    },
    dimensions: [{ Flow }],
  }));
}

/**
 * Builds a measured handler for `fn`: the handler `build` makes gets instrumented dependencies (and the
 * metrics, for what it reports itself), and every invocation first records a cold start if it is one.
 */
export function measured<H extends (...args: never[]) => Promise<unknown>>(
  fn: FunctionKey,
  getDeps: DepsSource,
  metrics: HandlerMetrics | undefined,
  build: (deps: DepsSource, metrics: HandlerMetrics) => H,
): H {
  const sink = metrics ?? createHandlerMetrics(fn);
  const wrapped = new WeakMap<PipelineDeps, PipelineDeps>();
  const deps: DepsSource = async () => {
    const real = await getDeps();
    let instrumented = wrapped.get(real);
    if (!instrumented) {
      instrumented = instrumentDeps(real, sink);
      wrapped.set(real, instrumented);
    }
    return instrumented;
  };
  // Each invocation remembers the data keys it read until it ends (adapters/vault/invocation-keys.ts).
  return keyInvocationHandler(withColdStart(build(deps, sink), sink)) as unknown as H;
}

/**
 * `handler`, recording a cold start on its first invocation (for handlers without pipeline dependencies, like the
 * authorizers), each invocation's measurements written together when it ends.
 */
export function withColdStart<H extends (...args: never[]) => Promise<unknown>>(
  handler: H,
  metrics: HandlerMetrics,
): H {
  const invoke = async (...args: Parameters<H>) => {
    metrics.coldStart();
    return handler(...args);
  };
  return (async (...args: Parameters<H>) =>
    metrics.invocation ? metrics.invocation(() => invoke(...args)) : invoke(...args)) as H;
}
