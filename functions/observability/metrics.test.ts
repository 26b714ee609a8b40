// One EMF line per invocation: what a handler measured is written when the invocation ends, concurrent invocations
// apart. The kernel's shadow-policy metric: each verdict decided with a shadow policy counts 1 when the shadow policy
// disagrees and 0 when it agrees, once per stored verdict — a redelivered or racing publish of the same verdict
// (which appends its audit again) counts nothing more; a verdict without a shadow counts nothing.
import { afterEach, describe, expect, it, vi } from "vitest";
import { createRulesModel } from "../../core/agents/rules-model.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { createInProcessPipeline } from "../../pipeline/in-process.ts";
import { handleProposal } from "../../pipeline/kernel-service.ts";
import type { ProposalMessage } from "../../pipeline/messages.ts";
import { handleCrewMessage } from "../../pipeline/orchestrator.ts";
import { handleAgentStep } from "../../pipeline/worker.ts";
import { createHandlerMetrics, measured, reviewBacklogRecords, withColdStart } from "./metrics.ts";
import { createInMemoryReviewRepository } from "../../pipeline/in-memory.ts";
import type { HandlerMetrics } from "./metrics.ts";
import { bundledConfig } from "../../pipeline/bundled-config.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
const ACCEPT = {
  claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Screen is dead on arrival" },
};
/** A shadow policy that refunds no category: it disagrees with every ACCEPT of the live one. */
const REFUNDS_NOTHING = {
  ...config.agent,
  contract: { ...config.agent.contract, allowed_refund_categories: ["none"] },
};

/** A pipeline (live policy + `shadow`) whose claim has run up to its proposal: the message, not yet handled. */
async function atProposal(shadow: typeof config.agent | undefined, body: object = ACCEPT) {
  const p = createInProcessPipeline({
    agent: { ...config.agent, ...(shadow ? { shadow } : {}) },
    orders: config.orders,
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock: { now: () => NOW },
  });
  const submitted = await p.submit(body, { claimId: "clm_m" });
  if (!submitted.ok) throw new Error(submitted.message);
  for (let work = p.queues.take(); work; work = p.queues.take()) {
    if (work.queue === "crew-events") await handleCrewMessage(work.message, p.deps);
    else if (work.queue === "agent-steps") await handleAgentStep(work.message, p.deps);
    else if (work.queue === "proposals") return { p, message: work.message };
  }
  throw new Error("the claim never reached the kernel");
}

/** The kernel handler measured as the kernel function measures it, over `deps`; what it emitted. */
function measuredKernel(deps: PipelineDeps) {
  const emitted: Parameters<HandlerMetrics["emit"]>[0][] = [];
  const sink: HandlerMetrics = { emit: (r) => emitted.push(r), coldStart: () => undefined };
  const handle = measured(
    "kernel",
    async () => deps,
    sink,
    (source) => async (message: ProposalMessage) => handleProposal(message, await source()),
  );
  const shadowCounts = () => emitted.filter((r) => "ShadowDisagreements" in r.metrics);
  return { handle, shadowCounts };
}

/** `fn` that fails its first call before doing anything (a crash), then works. */
function failOnce<A extends unknown[], R>(fn: (...a: A) => Promise<R>): (...a: A) => Promise<R> {
  let failed = false;
  return (...a) => {
    if (failed) return fn(...a);
    failed = true;
    return Promise.reject(new Error("injected crash"));
  };
}

