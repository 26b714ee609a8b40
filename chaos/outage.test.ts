// A model outage is not a pile of reviews (docs/llm.md: the outage hold). The production handlers of functions/
// over the in-memory stores and simulated SQS queues (chaos/sim-queues.ts), on a simulated clock, with the openai
// adapter behind its endpoint check against the scripted OpenAI-compatible server, which is down, then up again.
// Claims that need the model wait while it is down and are decided normally once it answers; past the hold they
// end NEEDS_REVIEW LLM_UNREACHABLE; without a hold (claims batch --keep-going) at once. Nothing is lost or done
// twice, and every claim replays. Time is simulated: no test waits for the clock.
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAiModel } from "../adapters/llm/openai.ts";
import { guardWithPreflight, preflightLlm } from "../adapters/llm/preflight.ts";
import { answerBySchema, startScriptedLlmServer } from "../adapters/llm/scripted-server.ts";
import type { ScriptedLlmServer } from "../adapters/llm/scripted-server.ts";
import { DEFAULT_PIPELINE_SETTINGS } from "../pipeline/deps.ts";
import { MIN, runLlmStack, SCRIPTED_ANSWERS, simClock, START, types } from "./llm-stack.test-kit.ts";

let server: ScriptedLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * Runs two claims (one structured, one free text) submitted while the model is down from the start until `upAfterMs`
 * after it (undefined: never up again), with an outage hold of `holdMs`, until nothing is left to deliver.
 */
async function runOutage(opts: { upAfterMs?: number; holdMs: number }) {
  const clock = simClock();
  const down = () => opts.upAfterMs === undefined || clock.now() < START + opts.upAfterMs;
  server = await startScriptedLlmServer(answerBySchema(SCRIPTED_ANSWERS), { down });
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
  // The endpoint check finds the model down: what `/health` reads.
  expect((await guarded.check()).ok).toBe(false);
  const health: { at: number; unreachable: boolean }[] = [];
  const run = await runLlmStack({
    clock,
    llm: guarded.port,
    settings: { ...DEFAULT_PIPELINE_SETTINGS, llmOutageHoldMs: opts.holdMs },
    onTurn: (at) => health.push({ at, unreachable: guarded.unreachable() }),
  });
  return { ...run, health };
}

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
