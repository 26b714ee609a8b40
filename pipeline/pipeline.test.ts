import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { LlmPort } from "../core/llm/index.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import { createInProcessPipeline, handleWork } from "./in-process.ts";
import { handleCrewMessage, handleCrewMessages } from "./orchestrator.ts";
import { handleAgentStep } from "./worker.ts";
import { handleTimer } from "./timers.ts";
import { DEFAULT_PIPELINE_SETTINGS } from "./deps.ts";
import { bundledConfig, bundledScenarios } from "./bundled-config.test-kit.ts";
import { orderTotalMajor } from "../core/kernel/order-view.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
/** The seed's two-agent crew (`crew_shape: two_agents`): the tests of its steps, ticks and fixer stand-ins use it. */
const TWO_AGENTS = bundledConfig(NOW, { crewShape: "two_agents" }).agent;
const scenarios = bundledScenarios();
const rules = () => createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility });

/** A model that always answers 500 (after its retries). */
const FAILING_MODEL: LlmPort = {
  provider: "openai",
  model: "down",
  complete: async () => ({
    ok: false,
    code: "LLM_SERVER_ERROR",
    message: "the model answered 500",
    attempts: 3,
    model: "down",
    retryable: true,
  }),
};

/** The crew's start arms the claim's step timer (CLAIMS_STEP_TIMERS=eager), for the tests about that timer. */
const EAGER_TIMERS = { ...DEFAULT_PIPELINE_SETTINGS, stepTimers: "eager" as const };

/** A pipeline on the rules model and the clock `now` (eager step timers), the first bundled scenario submitted (not yet run). */
async function submitFirstScenario(now: () => number) {
  const p = createInProcessPipeline({
    agent: TWO_AGENTS,
    orders: config.orders,
    llm: rules(),
    clock: { now },
    settings: EAGER_TIMERS,
  });
  const submitted = await p.submit({ claim: (scenarios[0]!.input as { claim: object }).claim });
  return { p, claimId: submitted.ok ? submitted.claimId : "" };
}

function pipeline(llm: LlmPort = rules(), agent: typeof config.agent = config.agent) {
  return createInProcessPipeline({ agent, orders: config.orders, llm, clock: { now: () => NOW } });
}

function bodyOf(s: (typeof scenarios)[number]) {
  return "claim" in s.input
    ? { claim: s.input.claim }
    : { claim_text: s.input.claim_text.replace(/\{\{date:[^}]+\}\}/g, "29 May 2026") };
}

async function runAll(p = pipeline()) {
  const results = [];
  for (const s of scenarios) {
    const { submit, record } = await p.decide({ ...bodyOf(s), simulation_id: "sim_test" }, { claimId: `clm_${s.id}` });
    results.push({ s, submit, record });
  }
  return { p, results };
}