describe("the shadow policy's metric", () => {
  it("counts a disagreement once when a crash before the claim is recorded DECIDED makes its publish redelivered", async () => {
    const { p, message } = await atProposal(REFUNDS_NOTHING);
    const deps = {
      ...p.deps,
      claims: { ...p.deps.claims, updateClaim: failOnce(p.deps.claims.updateClaim) },
    };
    const kernel = measuredKernel(deps);
    await expect(kernel.handle(message)).rejects.toThrow("injected crash");
    await kernel.handle(message); // the redelivery publishes the stored verdict again, audit and all
    await kernel.handle(message); // and a later one finds it published
    expect(p.publisher.published.filter((e) => e.detailType === "ClaimVerdict")).toHaveLength(2);
    expect(kernel.shadowCounts()).toEqual([
      { metrics: { ShadowDisagreements: 1 }, dimensions: [{ Flow: "live" }], metadata: { claim_id: "clm_m" } },
    ]);
  });

  it("counts a disagreement once, by the mark, when the claim moved on before taking its verdict", async () => {
    const { p, message } = await atProposal(REFUNDS_NOTHING);
    const deps = {
      ...p.deps,
      publisher: {
        async publish(entries: Parameters<typeof p.publisher.publish>[0]) {
          await p.publisher.publish(entries);
          await p.claims.updateClaim("clm_m", { status: "NEEDS_REVIEW", reason_code: "STALLED" }, ["RUNNING"]);
        },
      },
    };
    const kernel = measuredKernel(deps);
    await kernel.handle(message);
    await kernel.handle(message);
    expect(p.verdicts.all()[0]?.published).toBe(true);
    expect(kernel.shadowCounts().map((r) => r.metrics)).toEqual([{ ShadowDisagreements: 1 }]);
  });

  it("counts a verdict once when two deliveries of its proposal race", async () => {
    const { p, message } = await atProposal(REFUNDS_NOTHING);
    const kernel = measuredKernel(p.deps);
    await Promise.all([kernel.handle(message), kernel.handle(message)]);
    expect(kernel.shadowCounts()).toHaveLength(1);
    expect(kernel.shadowCounts()[0]?.metrics).toEqual({ ShadowDisagreements: 1 });
  });

  it("counts 0 for a shadow policy that agrees, per flow, and nothing without a shadow policy", async () => {
    const agreeing = await atProposal(config.agent, { ...ACCEPT, simulation_id: "sim_1" });
    const agrees = measuredKernel(agreeing.p.deps);
    await agrees.handle(agreeing.message);
    expect(agrees.shadowCounts()).toEqual([
      { metrics: { ShadowDisagreements: 0 }, dimensions: [{ Flow: "simulation" }], metadata: { claim_id: "clm_m" } },
    ]);
    const plain = await atProposal(undefined);
    const none = measuredKernel(plain.p.deps);
    await none.handle(plain.message);
    expect(none.shadowCounts()).toEqual([]);
  });
});

describe("one EMF line per invocation", () => {
  const written: string[] = [];
  const ENV = { POWERTOOLS_METRICS_DISABLED: "false", AWS_LAMBDA_FUNCTION_NAME: "claims-crew-test-kernel" };
  const emfLines = () =>
    written
      .join("")
      .split("\n")
      .filter((l) => l.includes('"_aws"'))
      .map(
        (l) =>
          JSON.parse(l) as Record<string, unknown> & { _aws: { CloudWatchMetrics: { Metrics: { Name: string }[] }[] } },
      );
  const names = (line: ReturnType<typeof emfLines>[number]) =>
    line._aws.CloudWatchMetrics.flatMap((d) => d.Metrics.map((m) => m.Name));
  const capture = () => {
    written.length = 0;
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
      return true;
    });
  };
  afterEach(() => vi.restoreAllMocks());

  const record = (claimId: string, metrics: Record<string, number>, dims: Record<string, string>[]) => ({
    metrics,
    dimensions: dims,
    metadata: { claim_id: claimId },
  });

  it("writes a claim's records when its invocation ends, as one line, and concurrent invocations apart", async () => {
    capture();
    const metrics = createHandlerMetrics("kernel", ENV);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const handler = withColdStart(async (claimId: string) => {
      metrics.emit(record(claimId, { ClaimsDecided: 1 }, [{ Flow: "live", Verdict: "ACCEPT" }]));
      await gate; // the other invocation emits meanwhile
      metrics.emit(record(claimId, { DecisionLatency: 5 }, [{ Flow: "live" }, { Flow: "live", Outcome: "ACCEPT" }]));
      return claimId;
    }, metrics);
    const both = Promise.all([handler("clm_a"), handler("clm_b")]);
    await Promise.resolve();
    expect(emfLines()).toEqual([]); // nothing before an invocation ends
    release();
    await both;
    const lines = emfLines();
    expect(lines.map((l) => l.claim_id).sort()).toEqual(["clm_a", "clm_b"]);
    for (const line of lines) expect(names(line).sort()).toEqual(["ClaimsDecided", "DecisionLatency"]);
  });

  it("writes what a failing invocation measured before it failed", async () => {
    capture();
    const metrics = createHandlerMetrics("kernel", ENV);
    const handler = withColdStart(async () => {
      metrics.emit(record("clm_f", { RefundsExecuted: 1 }, [{ Flow: "live", AuthorisedBy: "kernel" }]));
      throw new Error("after the reservation");
    }, metrics);
    await expect(handler()).rejects.toThrow("after the reservation");
    expect(emfLines().map(names)).toEqual([["RefundsExecuted"]]);
  });

  it("writes at once what work an invocation left running measures after it ended", async () => {
    capture();
    const metrics = createHandlerMetrics("kernel", ENV);
    let late!: Promise<void>;
    await withColdStart(async () => {
      late = (async () => {
        await new Promise((r) => setImmediate(r));
        metrics.emit(record("clm_late", { ClaimsDecided: 1 }, [{ Flow: "live", Verdict: "ACCEPT" }]));
      })();
    }, metrics)();
    expect(emfLines()).toEqual([]);
    await late;
    expect(emfLines().map((l) => l.claim_id)).toEqual(["clm_late"]);
  });

  it("puts the cold start in the first invocation's line", async () => {
    capture();
    const metrics = createHandlerMetrics("kernel", { ...ENV });
    vi.stubEnv("AWS_LAMBDA_INITIALIZATION_TYPE", "on-demand");
    const cold = createHandlerMetrics("kernel", ENV);
    vi.unstubAllEnvs();
    const handle = (m: typeof metrics) =>
      withColdStart(async () => {
        m.emit(record("clm_c", { ClaimsDecided: 1 }, [{ Flow: "live", Verdict: "REJECT" }]));
      }, m);
    await handle(cold)();
    await handle(cold)();
    await handle(metrics)(); // not an on-demand instance: no cold start (Powertools' rule)
    expect(emfLines().map(names)).toEqual([["ColdStart", "ClaimsDecided"], ["ClaimsDecided"], ["ClaimsDecided"]]);
    expect(emfLines()[0]).toMatchObject({ function_name: "claims-crew-test-kernel", function: "kernel" });
  });
});

