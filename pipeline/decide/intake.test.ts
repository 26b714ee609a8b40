// Intake, decided without ports: a submission's record, the effects that start a claim, and what an
// extraction's answer makes of a free-text claim.
import { describe, expect, it } from "vitest";
import type { ClaimExtractionOutput } from "../../core/claim/proposal-output.ts";
import type { LlmResult } from "../../core/llm/index.ts";
import { ACCEPTABLE, audits, claimRecord, NOW, shape } from "./decide.test-kit.ts";
import {
  extractionAwaited,
  extractionDecision,
  receivedClaim,
  startEffects,
  submissionHash,
  SubmissionSchema,
  toInputIssues,
} from "./intake.ts";

const TEXT = "Order ord_001, 299.99 EUR, the screen is dead";
const textClaim = claimRecord(ACCEPTABLE, { status: "RECEIVED", input: { claim_text: TEXT }, claim: undefined });

describe("a submission", () => {
  it.each([
    ["a structured claim", { claim: ACCEPTABLE }, {}, { root_dfid: "dfid_clm_9", claim: ACCEPTABLE }],
    [
      "a claim of a simulation, resubmitted",
      { claim: ACCEPTABLE, simulation_id: "sim_1", label: "one" },
      { parentClaimId: "clm_0" },
      { root_dfid: "dfid_sim_sim_1", simulation_id: "sim_1", label: "one", parent_claim_id: "clm_0" },
    ],
    ["free text", { claim_text: TEXT }, {}, { input: { claim_text: TEXT }, root_dfid: "dfid_clm_9" }],
  ])("becomes a RECEIVED record: %s", (_name, body, ids, expected) => {
    const record = receivedClaim(SubmissionSchema.parse(body), { claimId: "clm_9", ...ids }, NOW);
    expect(record).toMatchObject({
      claim_id: "clm_9",
      dfid: "dfid_clm_9",
      status: "RECEIVED",
      received_at: new Date(NOW).toISOString(),
      ...expected,
    });
    if (!("claim" in body)) expect(record.claim).toBeUndefined();
  });

  it("is refused with issues naming the field, and hashes the same when repeated", () => {
    const both = SubmissionSchema.safeParse({ claim: ACCEPTABLE, claim_text: TEXT });
    expect(both.success).toBe(false);
    if (!both.success) expect(toInputIssues(both.error)).toEqual([{ path: "(body)", message: expect.any(String) }]);
    const bad = SubmissionSchema.safeParse({ claim: { ...ACCEPTABLE, amount_eur: "a lot" } });
    expect(!bad.success && toInputIssues(bad.error).map((i) => i.path)).toEqual(["claim.amount_eur"]);
    const sub = SubmissionSchema.parse({ claim: ACCEPTABLE });
    expect(submissionHash(sub)).toBe(submissionHash(SubmissionSchema.parse({ claim: { ...ACCEPTABLE } })));
    expect(submissionHash(sub)).not.toBe(submissionHash(SubmissionSchema.parse({ claim: ACCEPTABLE, label: "x" })));
  });
});

describe("what intake refuses that would name a path", () => {
  it.each([
    [{ simulation_id: ".." }, "simulation_id", /"\.\." is not an id/],
    [{ simulation_id: "." }, "simulation_id", /"\." is not an id/],
    [{ simulation_id: "a/b" }, "simulation_id", /letters, digits/],
    [{ claim: { ...ACCEPTABLE, order_id: ".." } }, "claim.order_id", /"\.\." is not an order id/],
    [{ claim: { ...ACCEPTABLE, order_id: " . " } }, "claim.order_id", /"\." is not an order id/],
    [{ claim: { ...ACCEPTABLE, order_id: "ord/../admin" } }, "claim.order_id", /may not hold \/ or \\/],
    [{ claim: { ...ACCEPTABLE, order_id: "ord\\1" } }, "claim.order_id", /may not hold/],
  ])("refuses %j naming the field", (extra, path, message) => {
    const parsed = SubmissionSchema.safeParse({ claim: ACCEPTABLE, ...extra });
    expect(parsed.success).toBe(false);
    if (!parsed.success)
      expect(toInputIssues(parsed.error)).toEqual([{ path, message: expect.stringMatching(message) }]);
  });

  it("takes ids with dots that name no folder", () => {
    expect(
      SubmissionSchema.safeParse({ claim: { ...ACCEPTABLE, order_id: "ord.1" }, simulation_id: "run...1" }).success,
    ).toBe(true);
  });
});