describe("the in-process pipeline with the rules model", () => {
  it("decides every bundled scenario as expected, reason code included", async () => {
    const { results } = await runAll();
    for (const { s, record } of results) {
      const outcome = record?.status === "NEEDS_REVIEW" ? "NEEDS_REVIEW" : record?.verdict;
      expect({ id: s.id, outcome, reason: s.expected.reason_code ? record?.reason_code : undefined }).toEqual({
        id: s.id,
        outcome: s.expected.verdict,
        reason: s.expected.reason_code,
      });
    }
  });

  it("executes accepted refunds once and never refunds more than an order's amount", async () => {
    const { p, results } = await runAll();
    const refunds = p.publisher.published.filter((e) => e.detailType === "RefundExecuted");
    const accepted = results.filter((r) => r.record?.verdict === "ACCEPT");
    // An ACCEPT that asks the item back (the bundled sports gear, docs/returns.md) announces its return instead: its
    // refund executes once the item is back, never at the decision.
    const awaiting = accepted.filter((r) => r.record!.status === "AWAITING_RETURN").map((r) => r.record!.claim_id);
    expect(awaiting).toHaveLength(3);
    const asked = p.publisher.published.filter((e) => e.detailType === "ReturnRequested");
    expect(asked.map((r) => r.detail.claim_id).sort()).toEqual([...awaiting].sort());
    // An ACCEPT given as an exchange (docs/returns.md#outcomes) moves no money: ExchangeRequested, never a refund.
    const exchanged = accepted.filter((r) => r.record!.outcome === "EXCHANGE").map((r) => r.record!.claim_id);
    expect(exchanged).toHaveLength(1);
    const exchanges = p.publisher.published.filter((e) => e.detailType === "ExchangeRequested");
    expect(exchanges.map((r) => r.detail.claim_id)).toEqual(exchanged);
    expect(refunds.map((r) => r.detail.claim_id).sort()).toEqual(
      accepted
        .map((r) => r.record!.claim_id)
        .filter((id) => !awaiting.includes(id) && !exchanged.includes(id))
        .sort(),
    );
    const byOrder = new Map<string, number>();
    for (const r of refunds)
      byOrder.set(
        String(r.detail.order_id),
        // In the order's currency: `amount` (amount_eur only for EUR orders, docs/events.md).
        (byOrder.get(String(r.detail.order_id)) ?? 0) + Number((r.detail.amount as { value: string }).value),
      );
    for (const [orderId, total] of byOrder)
      expect(total).toBeLessThanOrEqual(orderTotalMajor(config.orders.find((o) => o.order_id === orderId)!));
  });

  it("publishes one ClaimVerdict per decided claim with a stable verdict_id, and ClaimNeedsReview for the rest", async () => {
    const { p, results } = await runAll();
    const verdicts = p.publisher.published.filter((e) => e.detailType === "ClaimVerdict");
    // A claim waiting for its item (AWAITING_RETURN, docs/returns.md) is decided: its verdict is published too.
    const decided = results.filter((r) => r.record?.status === "DECIDED" || r.record?.status === "AWAITING_RETURN");
    expect(verdicts).toHaveLength(decided.length);
    expect(new Set(verdicts.map((v) => v.detail.verdict_id)).size).toBe(verdicts.length);
    for (const r of decided)
      expect(verdicts.find((v) => v.detail.claim_id === r.record!.claim_id)?.detail.verdict_id).toBe(
        r.record!.verdict_id,
      );
    const reviews = p.publisher.published
      .filter((e) => e.detailType === "ClaimNeedsReview")
      .map((e) => e.detail.claim_id);
    expect(reviews).toEqual(results.filter((r) => r.record?.status === "NEEDS_REVIEW").map((r) => r.record!.claim_id));
  });

  it("replays every decided claim from its audit byte for byte, without a model", async () => {
    const { p, results } = await runAll();
    const events = p.auditEvents();
    for (const { s, record } of results) {
      if (record?.status !== "DECIDED") continue;
      const replay = replayClaim(record.claim_id, events);
      expect(replay.status, `${s.id}: ${JSON.stringify(replay)}`).toBe("IDENTICAL");
      expect(replay.outcome).toBe(record.verdict);
    }
  });

  it("detects a tampered audit: a changed agent answer no longer reproduces the verdict", async () => {
    const { p, results } = await runAll();
    const a = results.find((r) => r.s.id === "A")!.record!;
    const events = p.auditEvents().map((e) => {
      const inbound = e.details.inbound as { output?: { amount_eur?: number } } | undefined;
      if (
        e.details.claim_id === a.claim_id &&
        e.event_type === "AGENT_STEP" &&
        inbound?.output?.amount_eur !== undefined
      )
        inbound.output.amount_eur = 10;
      return e;
    });
    const replay = replayClaim(a.claim_id, events);
    expect(replay.status).toBe("DIFFERENT");
  });

  it("writes the proposal with the claim's final update only: the crew's last step writes nothing to the claim", async () => {
    const p = pipeline();
    const updates: { claimId: string; patch: Record<string, unknown> }[] = [];
    const update = p.deps.claims.updateClaim.bind(p.deps.claims);
    p.deps.claims.updateClaim = (claimId, patch, onlyFrom) => {
      updates.push({ claimId, patch: { ...patch } });
      return update(claimId, patch, onlyFrom);
    };
    const { results } = await runAll(p);
    const events = p.auditEvents();
    let withProposal = 0;
    for (const { s, record } of results) {
      const mine = updates.filter((u) => u.claimId === record!.claim_id);
      // The crew's output the audit keeps: passed the self-check (AGENT_DECISION) or failed it.
      const decision = events.find(
        (e) =>
          e.details.claim_id === record!.claim_id &&
          (e.event_type === "AGENT_DECISION" || e.event_type === "CLAIMS_SELF_CHECK_FAILED"),
      );
      const written = mine.filter((u) => "proposal" in u.patch);
      if (!decision) {
        expect(record!.proposal, s.id).toBeUndefined();
        expect(written, s.id).toEqual([]);
        continue;
      }
      withProposal++;
      // One write carries it, and it is the one that makes the claim final.
      expect(
        written.map((u) => u.patch.status),
        s.id,
      ).toEqual([record!.status]);
      // The output the crew's step wrote before, byte for byte (the claim view shows it as it is).
      expect(JSON.stringify(record!.proposal), s.id).toBe(JSON.stringify(decision.details.output));
      // Nothing moves it between its start and its final update: the crew's last step writes nothing. A structured
      // claim is stored RUNNING at intake and its crew's start writes nothing to it either (issue 37): its one
      // update with a status is the final one; a free-text claim's extraction moves it to RUNNING first.
      const moves = mine.filter((u) => "updated_at" in u.patch).map((u) => u.patch.status);
      expect(moves, s.id).toEqual("claim" in record!.input ? [record!.status] : ["RUNNING", record!.status]);
    }
    expect(withProposal).toBeGreaterThan(10);
  });

  it("keeps a claim RUNNING without its proposal while the proposal waits for the kernel, then final with it", async () => {
    let now = NOW;
    const { p, claimId } = await submitFirstScenario(() => now);
    let work = p.queues.take();
    for (; work && work.queue !== "proposals"; work = p.queues.take()) {
      now += 1000;
      await handleWork(work, p.deps);
    }
    expect(work?.queue).toBe("proposals");
    const waiting = await p.claims.getClaim(claimId);
    expect(waiting).toMatchObject({ status: "RUNNING" });
    expect(waiting?.proposal).toBeUndefined();
    now += 60_000;
    await handleWork(work!, p.deps);
    await p.drain();
    const decided = await p.claims.getClaim(claimId);
    expect(decided).toMatchObject({
      status: "DECIDED",
      verdict: "ACCEPT",
      proposal: { action: "REFUND", order_id: "ord_001" },
      updated_at: new Date(now).toISOString(),
    });
  });

  it("gives the same verdicts on a second run with the same clock", async () => {
    const first = (await runAll()).results.map((r) => [
      r.record?.claim_id,
      r.record?.verdict,
      r.record?.verdict_id,
      r.record?.reason,
    ]);
    const second = (await runAll()).results.map((r) => [
      r.record?.claim_id,
      r.record?.verdict,
      r.record?.verdict_id,
      r.record?.reason,
    ]);
    expect(second).toEqual(first);
  });

  it("refuses invalid input with located issues and stores nothing", async () => {
    const p = pipeline();
    const bad = await p.submit({ claim: { order_id: "", amount_eur: "12", category: "home" } });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.code === "INVALID_INPUT" && bad.issues.map((i) => i.path)).toEqual(
      expect.arrayContaining(["claim.order_id", "claim.amount_eur"]),
    );
    const both = await p.submit({ claim: scenarios[0]!.input, claim_text: "x" });
    expect(both.ok).toBe(false);
    expect(p.claims.all()).toHaveLength(0);
    expect(p.auditEvents()).toHaveLength(0);
  });

  it("returns the first claim for a repeated Idempotency-Key and refuses the key with another body", async () => {
    const p = pipeline();
    const body = bodyOf(scenarios[0]!);
    const first = await p.decide(body, { idempotencyKey: "k1" });
    const again = await p.decide(body, { idempotencyKey: "k1" });
    const other = await p.submit(
      { claim: { ...(body as { claim: object }).claim, amount_eur: 1 } },
      { idempotencyKey: "k1" },
    );
    expect(again.submit.ok && first.submit.ok && again.submit.claimId).toBe(first.submit.ok && first.submit.claimId);
    expect(other.ok ? "ok" : other.code).toBe("IDEMPOTENCY_CONFLICT");
    expect(p.publisher.published.filter((e) => e.detailType === "RefundExecuted")).toHaveLength(1);
  });

  it("ends a claim in NEEDS_REVIEW when the model cannot produce a proposal (analyst, decision maker and fixer all fail)", async () => {
    const p = pipeline(FAILING_MODEL);
    const { record } = await p.decide({ claim: (scenarios[0]!.input as { claim: object }).claim });
    expect(record?.status).toBe("NEEDS_REVIEW");
    expect(record?.reason_code).toBe("CREW_FAILED");
    expect(p.publisher.published.map((e) => e.detailType)).toEqual([
      "ClaimNeedsReview",
      "ReviewRequested",
      "ReviewOpened",
    ]);
    expect(p.auditEvents().some((e) => e.event_type === "CREW_FAILED")).toBe(true);
  });

  it("names an unreachable model as the reason, not the crew", async () => {
    const down: LlmPort = {
      provider: "openai",
      model: "down",
      complete: async () => ({
        ok: false,
        code: "LLM_UNREACHABLE",
        message: "LLM endpoint http://localhost:11434/v1 is unreachable: ECONNREFUSED",
        attempts: 3,
        model: "down",
        retryable: true,
      }),
    };
    const p = pipeline(down);
    const structured = await p.decide({ claim: (scenarios[0]!.input as { claim: object }).claim });
    const text = await p.decide({ claim_text: "I bought ord_001 for 299.99 EUR, the screen is dead" });
    for (const { record } of [structured, text]) {
      expect(record).toMatchObject({ status: "NEEDS_REVIEW", reason_code: "LLM_UNREACHABLE" });
      expect(record?.reason).toContain("LLM endpoint http://localhost:11434/v1 is unreachable: ECONNREFUSED");
    }
  });

  it("lets the fixer stand in when only the decision maker fails", async () => {
    const model = rules();
    const flaky: LlmPort = {
      ...model,
      complete: (req) =>
        (req.task === "decide_refund"
          ? Promise.resolve({
              ok: false,
              code: "LLM_INVALID_JSON",
              message: "not JSON",
              attempts: 1,
              model: "x",
              retryable: false,
            })
          : model.complete(req)) as never,
    };
    const p = pipeline(flaky, TWO_AGENTS);
    const { record } = await p.decide({ claim: (scenarios[0]!.input as { claim: object }).claim });
    expect(record?.status).toBe("DECIDED");
    expect(p.auditEvents().some((e) => e.event_type === "AGENT_STEP_FAILED" && e.details.fixer !== undefined)).toBe(
      true,
    );
  });

  it("sends a self-check failure to NEEDS_REVIEW before the kernel sees it", async () => {
    const model = rules();
    const unsure: LlmPort = {
      ...model,
      complete: async (req) => {
        const r = await model.complete(req);
        return req.task === "decide_refund" && r.ok ? { ...r, value: { ...(r.value as object), confidence: 0.4 } } : r;
      },
    } as LlmPort;
    const p = pipeline(unsure, TWO_AGENTS);
    const { record } = await p.decide({ claim: (scenarios[0]!.input as { claim: object }).claim });
    expect(record?.status).toBe("NEEDS_REVIEW");
    expect(record?.reason_code).toBe("CLAIMS_SELF_CHECK_FAILED");
    expect(p.verdicts.all()).toHaveLength(0);
  });

  it("never waits forever on a worker that died: a tick past the step deadline hands the step to the fixer", async () => {
    const p = createInProcessPipeline({
      agent: TWO_AGENTS,
      orders: config.orders,
      llm: rules(),
      clock: { now: () => NOW },
      settings: EAGER_TIMERS,
    });
    const submitted = await p.submit({ claim: (scenarios[0]!.input as { claim: object }).claim });
    const claimId = submitted.ok ? submitted.claimId : "";
    const start = p.queues.take();
    expect(start?.queue).toBe("crew-events");
    if (start?.queue !== "crew-events") throw new Error("expected the crew start");
    await handleCrewMessage(start.message, p.deps);
    const lost = p.queues.take();
    expect(lost?.queue).toBe("agent-steps"); // the worker that took it dies: nothing comes back
    expect(p.queues.timers.at(-1)).toMatchObject({ claimId, dueMs: NOW + p.deps.settings.timeouts.analystMs });
    await p.drain();
    expect((await p.claims.getClaim(claimId))?.status).toBe("RUNNING");
    await handleCrewMessage(
      { type: "crew.tick", crewId: claimId, nowMs: NOW + p.deps.settings.timeouts.analystMs + 1 },
      p.deps,
    );
    await p.drain();
    const record = await p.claims.getClaim(claimId);
    expect(record?.status).toBe("DECIDED");
    expect(record?.verdict).toBe("ACCEPT");
    expect(
      p
        .auditEvents()
        .some(
          (e) =>
            e.event_type === "AGENT_STEP_FAILED" &&
            (e.details.fixer as { reason?: string } | undefined)?.reason === "stall",
        ),
    ).toBe(true);
  });

  it("repairs an outbox left by a crash between saving the snapshot and sending its messages", async () => {
    const p = pipeline();
    const submitted = await p.submit({ claim: (scenarios[0]!.input as { claim: object }).claim });
    const claimId = submitted.ok ? submitted.claimId : "";
    const start = p.queues.take();
    if (start?.queue !== "crew-events") throw new Error("expected the crew start");
    const crashing = {
      ...p.deps,
      queues: {
        ...p.deps.queues,
        sendAgentSteps: async () => {
          throw new Error("crash after save");
        },
      },
    };
    await expect(handleCrewMessage(start.message, crashing)).rejects.toThrow("crash after save");
    expect((await p.deps.sessions.loadSession(claimId))?.outbox.length).toBeGreaterThan(0);
    expect(p.queues.size()).toBe(0);
    expect(await handleCrewMessage(start.message, p.deps)).toBe("REPAIRED");
    expect((await p.deps.sessions.loadSession(claimId))?.outbox).toEqual([]);
    await p.drain();
    expect((await p.claims.getClaim(claimId))?.verdict).toBe("ACCEPT");
    expect(p.publisher.published.filter((e) => e.detailType === "ClaimVerdict")).toHaveLength(1);
  });

  it("delivers a claim's batch of messages with one load and one save, ignoring duplicates inside it", async () => {
    const p = pipeline();
    const submitted = await p.submit({ claim: (scenarios[0]!.input as { claim: object }).claim });
    const claimId = submitted.ok ? submitted.claimId : "";
    const start = p.queues.take();
    if (start?.queue !== "crew-events") throw new Error("expected the crew start");
    expect(await handleCrewMessages([start.message, start.message], p.deps)).toEqual(["STARTED", "DUPLICATE"]);
    expect((await p.deps.sessions.loadSession(claimId))?.version).toBe(1);
    const step = p.queues.take();
    if (step?.queue !== "agent-steps") throw new Error("expected the analyst step");
    await handleAgentStep(step.message, p.deps);
    const answer = p.queues.take();
    if (answer?.queue !== "crew-events") throw new Error("expected the analyst's answer");
    expect(await handleCrewMessages([answer.message, answer.message], p.deps)).toEqual(["ADVANCED", "DUPLICATE"]);
    expect((await p.deps.sessions.loadSession(claimId))?.version).toBe(2);
    await p.drain();
    expect((await p.claims.getClaim(claimId))?.verdict).toBe("ACCEPT");
  });

  it("steps only what reaches the crew in a batch: nothing before its start, one start, a tick with nothing due", async () => {
    const p = pipeline();
    const submitted = await p.submit({ claim: (scenarios[0]!.input as { claim: object }).claim });
    const claimId = submitted.ok ? submitted.claimId : "";
    const start = p.queues.take();
    if (start?.queue !== "crew-events") throw new Error("expected the crew start");
    const tick = { type: "crew.tick" as const, crewId: claimId, nowMs: NOW + 1_000 };
    expect(await handleCrewMessages([tick, start.message, start.message, tick], p.deps)).toEqual([
      "IGNORED",
      "STARTED",
      "DUPLICATE",
      "IGNORED",
    ]);
    expect((await p.deps.sessions.loadSession(claimId))?.version).toBe(1);
    expect(p.queues.timers).toEqual([{ queue: "timers", claimId, dueMs: NOW + 120_000 }]);
    expect(p.queues.take()?.queue).toBe("agent-steps");
    expect(p.queues.size()).toBe(0);
  });

  it("arms one timer per claim and re-arms it from a tick while a step is still in flight", async () => {
    let now = NOW;
    const { p, claimId } = await submitFirstScenario(() => now);
    const start = p.queues.take();
    if (start?.queue !== "crew-events") throw new Error("expected the crew start");
    await handleCrewMessage(start.message, p.deps);
    expect(p.queues.timers).toEqual([{ queue: "timers", claimId, dueMs: NOW + 120_000 }]);
    const step = p.queues.take();
    if (step?.queue !== "agent-steps") throw new Error("expected the analyst step");
    now = NOW + 5_000;
    await handleAgentStep(step.message, p.deps);
    const answer = p.queues.take();
    if (answer?.queue !== "crew-events") throw new Error("expected the analyst's answer");
    await handleCrewMessage(answer.message, p.deps); // the decision step starts: no second timer
    expect(p.queues.timers).toHaveLength(1);
    p.queues.take(); // the decision maker's worker dies with its step
    now = NOW + 120_000; // the first timer fires: nothing is due yet, so it is re-armed for the decision step
    await handleCrewMessage({ type: "crew.tick", crewId: claimId, nowMs: now }, p.deps);
    expect(p.queues.timers.at(-1)).toEqual({ queue: "timers", claimId, dueMs: NOW + 5_000 + 120_000 });
    now = NOW + 125_001;
    await handleCrewMessage({ type: "crew.tick", crewId: claimId, nowMs: now }, p.deps);
    await p.drain();
    expect((await p.claims.getClaim(claimId))?.verdict).toBe("ACCEPT"); // the fixer stood in
  });
});

