// Extraction keeps one outcome (found by `npm run chaos`): deliveries of one free-text claim that race, or repeat
// after a crash, may each get another answer from the model at another instant; only the first stored outcome
// counts, its effects are performed once it is stored (by whichever delivery gets there, or by the sweep), and the
// claim replays IDENTICAL.
import { describe, expect, it } from "vitest";
import { replayClaim } from "../core/history/replay/index.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { LlmPort } from "../core/llm/index.ts";
import { createInMemoryAuditLog } from "./in-memory.ts";
import type { AuditLog } from "./ports.ts";
import type { AuditEvent } from "../core/integrity/audit.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { extractClaim } from "./intake.ts";
import { sweepStalledClaims } from "./timers.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
/** No category: the patterns cannot read it alone, so its extraction asks the model (docs/llm.md). */
const TEXT = "I bought order ord_001 for 120.00 EUR on 29 May 2026, it stopped working.";

/** The rules model, except that the extraction calls listed in `failing` (1-based) fail, after a few ticks. */
function model(failing: number[] = []): LlmPort {
  const rules = createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility });
  let extractions = 0;
  return {
    provider: "rules",
    model: rules.model,
    async complete(request) {
      await null;
      await null;
      if (request.task === "extract_claim" && failing.includes(++extractions))
        return { ok: false, code: "LLM_REFUSED", message: "refused", attempts: 1, model: "m", retryable: false };
      return rules.complete(request);
    },
  };
}

function setup(opts: { failing?: number[]; audit?: AuditLog } = {}) {
  let now = NOW;
  const p = createInProcessPipeline({
    agent: config.agent,
    orders: config.orders,
    llm: model(opts.failing),
    clock: { now: () => now },
    ...(opts.audit ? { overrides: { audit: opts.audit } } : {}),
  });
  return { p, later: (ms: number) => (now += ms) };
}

const kinds = (p: ReturnType<typeof setup>["p"]) =>
  p
    .auditEvents()
    .filter((e) => e.event_type.startsWith("CLAIM_EXTRACT") || e.event_type === "CLAIM_NEEDS_REVIEW")
    .map((e) => e.event_type);

/** An audit log whose first write of an event of `type` throws, as a delivery that died right there. */
function crashOnceOn(type: AuditEvent["event_type"]): ReturnType<typeof createInMemoryAuditLog> {
  const inner = createInMemoryAuditLog();
  let dead = true;
  const crash = (types: readonly string[]) => {
    if (!dead || !types.includes(type)) return;
    dead = false;
    throw new Error("injected crash");
  };
  return {
    ...inner,
    async append(event) {
      crash([event.event_type]);
      return inner.append(event);
    },
    async appendAll(events) {
      crash(events.map((e) => e.event_type));
      return inner.appendAll(events);
    },
  };
}

describe("extraction races and repeats", () => {
  it.each([
    ["both answer", []],
    ["one answers, the other fails", [2]],
    ["one fails, the other answers", [1]],
  ])("two deliveries at once, %s: one outcome is kept, and the claim replays", async (_name, failing) => {
    const { p } = setup({ failing });
    await p.submit({ claim_text: TEXT }, { claimId: "clm_t" });
    expect(p.queues.take()).toEqual({ queue: "extraction", claimId: "clm_t" });
    const outcomes = await Promise.all([
      extractClaim("clm_t", { finalAttempt: true }, p.deps),
      extractClaim("clm_t", { finalAttempt: true }, p.deps),
    ]);
    await p.drain();
    const record = await p.claims.getClaim("clm_t");
    const decided = record?.status === "DECIDED";
    expect(outcomes.filter((o) => o !== "SKIPPED")).toEqual([decided ? "EXTRACTED" : "NEEDS_REVIEW"]);
    expect(record?.outbox).toBeUndefined();
    expect(kinds(p)).toEqual(decided ? ["CLAIM_EXTRACTED"] : ["CLAIM_EXTRACTION_FAILED", "CLAIM_NEEDS_REVIEW"]);
    // At least once on the bus (the losing delivery may announce the winner's outcome again), never both outcomes.
    const announced = new Set(
      p.publisher.published
        .filter((e) => e.detailType === "ClaimVerdict" || e.detailType === "ClaimNeedsReview")
        .map((e) => JSON.stringify(e)),
    );
    expect([...announced].map((e) => (JSON.parse(e) as { detailType: string }).detailType)).toEqual([
      decided ? "ClaimVerdict" : "ClaimNeedsReview",
    ]);
    const review = await p.deps.reviews.getReview("clm_t");
    expect(replayClaim("clm_t", p.auditEvents(), { ...(review ? { review } : {}) }).status).toBe("IDENTICAL");
  });

  it("a delivery that died after storing its outcome is finished by the redelivery, which asks the model nothing", async () => {
    const audit = crashOnceOn("CLAIM_EXTRACTED");
    const { p, later } = setup({ failing: [2], audit });
    await p.submit({ claim_text: TEXT }, { claimId: "clm_t" });
    p.queues.take();
    await expect(extractClaim("clm_t", { finalAttempt: true }, p.deps)).rejects.toThrow(/injected crash/);
    later(720_000); // redelivered after the visibility timeout; the model would now fail
    expect(await extractClaim("clm_t", { finalAttempt: true }, p.deps)).toBe("SKIPPED");
    await p.drain();
    expect((await p.claims.getClaim("clm_t"))?.status).toBe("DECIDED");
    expect(audit.all().filter((e) => e.event_type === "CLAIM_EXTRACTED")).toHaveLength(1);
    expect(replayClaim("clm_t", audit.all()).status).toBe("IDENTICAL");
  });

  it("an outcome whose delivery died and never came back is performed by the sweep", async () => {
    const audit = crashOnceOn("CLAIM_EXTRACTION_FAILED");
    const { p, later } = setup({ failing: [1], audit });
    await p.submit({ claim_text: TEXT }, { claimId: "clm_t" });
    p.queues.take();
    await expect(extractClaim("clm_t", { finalAttempt: true }, p.deps)).rejects.toThrow(/injected crash/);
    expect((await p.claims.getClaim("clm_t"))?.status).toBe("RUNNING");
    later(600_000);
    expect(await sweepStalledClaims(p.deps, { stalledAfterMs: 300_000, pageSize: 10, maxTicks: 3 })).toMatchObject({
      restarted: ["clm_t"],
    });
    const record = await p.claims.getClaim("clm_t");
    expect({ status: record?.status, outbox: record?.outbox }).toEqual({ status: "NEEDS_REVIEW", outbox: undefined });
    const review = await p.deps.reviews.getReview("clm_t");
    expect(review?.status).toBe("PENDING");
    expect(replayClaim("clm_t", audit.all(), { review: review! }).status).toBe("IDENTICAL");
  });
});