describe("the review backlog the sweep reports", () => {
  it("counts pending reviews, the oldest's wait and those past their due time, per flow", async () => {
    const now = Date.parse("2026-06-03T12:00:00Z");
    const review = (claim: string, requestedAt: string, simulation?: string) =>
      ({
        review_id: `rev_${claim}`,
        claim_id: claim,
        dfid: `dfid_${claim}`,
        origin: "ESCALATE",
        status: "PENDING",
        reason_code: "AMOUNT_ABOVE_LIMIT",
        reason: "r",
        requested_at: requestedAt,
        version: 1,
        ...(simulation ? { simulation_id: simulation } : {}),
      }) as const;
    const repo = createInMemoryReviewRepository();
    await repo.openReview(review("a", "2026-06-01T11:00:00.000Z")); // 49 h ago: overdue at 48 h
    await repo.openReview(review("b", "2026-06-01T13:00:00.000Z")); // 47 h ago
    await repo.openReview(review("c", "2026-06-01T12:00:00.000Z")); // exactly 48 h: due now, not past it
    await repo.openReview(review("d", "2026-05-01T00:00:00.000Z", "sim_1"));
    const records = await reviewBacklogRecords(repo, now);
    expect(records.map((r) => [r.dimensions[0], r.metrics])).toEqual([
      [{ Flow: "live" }, { PendingReviews: 3, OldestPendingReviewAge: 49 * 3600, OverdueReviews: 1 }],
      [{ Flow: "simulation" }, { PendingReviews: 1, OldestPendingReviewAge: expect.any(Number), OverdueReviews: 1 }],
    ]);
    const dueIn6h = await reviewBacklogRecords(repo, now, 1_000, 6 * 3_600_000);
    expect(dueIn6h[0]!.metrics.OverdueReviews).toBe(3);
  });
});

describe("a model call's metrics through the Batch API", () => {
  it("counts no call while the batch has not answered, and prices the answer at half the list price", async () => {
    const usage = { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100, estimated: false };
    const answers = [
      {
        ok: false,
        code: "LLM_BATCH_PENDING",
        message: "batch b is in_progress",
        attempts: 1,
        model: "gpt-4o-mini",
        retryable: true,
      },
      { ok: true, value: "fine", text: "fine", usage, attempts: 1, model: "gpt-4o-mini", warnings: [], via: "batch" },
    ] as const;
    const port = { provider: "openai" as const, model: "gpt-4o-mini", complete: async () => answers[calls++]! };
    let calls = 0;
    const deps = { llm: port, batchLlm: port } as unknown as PipelineDeps;
    const emitted: Parameters<HandlerMetrics["emit"]>[0][] = [];
    const sink: HandlerMetrics = { emit: (r) => emitted.push(r), coldStart: () => undefined };
    const handle = measured(
      "worker",
      async () => deps,
      sink,
      (source) => async () => {
        const d = await source();
        const request = { task: "decide_claim" as const, system: "s", messages: [] };
        await d.batchLlm!.complete(request);
        await d.batchLlm!.complete(request);
      },
    );
    await handle();
    const llm = emitted.filter((r) => "LlmCalls" in r.metrics);
    expect(llm).toHaveLength(1);
    expect(llm[0]!.metrics.LlmCallFailures).toBe(0);
    expect(llm[0]!.metrics.LlmCallCostUsd).toBeCloseTo((1000 * 0.075 + 100 * 0.3) / 1e6, 12);
  });
});