describe("the crew step's outbox: marked only where nothing that comes later proves it performed", () => {
  /** A pipeline whose session writes and agent-step sends are recorded. */
  function recorded(opts: { settings?: Partial<typeof DEFAULT_PIPELINE_SETTINGS>; now?: () => number } = {}) {
    const p = createInProcessPipeline({
      agent: TWO_AGENTS,
      orders: config.orders,
      llm: rules(),
      clock: { now: opts.now ?? (() => NOW) },
      settings: { ...DEFAULT_PIPELINE_SETTINGS, ...opts.settings },
    });
    const cleared: number[] = [];
    const steps: string[] = [];
    const { sessions, queues } = p.deps;
    p.deps.sessions = {
      loadSession: (id) => sessions.loadSession(id),
      saveSession: (s) => sessions.saveSession(s),
      async clearOutbox(id, version) {
        cleared.push(version);
        await sessions.clearOutbox(id, version);
      },
    };
    p.deps.queues = {
      ...queues,
      async sendAgentSteps(messages, o) {
        steps.push(...messages.map((m) => m.request.role));
        await queues.sendAgentSteps(messages, o);
      },
    };
    return { p, cleared, steps };
  }

  const start = async (p: ReturnType<typeof pipeline>) => {
    const submitted = await p.submit({ claim: (scenarios[0]!.input as { claim: object }).claim });
    if (!submitted.ok) throw new Error("not submitted");
    const first = p.queues.take();
    if (first?.queue !== "crew-events") throw new Error("expected the crew start");
    expect(await handleCrewMessage(first.message, p.deps)).toBe("STARTED");
    return submitted.claimId;
  };
  const startMessage = (claimId: string) => ({ type: "claim.start" as const, crewId: claimId });

  it("decides a structured claim with no marker: each answer proves the step before it, the verdict the last one", async () => {
    const { p, cleared, steps } = recorded();
    const claimId = await start(p);
    // The start's outbox: its one agent step (the claim was stored RUNNING: no update; no timer: the sweep arms the
    // first one of a claim still open after its cutoff, stepTimers lazy by default).
    expect((await p.deps.sessions.loadSession(claimId))?.outbox.map((e) => e.kind)).toEqual(["agent_step"]);
    await p.drain();
    const record = await p.claims.getClaim(claimId);
    expect(record).toMatchObject({ status: "DECIDED", verdict: "ACCEPT" });
    expect(cleared).toEqual([]);
    expect(steps).toEqual(["claims_analyst", "decision_maker"]);
    // The last step's outbox (its proposal) is not marked, the claim's verdict proves it: the timer is dropped.
    expect((await p.deps.sessions.loadSession(claimId))?.outbox.at(-1)?.kind).toBe("proposal");
    expect(await handleTimer({ claim_id: claimId, due_ms: NOW }, p.deps)).toBe("SETTLED");
    expect(p.queues.size()).toBe(0);
  });

  it("asks a slow model once: a tick before the step's deadline sends nothing again; a redelivered start does, and marks", async () => {
    const { p, cleared, steps } = recorded();
    const claimId = await start(p);
    const step = p.queues.take();
    if (step?.queue !== "agent-steps") throw new Error("expected the analyst step");
    const tick = { type: "crew.tick" as const, crewId: claimId, nowMs: NOW + 1_000 };
    expect(await handleCrewMessages([tick, { ...tick, nowMs: NOW + 2_000 }], p.deps)).toEqual(["IGNORED", "IGNORED"]);
    expect(steps).toEqual(["claims_analyst"]);
    expect(cleared).toEqual([]);
    // The start delivered again (its first delivery may have died before sending the step): performed again, marked.
    expect(await handleCrewMessage(startMessage(claimId), p.deps)).toBe("REPAIRED");
    expect(steps).toEqual(["claims_analyst", "claims_analyst"]);
    expect(cleared).toEqual([1]);
    await handleAgentStep(step.message, p.deps);
    await p.drain();
    expect((await p.claims.getClaim(claimId))?.verdict).toBe("ACCEPT");
    // The analyst answered twice; its second answer found the decision step marked (every step after a repair is,
    // as before), so it did not send the decision maker's step again.
    expect(steps).toEqual(["claims_analyst", "claims_analyst", "decision_maker"]);
    expect(cleared).toEqual([1, 2, 3]);
  });

  it("marks the step a tick makes: the late answers to the step it timed out send nothing again", async () => {
    const { p, cleared, steps } = recorded();
    const claimId = await start(p);
    const slow = p.queues.take();
    if (slow?.queue !== "agent-steps") throw new Error("expected the analyst step");
    const due = NOW + p.deps.settings.timeouts.analystMs + 1;
    // At the step's deadline a tick performs the start's outbox again without the step it times out, and marks it.
    expect(await handleCrewMessage({ type: "crew.tick", crewId: claimId, nowMs: due }, p.deps)).toBe("ADVANCED");
    expect(cleared).toEqual([1, 2]);
    await handleAgentStep(slow.message, p.deps); // the slow analyst answers after all: late
    await p.drain();
    expect((await p.claims.getClaim(claimId))?.verdict).toBe("ACCEPT");
    expect(steps.filter((r) => r !== "claims_analyst")).toEqual([
      ...new Set(steps.filter((r) => r !== "claims_analyst")),
    ]);
    expect(steps.filter((r) => r === "claims_analyst")).toHaveLength(1);
  });

  it("takes the claim's hold on the step as proof: a tick while the model is away sends nothing again", async () => {
    const { p, cleared, steps } = recorded({ settings: { llmOutageHoldMs: 3_600_000 } });
    const claimId = await start(p);
    const step = p.queues.take();
    if (step?.queue !== "agent-steps") throw new Error("expected the analyst step");
    const since = new Date(NOW).toISOString();
    await p.claims.updateClaim(claimId, { llm_hold: { since, key: step.message.request.correlationId } });
    const tick = { type: "crew.tick" as const, crewId: claimId, nowMs: NOW + 1_000 };
    expect(await handleCrewMessage(tick, p.deps)).toBe("IGNORED");
    expect(await handleCrewMessage({ ...tick, nowMs: NOW + 2_000 }, p.deps)).toBe("IGNORED");
    expect(steps).toEqual(["claims_analyst"]);
    // The proof is recorded once, as no step superseded the outbox.
    expect(cleared).toEqual([1]);
    expect((await p.deps.sessions.loadSession(claimId))?.outbox).toEqual([]);
  });

  it("does not take the claim's hold on another step as proof", async () => {
    const { p, cleared, steps } = recorded({ settings: { llmOutageHoldMs: 3_600_000 } });
    const claimId = await start(p);
    await p.claims.updateClaim(claimId, { llm_hold: { since: new Date(NOW).toISOString(), key: "other-step" } });
    expect(await handleCrewMessage(startMessage(claimId), p.deps)).toBe("REPAIRED");
    expect(steps).toEqual(["claims_analyst", "claims_analyst"]);
    expect(cleared).toEqual([1]);
  });

  it("marks the step whose outbox opens a review: nothing that comes later can prove it", async () => {
    const p = pipeline(FAILING_MODEL);
    const cleared: number[] = [];
    const { sessions } = p.deps;
    p.deps.sessions = {
      ...sessions,
      async clearOutbox(id, version) {
        cleared.push(version);
        await sessions.clearOutbox(id, version);
      },
    };
    const submitted = await p.submit({ claim: (scenarios[0]!.input as { claim: object }).claim });
    const claimId = submitted.ok ? submitted.claimId : "";
    await p.drain();
    expect((await p.claims.getClaim(claimId))?.status).toBe("NEEDS_REVIEW");
    const last = await p.deps.sessions.loadSession(claimId);
    expect(cleared).toEqual([last!.version]);
    expect(last?.outbox).toEqual([]);
  });
});
