// Who arms a claim's step-deadline timer (PipelineSettings.stepTimers, CLAIMS_STEP_TIMERS): with `lazy`, the default,
// a claim decided in seconds sends no timer message, and a claim whose step was lost is moved on by the sweep's tick,
// which arms the timer from then on; with `eager` the crew's start arms it, as before; a hold ending arms it either way.
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { LlmPort } from "../core/llm/index.ts";
import { bundledConfig, bundledScenarios } from "./bundled-config.test-kit.ts";
import { DEFAULT_PIPELINE_SETTINGS, stepTimersFromEnv } from "./deps.ts";
import type { PipelineSettings } from "./deps.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { handleCrewMessage } from "./orchestrator.ts";
import { handleTimer, sweepStalledClaims } from "./timers.ts";
import { StepTimersSettingError } from "./errors.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
/** The seed's two agents: a claim with a step after the first (the hold's end below arms the timer for it). */
const TWO_AGENTS = bundledConfig(NOW, { crewShape: "two_agents" }).agent;
const scenarios = bundledScenarios();
/** The first bundled scenario: a structured claim the rules model accepts, its refund executed at the decision. */
const CLAIM = (scenarios[0]!.input as { claim: { order_id: string; amount_eur: number } }).claim;
const rules = () => createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility });
const SWEEP = { stalledAfterMs: 300_000, pageSize: 50, maxTicks: 3 };

/** An in-process pipeline whose clock the test moves. */
function pipeline(settings: Partial<PipelineSettings> = {}, llm: LlmPort = rules(), agent = config.agent) {
  const clock = { at: NOW };
  const p = createInProcessPipeline({
    agent,
    orders: config.orders,
    llm,
    clock: { now: () => clock.at },
    settings: { ...DEFAULT_PIPELINE_SETTINGS, ...settings },
  });
  return { p, clock };
}

/** The claim's money as it ended: its verdicts, its executed refunds, and what the order's ledger holds for it. */
async function moneyOf(p: ReturnType<typeof pipeline>["p"], claimId: string) {
  const of = (type: string) =>
    p.publisher.published.filter((e) => e.detailType === type && e.detail.claim_id === claimId);
  const entry = await p.deps.ledger.get(CLAIM.order_id, undefined);
  return {
    verdicts: of("ClaimVerdict").length,
    refunds: of("RefundExecuted").length,
    ledgerCents: entry?.claims[claimId],
    refundedCents: entry?.refunded_cents,
  };
}

const ONE_REFUND = {
  verdicts: 1,
  refunds: 1,
  ledgerCents: CLAIM.amount_eur * 100,
  refundedCents: CLAIM.amount_eur * 100,
};

