// LLM_BATCH_MODE=batch (docs/llm.md, "Batch mode"): a batch run's claims (they carry the run's simulation id) ask the
// model through the OpenAI Batch API of the scripted server, through the production handlers on a simulated clock
// (chaos/llm-stack.test-kit.ts). The crew waits on each batch through the outage hold's timers — held, the step tried
// again a little later — and is decided as it would have been; a batch whose answer never comes back, or whose output
// cannot be read, ends its claims as an outage does: held, then a person (NEEDS_REVIEW LLM_UNREACHABLE). Nothing is
// lost or done twice, and every claim replays.
import { afterEach, describe, expect, it } from "vitest";
import { createBatchModel, inMemoryBatchJournal } from "../adapters/llm/batch.ts";
import { createOpenAiModel } from "../adapters/llm/openai.ts";
import type { ScriptedBatchOptions } from "../adapters/llm/scripted-batches.ts";
import { answerBySchema, startScriptedLlmServer } from "../adapters/llm/scripted-server.ts";
import type { ScriptedLlmServer } from "../adapters/llm/scripted-server.ts";
import { DEFAULT_PIPELINE_SETTINGS } from "../pipeline/deps.ts";
import { CLAIM_BODIES, MIN, runLlmStack, SCRIPTED_ANSWERS, simClock, START, types } from "./llm-stack.test-kit.ts";

let server: ScriptedLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const SIMULATION = "batch-mode-test";
/**
 * The batch hold of these runs: short, so a batch that never answers costs ~30 tries per claim (a try every 30 s),
 * not the default's 3,000; longer than the outage hold, so it is the batch's own bound that ends the wait.
 */
const BATCH_HOLD_MS = 15 * MIN;
const inRun = CLAIM_BODIES.map((b) => ({ ...b, simulation_id: SIMULATION }));

/** The two claims through a stack whose batch run's claims use the Batch API; `bodies` default: the run's claims. */
async function runBatchMode(batches: ScriptedBatchOptions, bodies: readonly Record<string, unknown>[] = inRun) {
  server = await startScriptedLlmServer(answerBySchema(SCRIPTED_ANSWERS), { batches });
  const model = { baseURL: server.baseURL, apiKey: "k", model: "scripted", temperature: 0 };
  const run = await runLlmStack({
    clock: simClock(),
    llm: createOpenAiModel({ ...model, timeoutMs: 2_000, maxRetries: 0 }),
    batchLlm: createBatchModel({ ...model, journal: inMemoryBatchJournal() }),
    settings: { ...DEFAULT_PIPELINE_SETTINGS, llmOutageHoldMs: 10 * MIN, llmBatchHoldMs: BATCH_HOLD_MS },
    bodies,
  });
  const calls = (path: string) => server!.requests.filter((r) => r.method === "POST" && r.path === path).length;
  return { ...run, batchesSent: calls("/v1/batches"), direct: calls("/v1/chat/completions") };
}

describe("a batch run's claims through the Batch API", () => {
  it("wait on their batches through the hold and are decided as they would have been: once each, replayable", async () => {
    const run = await runBatchMode({ pollsBeforeDone: 3 });
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
      expect(kinds).toContain("CLAIM_HELD");
      expect(kinds.filter((k) => k === "CLAIM_HELD").length).toBe(kinds.filter((k) => k === "CLAIM_RESUMED").length);
      expect(kinds).not.toContain("CLAIM_NEEDS_REVIEW");
    }
    const held = run.audit.filter((e) => e.event_type === "CLAIM_HELD");
    expect(held.map((e) => (e.details as { reason_code: string }).reason_code)).toEqual(
      held.map(() => "LLM_BATCH_PENDING"),
    );
    // Each step's LLM_CALL says it went through the Batch API, so cost reports price it at the discount.
    const calls = run.audit.filter((e) => e.event_type === "LLM_CALL");
    expect(calls.map((e) => (e.details as { via?: string }).via)).toEqual(calls.map(() => "batch"));
    expect(calls).toHaveLength(2);
    // Every model call went through a batch: each claim's compact crew step (the free text is read by the patterns).
    expect(run.direct).toBe(0);
    expect(run.batchesSent).toBe(2);
    expect(run.published.map((e) => e.detailType).sort()).toEqual([
      "ClaimVerdict",
      "ClaimVerdict",
      "RefundExecuted",
      "RefundExecuted",
    ]);
    expect(run.replays.map((r) => r.status)).toEqual(["IDENTICAL", "IDENTICAL"]);
  });

  it("claims that are not a batch run's keep the synchronous endpoint, undelayed", async () => {
    const run = await runBatchMode({}, [...CLAIM_BODIES]);
    expect(run.claims.map((c) => c.status)).toEqual(["DECIDED", "DECIDED"]);
    expect(run.batchesSent).toBe(0);
    expect(run.direct).toBe(2);
    expect(run.audit.map((e) => e.event_type)).not.toContain("CLAIM_HELD");
    expect(run.audit.filter((e) => (e.details as { via?: string }).via !== undefined)).toEqual([]);
  });
});

describe("a batch whose answers never come back", () => {
  it.each(["expired", "failed", "cancelled"] as const)(
    "(it ended %s) holds its claims, sends their requests again, and after the hold a person decides them",
    async (endAs) => {
      const run = await runBatchMode({ endAs, pollsBeforeDone: 1 });
      expect(run.errors).toEqual([]);
      expect(run.deadLetters).toBe(0);
      expect(run.invariants.violations).toEqual([]);
      for (const claim of run.claims) {
        expect(claim).toMatchObject({ status: "NEEDS_REVIEW", reason_code: "LLM_UNREACHABLE" });
        expect(Date.parse(claim.updated_at)).toBeGreaterThanOrEqual(START + BATCH_HOLD_MS);
        const kinds = types(run.audit, claim.claim_id);
        expect(kinds.filter((k) => k === "CLAIM_HELD")).toHaveLength(1);
        expect(kinds.filter((k) => k === "CLAIM_NEEDS_REVIEW")).toHaveLength(1);
      }
      expect(run.claims.map((c) => c.reason).join(" ")).toContain(`ended ${endAs} without this request's answer`);
      // Each try after a batch ended sent the question again: more batches than questions.
      expect(run.batchesSent).toBeGreaterThan(2);
      expect(run.published.map((e) => e.detailType)).not.toContain("ClaimVerdict");
      expect(run.replays.map((r) => r.status)).toEqual(["IDENTICAL", "IDENTICAL"]);
    },
  );

  it("garbled output is named, the claims are held and nothing is lost; after the hold a person decides them", async () => {
    const run = await runBatchMode({ output: (jsonl) => `${jsonl.slice(0, 15)}\n` });
    expect(run.errors).toEqual([]);
    expect(run.deadLetters).toBe(0);
    expect(run.invariants.violations).toEqual([]);
    for (const claim of run.claims) {
      expect(claim).toMatchObject({ status: "NEEDS_REVIEW", reason_code: "LLM_UNREACHABLE" });
      expect(claim.reason).toMatch(/is not JSONL: line 1 is not JSON/);
      expect(Date.parse(claim.updated_at)).toBeGreaterThanOrEqual(START + BATCH_HOLD_MS);
    }
    // The batch was kept and read again, never sent twice: one per question (each claim's step), and one for the Fixer
    // each crew asked once the hold had run out (as in an outage, it answers at once that it could not help).
    expect(run.batchesSent).toBe(4);
    expect(run.replays.map((r) => r.status)).toEqual(["IDENTICAL", "IDENTICAL"]);
  });
});
