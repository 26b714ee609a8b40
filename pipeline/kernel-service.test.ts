// The kernel service as it runs (handleProposal), on the in-memory adapters: a redelivered proposal
// gets the stored verdict and decides, reserves and publishes nothing again; a crash after reserving
// or while publishing is repaired by the redelivery with the same verdict_id and one reservation.
import { describe, expect, it } from "vitest";
import type { BusEntry } from "../core/kernel/events.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { PipelineDeps } from "./deps.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { handleProposal } from "./kernel-service.ts";
import { handleCrewMessage } from "./orchestrator.ts";
import { handleAgentStep } from "./worker.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
const ACCEPT = {
  claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Screen is dead on arrival" },
};
const ESCALATE = {
  claim: { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Laptop does not boot" },
};

/** A pipeline whose claim has run up to its proposal: the proposal message, not yet handled. */
async function atProposal(body: unknown) {
  let now = NOW;
  const p = createInProcessPipeline({
    agent: config.agent,
    orders: config.orders,
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock: { now: () => now },
  });
  const submitted = await p.submit(body, { claimId: "clm_k" });
  if (!submitted.ok) throw new Error(submitted.message);
  for (let work = p.queues.take(); work; work = p.queues.take()) {
    if (work.queue === "crew-events") await handleCrewMessage(work.message, p.deps);
    else if (work.queue === "agent-steps") await handleAgentStep(work.message, p.deps);
    else if (work.queue === "proposals") return { p, message: work.message, later: (ms: number) => void (now += ms) };
  }
  throw new Error("the claim never reached the kernel");
}

/** Counts the calls the kernel service makes to decide (order, ledger and verdict writes) and to reserve. */
function counting(deps: PipelineDeps) {
  const calls = { getOrder: 0, ledgerGet: 0, reserve: 0, putVerdictOnce: 0 };
  const wrapped: PipelineDeps = {
    ...deps,
    orders: { ...deps.orders, getOrder: (id) => (calls.getOrder++, deps.orders.getOrder(id)) },
    ledger: {
      ...deps.ledger,
      get: (...a) => (calls.ledgerGet++, deps.ledger.get(...a)),
      reserve: (...a) => (calls.reserve++, deps.ledger.reserve(...a)),
    },
    verdicts: { ...deps.verdicts, putVerdictOnce: (v) => (calls.putVerdictOnce++, deps.verdicts.putVerdictOnce(v)) },
  };
  return { calls, deps: wrapped };
}

/** Fails the first call of `fn` with a crash, then behaves. */
function failOnce<A extends unknown[], R>(fn: (...a: A) => Promise<R>, what: string): (...a: A) => Promise<R> {
  let failed = false;
  return (...a) => {
    if (failed) return fn(...a);
    failed = true;
    return Promise.reject(new Error(`injected crash in ${what}`));
  };
}

/** What the order's ledger entry has reserved, per claim and in total. */
async function reservations(p: Awaited<ReturnType<typeof atProposal>>["p"], orderId: string) {
  const entry = await p.deps.ledger.get(orderId);
  return entry && { refunded_cents: entry.refunded_cents, claims: entry.claims };
}

/** The stored verdict a delivery ended with (the outcome must be DECIDED). */
async function decided(message: Parameters<typeof handleProposal>[0], deps: Parameters<typeof handleProposal>[1]) {
  const result = await handleProposal(message, deps);
  if (result.outcome !== "DECIDED") throw new Error(`expected a decision, got ${result.outcome}`);
  return result.verdict;
}

const verdictIdOf = (e: BusEntry) => ("verdict_id" in e.detail ? e.detail.verdict_id : undefined);
const published = (p: Awaited<ReturnType<typeof atProposal>>["p"]) =>
  p.publisher.published.map((e) => ({ type: e.detailType, verdict_id: verdictIdOf(e) }));

describe("handleProposal redelivery", () => {
  it("returns the stored verdict to a second delivery, and decides, reserves and publishes nothing again", async () => {
    const { p, message, later } = await atProposal(ACCEPT);
    const { calls, deps } = counting(p.deps);
    const first = await decided(message, deps);
    // Published, proven by the claim recorded DECIDED with it: the verdict item is not written a third time.
    expect(first).toMatchObject({ execution: "EXECUTED", published: false, record: { verdict: "ACCEPT" } });
    // decide (order, ledger), execute (reserve on the order the decision read: the source is read once)
    expect(calls).toEqual({ getOrder: 1, ledgerGet: 1, reserve: 1, putVerdictOnce: 1 });
    expect(p.verdicts.all()[0]?.published).toBe(false);
    const verdictId = first.record.verdict_id;
    expect(published(p)).toEqual([
      { type: "ClaimVerdict", verdict_id: verdictId },
      { type: "RefundExecuted", verdict_id: verdictId },
    ]);

    later(60_000); // a decision made now would carry another decided_at
    const second = await decided(structuredClone(message), deps);
    expect(second).toEqual(first);
    expect(calls).toEqual({ getOrder: 1, ledgerGet: 1, reserve: 1, putVerdictOnce: 1 });
    expect(published(p)).toHaveLength(2);
    expect(await reservations(p, "ord_001")).toEqual({ refunded_cents: 29_999, claims: { clm_k: 29_999 } });
    expect(p.verdicts.all()).toHaveLength(1);
    expect(await p.claims.getClaim("clm_k")).toMatchObject({
      status: "DECIDED",
      verdict: "ACCEPT",
      verdict_id: verdictId,
      executed: true,
    });
  });

  it("repairs a crash between reserving the refund and recording it: the redelivery finds its own reservation and executes once", async () => {
    const { p, message } = await atProposal(ACCEPT);
    const crashing = {
      ...p.deps,
      verdicts: { ...p.deps.verdicts, recordExecution: failOnce(p.deps.verdicts.recordExecution, "recordExecution") },
    };
    await expect(handleProposal(message, crashing)).rejects.toThrow("injected crash in recordExecution");
    expect(await reservations(p, "ord_001")).toEqual({ refunded_cents: 29_999, claims: { clm_k: 29_999 } }); // reserved, not recorded
    expect(p.verdicts.all()[0]).toMatchObject({ execution: "PENDING", published: false });
    expect(p.publisher.published).toEqual([]);

    const repaired = await decided(message, crashing);
    expect(repaired).toMatchObject({ execution: "EXECUTED" });
    expect(await p.claims.getClaim("clm_k")).toMatchObject({
      status: "DECIDED",
      verdict_id: repaired.record.verdict_id,
    });
    expect(p.publisher.published.map((e) => e.detailType)).toEqual(["ClaimVerdict", "RefundExecuted"]);
    expect(await reservations(p, "ord_001")).toEqual({ refunded_cents: 29_999, claims: { clm_k: 29_999 } });
    expect(p.auditEvents().filter((e) => e.event_type === "CLAIM_REFUND_NOT_EXECUTED")).toEqual([]);
    expect((await p.claims.getClaim("clm_k"))?.executed).toBe(true);
  });

  it("returns the stored ESCALATE to a second delivery without publishing it again", async () => {
    const { p, message } = await atProposal(ESCALATE);
    const first = await decided(message, p.deps);
    const second = await decided(message, p.deps);
    expect(second).toEqual(first);
    expect(first).toMatchObject({
      execution: "NOT_APPLICABLE",
      record: { verdict: "ESCALATE", reason_code: "AMOUNT_ABOVE_LIMIT" },
    });
    expect(p.publisher.published.map((e) => [e.detailType, verdictIdOf(e)])).toEqual([
      ["ClaimVerdict", first.record.verdict_id],
      ["ReviewRequested", undefined],
      ["ReviewOpened", undefined],
    ]);
    expect(await p.deps.reviews.getReview("clm_k")).toMatchObject({
      origin: "ESCALATE",
      status: "PENDING",
      reason_code: "AMOUNT_ABOVE_LIMIT",
      verdict_id: first.record.verdict_id,
    });
    expect((await p.deps.ledger.get("ord_002"))?.claims ?? {}).toEqual({}); // nothing reserved
  });
});

describe("handleProposal publish repair", () => {
  it("stores the verdict unpublished when publishing fails, and the redelivery publishes it with the same verdict_id and records the claim DECIDED with it", async () => {
    const { p, message, later } = await atProposal(ACCEPT);
    const flaky = {
      ...p.deps,
      publisher: {
        publish: failOnce(
          (entries: Parameters<typeof p.publisher.publish>[0]) => p.publisher.publish(entries),
          "publish",
        ),
      },
    };
    await expect(handleProposal(message, flaky)).rejects.toThrow("injected crash in publish");
    const stored = p.verdicts.all();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ execution: "EXECUTED", published: false });
    expect(stored[0]!.events.map((e) => e.detailType)).toEqual(["ClaimVerdict", "RefundExecuted"]);
    expect(p.publisher.published).toEqual([]);
    expect((await p.claims.getClaim("clm_k"))?.status).toBe("RUNNING");

    later(60_000);
    await decided(message, flaky);
    expect((await p.deps.verdicts.getVerdict(stored[0]!.idempotency_key))?.published).toBe(false); // the claim proves it
    expect(p.publisher.published).toEqual(stored[0]!.events);
    expect(new Set(p.publisher.published.map(verdictIdOf))).toEqual(new Set([stored[0]!.record.verdict_id]));
    expect(await reservations(p, "ord_001")).toEqual({ refunded_cents: 29_999, claims: { clm_k: 29_999 } });
    expect(await p.claims.getClaim("clm_k")).toMatchObject({
      status: "DECIDED",
      verdict_id: stored[0]!.record.verdict_id,
      executed: true,
    });

    await handleProposal(message, flaky);
    expect(p.publisher.published).toHaveLength(2);
  });

  it("publishes the same entries again, never new ones, when it crashes after publishing but before recording the claim DECIDED", async () => {
    const { p, message } = await atProposal(ACCEPT);
    const crashing = {
      ...p.deps,
      claims: { ...p.deps.claims, updateClaim: failOnce(p.deps.claims.updateClaim, "updateClaim") },
    };
    await expect(handleProposal(message, crashing)).rejects.toThrow("injected crash in updateClaim");
    const once = structuredClone(p.publisher.published);
    expect(p.verdicts.all()[0]?.published).toBe(false); // neither marked nor proven: the redelivery publishes again
    await handleProposal(message, crashing);
    expect(p.publisher.published).toEqual([...once, ...once]);
    expect(once.map((e) => e.detailType)).toEqual(["ClaimVerdict", "RefundExecuted"]);
    expect(await p.claims.getClaim("clm_k")).toMatchObject({
      status: "DECIDED",
      verdict_id: p.verdicts.all()[0]?.record.verdict_id,
    });
    expect(p.auditEvents().filter((e) => e.event_type === "KERNEL_VERDICT")).toHaveLength(1);
    await handleProposal(message, crashing);
    expect(p.publisher.published).toHaveLength(2 * once.length); // proven now: a third delivery publishes nothing
  });

  it("marks the verdict published on its item when its claim moved on before taking it, so no redelivery publishes it again", async () => {
    const { p, message } = await atProposal(ACCEPT);
    // Between the publish and the claim's update, the claim left RUNNING (e.g. a sweep ended it STALLED).
    const movedOn = {
      ...p.deps,
      publisher: {
        async publish(entries: Parameters<typeof p.publisher.publish>[0]) {
          await p.publisher.publish(entries);
          await p.claims.updateClaim("clm_k", { status: "NEEDS_REVIEW", reason_code: "STALLED" }, ["RUNNING"]);
        },
      },
    };
    await decided(message, movedOn);
    expect(p.verdicts.all()[0]?.published).toBe(true);
    expect((await p.claims.getClaim("clm_k"))?.status).toBe("NEEDS_REVIEW");
    const once = p.publisher.published.length;
    await handleProposal(message, p.deps);
    expect(p.publisher.published).toHaveLength(once);
  });

  it("reads the claim again before publishing a verdict it found stored, so a publication proven since is not repeated", async () => {
    const { p, message } = await atProposal(ACCEPT);
    const stale = structuredClone(await p.claims.getClaim("clm_k"));
    await decided(message, p.deps);
    const once = p.publisher.published.length;
    // A second delivery that read the claim (still RUNNING) before the first one recorded it DECIDED.
    let reads = 0;
    const late = {
      ...p.deps,
      claims: {
        ...p.deps.claims,
        getClaim: async (id: string) => (reads++ === 0 ? stale : p.deps.claims.getClaim(id)),
      },
    };
    await handleProposal(message, late);
    expect(reads).toBe(2);
    expect(p.publisher.published).toHaveLength(once);
  });
});