describe("step timers lazy (the default): the sweep arms a claim's first timer", () => {
  it("decides a structured claim end to end without a timer message", async () => {
    const { p } = pipeline();
    expect(p.deps.settings.stepTimers).toBeUndefined(); // the default settings say nothing: lazy
    const { record } = await p.decide({ claim: CLAIM });
    expect(record).toMatchObject({ status: "DECIDED", verdict: "ACCEPT" });
    expect(p.queues.timers).toEqual([]);
    expect(await moneyOf(p, record!.claim_id)).toEqual(ONE_REFUND);
  });

  it.each([
    ["two_agents", { status: "DECIDED", verdict: "ACCEPT" }, 1],
    ["compact", { status: "NEEDS_REVIEW", reason_code: "CLAIMS_SELF_CHECK_FAILED" }, 0],
  ] as const)(
    "moves on a claim whose step message was lost (%s crew): the sweep's tick times the step out, arms the timer; money once",
    async (crewShape, ended, refunds) => {
      const { p, clock } = pipeline({ stepTimers: "lazy" }, undefined, { ...config.agent, crewShape });
      const submitted = await p.submit({ claim: CLAIM });
      if (!submitted.ok) throw new Error("not submitted");
      const { claimId } = submitted;
      const start = p.queues.take();
      if (start?.queue !== "crew-events") throw new Error("expected the crew start");
      expect(await handleCrewMessage(start.message, p.deps)).toBe("STARTED");
      const lost = p.queues.take(); // dropped before any worker sees it
      if (lost?.queue !== "agent-steps") throw new Error("expected the first step");
      expect(p.queues.size()).toBe(0);
      expect(p.queues.timers).toEqual([]);
      // Before the cutoff the sweep leaves the claim alone; after it, it ticks the claim.
      clock.at = NOW + SWEEP.stalledAfterMs - 1;
      expect((await sweepStalledClaims(p.deps, SWEEP)).ticked).toEqual([]);
      clock.at = NOW + SWEEP.stalledAfterMs + 1;
      expect((await sweepStalledClaims(p.deps, SWEEP)).ticked).toEqual([claimId]);
      const tick = p.queues.take();
      if (tick?.queue !== "crew-events") throw new Error("expected the sweep's tick");
      expect(await handleCrewMessage(tick.message, p.deps)).toBe("ADVANCED");
      // The step past its deadline went to the fixer, whose deadline the claim's timer now watches.
      expect(p.queues.timers).toEqual([
        { queue: "timers", claimId, dueMs: clock.at + DEFAULT_PIPELINE_SETTINGS.timeouts.fixerMs },
      ]);
      await p.drain();
      expect(await p.claims.getClaim(claimId)).toMatchObject(ended);
      const stall = p
        .auditEvents()
        .find((e) => e.event_type === "AGENT_STEP_FAILED" && e.details.claim_id === claimId && e.details.fixer);
      expect(stall?.details.fixer).toMatchObject({ reason: "stall", error: { code: "STEP_TIMEOUT" } });
      const money = await moneyOf(p, claimId);
      expect(money).toMatchObject(refunds === 1 ? ONE_REFUND : { refunds: 0, ledgerCents: undefined });
      // The timer fires after the outcome and is dropped; the lost step turning up late moves no money either.
      expect(await handleTimer({ claim_id: claimId, due_ms: clock.at }, p.deps)).toBe("SETTLED");
      await p.queues.sendAgentSteps([lost.message]);
      await p.drain();
      expect(await moneyOf(p, claimId)).toEqual(money);
      expect(await p.claims.getClaim(claimId)).toMatchObject(ended);
    },
  );

  it("still arms the timer when a hold ends: the model answered a held step, the next deadline is watched", async () => {
    let calls = 0;
    const { p, clock } = pipeline({ llmOutageHoldMs: 3_600_000, stepTimers: "lazy" }, undefined, TWO_AGENTS);
    const model = rules();
    const flaky: LlmPort = {
      ...model,
      complete: async (request) => {
        if (++calls === 1)
          return { ok: false, code: "LLM_UNREACHABLE", message: "down", attempts: 1, model: "m", retryable: true };
        clock.at = NOW + 30_000; // the model is back half a minute later
        return model.complete(request);
      },
    };
    p.deps.llm = flaky;
    const { record } = await p.decide({ claim: CLAIM });
    expect(record).toMatchObject({ status: "DECIDED", verdict: "ACCEPT" });
    expect(p.auditEvents().map((e) => e.event_type)).toEqual(expect.arrayContaining(["CLAIM_HELD", "CLAIM_RESUMED"]));
    // Not the start's (lazy): the hold's end, for the decision step requested after it.
    expect(p.queues.timers).toEqual([
      {
        queue: "timers",
        claimId: record!.claim_id,
        dueMs: NOW + 30_000 + DEFAULT_PIPELINE_SETTINGS.timeouts.decisionMs,
      },
    ]);
  });
});

describe("step timers eager: the crew's start arms the claim's timer, as before", () => {
  it("sends one timer for the first step's deadline at the start, then decides as lazy does", async () => {
    const { p } = pipeline({ stepTimers: "eager" });
    const { record } = await p.decide({ claim: CLAIM });
    expect(record).toMatchObject({ status: "DECIDED", verdict: "ACCEPT" });
    expect(p.queues.timers).toEqual([
      { queue: "timers", claimId: record!.claim_id, dueMs: NOW + DEFAULT_PIPELINE_SETTINGS.timeouts.analystMs },
    ]);
    expect(await moneyOf(p, record!.claim_id)).toEqual(ONE_REFUND);
  });
});

describe("CLAIMS_STEP_TIMERS", () => {
  it.each([
    [undefined, "lazy"],
    ["", "lazy"],
    ["lazy", "lazy"],
    [" Eager ", "eager"],
  ] as const)("reads %j as %s", (raw, mode) => {
    expect(stepTimersFromEnv({ CLAIMS_STEP_TIMERS: raw })).toBe(mode);
  });

  it("refuses any other value, naming the variable and the values it takes", () => {
    expect(() => stepTimersFromEnv({ CLAIMS_STEP_TIMERS: "sometimes" })).toThrow(StepTimersSettingError);
    expect(() => stepTimersFromEnv({ CLAIMS_STEP_TIMERS: "sometimes" })).toThrow(
      /^CLAIMS_STEP_TIMERS must be lazy or eager .*got 'sometimes'$/,
    );
  });
});