describe("startEffects", () => {
  it("free text is extracted first, after its receipt is audited at the receipt time", () => {
    const effects = startEffects(textClaim);
    expect(shape(effects)).toEqual(["audit CLAIM_RECEIVED", "extraction"]);
    expect(audits(effects)[0]?.created_at).toBe(textClaim.received_at);
  });

  it("a structured claim starts the crew, its receipt (at the receipt time) carried in the start", () => {
    const record = claimRecord(ACCEPTABLE, { status: "RECEIVED" });
    const effects = startEffects(record);
    expect(shape(effects)).toEqual(["crew_event claim.start"]);
    const start = effects[0]!;
    if (start.kind !== "crew_event" || start.message.type !== "claim.start") throw new Error("expected the crew start");
    expect(start.message.audit?.map((e) => [e.event_type, e.created_at, e.dfid])).toEqual([
      ["CLAIM_RECEIVED", record.received_at, record.dfid],
    ]);
    // A repeat (a client's retry, the sweep's restart) carries the identical receipt.
    expect(startEffects(record)).toEqual(effects);
  });
});

describe("extractionAwaited", () => {
  it.each([
    ["a RECEIVED free-text claim awaits it", textClaim, { awaited: true, text: TEXT }],
    [
      "a RUNNING claim's crew is started again",
      claimRecord(ACCEPTABLE),
      { awaited: false, effects: [expect.anything()] },
    ],
    ["a decided claim does nothing", claimRecord(ACCEPTABLE, { status: "DECIDED" }), { awaited: false, effects: [] }],
    [
      "a structured RECEIVED claim does nothing",
      claimRecord(ACCEPTABLE, { status: "RECEIVED" }),
      { awaited: false, effects: [] },
    ],
  ])("%s", (_name, record, expected) => {
    expect(extractionAwaited(record)).toEqual(expected);
  });
});

const answer = (value: ClaimExtractionOutput): LlmResult<ClaimExtractionOutput> => ({
  ok: true,
  value,
  text: JSON.stringify(value),
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, estimated: true },
  attempts: 1,
  model: "rules-v1",
  warnings: [],
});
const failure = (code: "LLM_TIMEOUT" | "LLM_UNREACHABLE", retryable: boolean): LlmResult<ClaimExtractionOutput> => ({
  ok: false,
  code,
  message: "no answer",
  attempts: 3,
  model: "m",
  retryable,
});
const GOOD: ClaimExtractionOutput = {
  order_id: "ord_001",
  amount_eur: 299.99,
  category: "electronics",
  reason: "the screen is dead",
  purchase_date: null,
  currency: "EUR",
};

describe("extractionDecision", () => {
  it.each([
    [
      "a retryable failure before the last attempt is tried again",
      failure("LLM_TIMEOUT", true),
      false,
      "RETRY",
      undefined,
    ],
    [
      "a retryable failure on the last attempt goes to review",
      failure("LLM_TIMEOUT", true),
      true,
      "NEEDS_REVIEW",
      "EXTRACTION_FAILED",
    ],
    ["an unusable model is named as such", failure("LLM_UNREACHABLE", false), false, "NEEDS_REVIEW", "LLM_UNREACHABLE"],
    [
      "an answer without an order goes to review",
      answer({ ...GOOD, order_id: null }),
      false,
      "NEEDS_REVIEW",
      expect.any(String),
    ],
  ])("%s", (_name, result, finalAttempt, outcome, reasonCode) => {
    const decision = extractionDecision(textClaim, TEXT, result, { finalAttempt, now: NOW });
    expect(decision.outcome).toBe(outcome);
    if (decision.outcome === "RETRY") return;
    expect(shape(decision.effects)).toEqual([
      "audit CLAIM_EXTRACTION_FAILED",
      "audit CLAIM_NEEDS_REVIEW",
      "audit REVIEW_REQUESTED",
      "review_open",
      "publish ClaimNeedsReview,ReviewRequested",
      "claim_update",
    ]);
    expect(decision.effects.at(-1)).toMatchObject({ patch: { status: "NEEDS_REVIEW", reason_code: reasonCode } });
    expect(decision.patch).toEqual({ updated_at: new Date(NOW).toISOString() });
  });

  it("makes a usable answer the claim and starts the crew", () => {
    const decision = extractionDecision(textClaim, TEXT, answer(GOOD), { finalAttempt: false, now: NOW });
    expect(decision).toMatchObject({
      outcome: "EXTRACTED",
      patch: { claim: { order_id: "ord_001", amount_eur: 299.99 }, extracted: GOOD },
    });
    if (decision.outcome === "RETRY") throw new Error("unreachable");
    expect(shape(decision.effects)).toEqual(["audit CLAIM_EXTRACTED", "crew_event claim.start"]);
    expect(audits(decision.effects)[0]).toMatchObject({
      state: "RUNNING",
      details: { model: "rules-v1", extracted: GOOD },
    });
  });
});
