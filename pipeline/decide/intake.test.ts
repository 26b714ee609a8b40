// Intake, decided without ports: a submission's record, the effects that start a claim, and what an
// extraction's answer makes of a free-text claim.
import { describe, expect, it } from "vitest";
import type { ClaimExtractionOutput } from "../../core/claim/proposal-output.ts";
import type { LlmResult } from "../../core/llm/index.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { Effect } from "../effects.ts";
import { ACCEPTABLE, audits, claimRecord, NOW, shape, walkDecider } from "./decide.test-kit.ts";
import type { Observation, Request } from "./requests.ts";
import type { SubmitOptions } from "./intake.ts";
import {
  decideExtraction,
  decideSubmission,
  extractionStart,
  startSubmission,
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
/** Free text the patterns cannot read alone (no category): its extraction asks the model. */
const MODEL_TEXT = "Order ord_001, 299.99 EUR, it stopped working";
const modelTextClaim = claimRecord(ACCEPTABLE, {
  status: "RECEIVED",
  input: { claim_text: MODEL_TEXT },
  claim: undefined,
});

describe("a submission", () => {
  it.each([
    // A structured claim is stored RUNNING: the invocation that stores it starts its crew (issue 37: no update to move
    // it there). Free text waits RECEIVED for its extraction.
    [
      "a structured claim",
      { claim: ACCEPTABLE },
      {},
      { status: "RUNNING", root_dfid: "dfid_clm_9", claim: ACCEPTABLE },
    ],
    [
      "a claim of a simulation, resubmitted",
      { claim: ACCEPTABLE, simulation_id: "sim_1", label: "one" },
      { parentClaimId: "clm_0" },
      {
        status: "RUNNING",
        root_dfid: "dfid_sim_sim_1",
        simulation_id: "sim_1",
        label: "one",
        parent_claim_id: "clm_0",
      },
    ],
    [
      "free text",
      { claim_text: TEXT },
      {},
      { status: "RECEIVED", input: { claim_text: TEXT }, root_dfid: "dfid_clm_9" },
    ],
  ])("becomes a stored record: %s", (_name, body, ids, expected) => {
    const record = receivedClaim(SubmissionSchema.parse(body), { claimId: "clm_9", ...ids }, NOW);
    expect(record).toMatchObject({
      claim_id: "clm_9",
      dfid: "dfid_clm_9",
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

  it.each([["XYZ"], ["EU"], ["€€€"]])(
    "refuses a claim currency %j that is not ISO 4217, naming claim.currency",
    (currency) => {
      const parsed = SubmissionSchema.safeParse({ claim: { ...ACCEPTABLE, currency } });
      expect(parsed.success).toBe(false);
      if (!parsed.success) expect(toInputIssues(parsed.error).map((i) => i.path)).toEqual(["claim.currency"]);
    },
  );

  it.each([
    [[{ line_id: "l1" }, { line_id: "l1" }], "claim.lines.1.line_id", /line l1 is named twice/],
    [[{ line_id: "l1", quantity: 0 }], "claim.lines.0.quantity", /at least 1/],
    [[{ line_id: "l1", quantity: -2 }], "claim.lines.0.quantity", /at least 1/],
    [[{ line_id: "l1", quantity: 1.5 }], "claim.lines.0.quantity", /whole number/],
    [[{ line_id: "" }], "claim.lines.0.line_id", /line_id is required/],
    [[], "claim.lines", /at least one line/],
    [[{ line_id: "l1", sku: "x" }], "claim.lines.0", /sku/],
  ])("refuses claim lines %j naming the field", (lines, path, message) => {
    const parsed = SubmissionSchema.safeParse({ claim: { ...ACCEPTABLE, lines } });
    expect(parsed.success).toBe(false);
    if (!parsed.success)
      expect(toInputIssues(parsed.error)).toEqual([{ path, message: expect.stringMatching(message) }]);
  });

  it("takes claim lines with and without units", () => {
    const lines = [{ line_id: "l1" }, { line_id: "l2", quantity: 2 }];
    const parsed = SubmissionSchema.safeParse({ claim: { ...ACCEPTABLE, lines } });
    expect(parsed.success && parsed.data.claim?.lines).toEqual(lines);
  });

  it("takes a claim currency in any case (the kernel compares it with the order's)", () => {
    for (const currency of ["USD", "jpy", "Kwd"])
      expect(SubmissionSchema.safeParse({ claim: { ...ACCEPTABLE, currency } }).success).toBe(true);
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

  it("stamps the start of the invocation that stored the claim only: its session cannot be in an older layout", () => {
    const record = claimRecord(ACCEPTABLE);
    const [stored] = startEffects(record, { stored: true });
    expect(stored).toMatchObject({ kind: "crew_event", message: { type: "claim.start", sessionLayout: "steps" } });
    // The sweep's restart and a retry's start may meet a claim an older release started: not stamped.
    const [restart] = startEffects(record);
    expect(restart?.kind === "crew_event" && "sessionLayout" in restart.message).toBe(false);
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
  items: null,
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
    // The claim's first start (kept with its move to RUNNING): stamped, no session of an older layout can exist.
    expect(decision.effects[1]).toMatchObject({ message: { sessionLayout: "steps" } });
    expect(audits(decision.effects)[0]).toMatchObject({
      state: "RUNNING",
      details: { model: "rules-v1", extracted: GOOD },
    });
  });

  it("records a claim the patterns read alone as no model call: no usage, no attempt", () => {
    const decision = extractionDecision(textClaim, TEXT, answer(GOOD), {
      finalAttempt: false,
      now: NOW,
      patterns: true,
    });
    if (decision.outcome === "RETRY") throw new Error("unreachable");
    const details = audits(decision.effects)[0]!.details;
    expect(details).toMatchObject({ model: "patterns", attempts: 0, source: "patterns", extracted: GOOD });
    expect(details).not.toHaveProperty("usage");
  });
});

describe("a submission's process", () => {
  const answers =
    (created: "new" | "same" | "same-decided" | "other", admission = true) =>
    (request: Request): Observation => {
      switch (request.kind) {
        case "admit":
          return {
            kind: "admit",
            admission: admission ? { ok: true } : { ok: false, open: 50, bound: 50, retryAfterS: 5 },
          };
        case "now":
          return { kind: "now", now: NOW };
        case "new_id":
          return { kind: "new_id", id: "clm_9" };
        case "create_claim": {
          const record = request.record;
          if (created === "new") return { kind: "create_claim", result: { created: true, record } };
          const stored = created === "same-decided" ? { ...record, status: "DECIDED" as const } : record;
          return { kind: "create_claim", result: { created: false, record: stored, sameRequest: created !== "other" } };
        }
        default:
          throw new Error(`asked ${request.kind}`);
      }
    };
  const submit = (body: unknown, opts: SubmitOptions, created: Parameters<typeof answers>[0], admission = true) =>
    walkDecider(startSubmission(body, opts), decideSubmission, answers(created, admission));

  it.each<[string, unknown, SubmitOptions, Parameters<typeof answers>[0], boolean, string[], Record<string, unknown>]>([
    [
      "stores a new claim under a new id, then starts its crew with its receipt",
      { claim: ACCEPTABLE },
      {},
      "new",
      true,
      ["? now", "? new_id", "? create_claim", "crew_event claim.start"],
      { ok: true, claimId: "clm_9", status: "RECEIVED", created: true },
    ],
    [
      "admits it first when the caller bounds open claims",
      { claim_text: TEXT },
      { admit: true, claimId: "clm_7" },
      "new",
      true,
      ["? admit", "? now", "? create_claim", "audit CLAIM_RECEIVED + extraction"],
      { ok: true, claimId: "clm_7", created: true },
    ],
    [
      "refuses it, storing nothing, when the stack cannot take it now",
      { claim: ACCEPTABLE },
      { admit: true },
      "new",
      false,
      ["? admit"],
      { ok: false, code: "OVERLOADED", retryAfterS: 5 },
    ],
    [
      "starts a repeat again when a crash stopped the first before it started",
      { claim: ACCEPTABLE },
      { idempotencyKey: "k" },
      "same",
      true,
      ["? now", "? new_id", "? create_claim", "crew_event claim.start"],
      { ok: true, created: false, status: "RUNNING" },
    ],
    [
      "starts a repeat of free text again when a crash stopped the first before it started",
      { claim_text: TEXT },
      { idempotencyKey: "k" },
      "same",
      true,
      ["? now", "? new_id", "? create_claim", "audit CLAIM_RECEIVED + extraction"],
      { ok: true, created: false, status: "RECEIVED" },
    ],
    [
      "answers a repeat of a decided claim with the first, starting nothing",
      { claim: ACCEPTABLE },
      { idempotencyKey: "k" },
      "same-decided",
      true,
      ["? now", "? new_id", "? create_claim"],
      { ok: true, created: false, status: "DECIDED" },
    ],
    [
      "refuses a key used with another body",
      { claim: ACCEPTABLE },
      { idempotencyKey: "k" },
      "other",
      true,
      ["? now", "? new_id", "? create_claim"],
      { ok: false, code: "IDEMPOTENCY_CONFLICT" },
    ],
    ["stores nothing for invalid input", { claim: {} }, {}, "new", true, [], { ok: false, code: "INVALID_INPUT" }],
  ])("%s", (_name, body, opts, created, admission, trace, outcome) => {
    const walked = submit(body, opts, created, admission);
    expect(walked.trace).toEqual(trace);
    expect(walked.outcome).toMatchObject(outcome);
  });

  it("stamps the crew start of a claim it stores now, not the start of a repeat (the claim may be an older release's)", () => {
    const startOf = (created: "new" | "same") => {
      // walkDecider keeps the effects' shapes only: the walk again, keeping the effects.
      const effects: Effect[] = [];
      let step = startSubmission({ claim: ACCEPTABLE }, { idempotencyKey: "k" });
      for (;;) {
        effects.push(...step.effects);
        const { next } = step;
        if ("done" in next) break;
        step = "then" in next ? next.then : decideSubmission(next.state, answers(created)(next.awaiting));
      }
      return effects.find((e) => e.kind === "crew_event");
    };
    expect(startOf("new")).toMatchObject({ message: { type: "claim.start", sessionLayout: "steps" } });
    const repeat = startOf("same");
    expect(repeat).toMatchObject({ message: { type: "claim.start" } });
    expect(repeat?.kind === "crew_event" && "sessionLayout" in repeat.message).toBe(false);
  });
});

describe("an extraction's process", () => {
  const ok = answer(GOOD);
  const down = {
    ok: false,
    code: "LLM_UNREACHABLE",
    message: "connect ECONNREFUSED",
    retryable: true,
    model: "m",
    attempts: 3,
  } as unknown as LlmResult<ClaimExtractionOutput>;
  const extract = (
    record: ClaimRecord | undefined,
    result: LlmResult<ClaimExtractionOutput>,
    opts: { finalAttempt?: boolean; won?: boolean; hold?: boolean } = {},
  ) =>
    walkDecider(
      decideExtraction(
        extractionStart("clm_1", opts.finalAttempt ?? false),
        { kind: "claim", claim: record },
        HOLD(opts),
      ),
      (state, observed) => decideExtraction(state, observed, HOLD(opts)),
      (request) => {
        if (request.kind === "extract") return { kind: "extract", result };
        if (request.kind === "now") return { kind: "now", now: NOW };
        if (request.kind === "claim_update") {
          const winner = { ...record!, outbox: [{ kind: "extraction", claimId: "clm_1" }] as Effect[] };
          return { kind: "claim_update", changed: opts.won ?? true, record: winner };
        }
        throw new Error(`asked ${request.kind}`);
      },
    );
  const HOLD = (opts: { hold?: boolean }) => ({
    settings: opts.hold ? { llmOutageHoldMs: 3_600_000 } : {},
  });

  it.each<
    [string, ClaimRecord | undefined, LlmResult<ClaimExtractionOutput>, Parameters<typeof extract>[2], string[], string]
  >([
    [
      "keeps the outcome with the claim's move to RUNNING, then performs and clears it",
      modelTextClaim,
      ok,
      {},
      ["? extract", "? now", "? claim_update", "audit CLAIM_EXTRACTED + crew_event claim.start + claim_update"],
      "EXTRACTED",
    ],
    [
      "reads plain text by patterns alone, asking the model nothing",
      textClaim,
      down,
      {},
      ["? now", "? claim_update", "audit CLAIM_EXTRACTED + crew_event claim.start + claim_update"],
      "EXTRACTED",
    ],
    [
      "performs the winner's stored outcome when another delivery kept its own",
      modelTextClaim,
      ok,
      { won: false },
      ["? extract", "? now", "? claim_update", "extraction + claim_update"],
      "SKIPPED",
    ],
    [
      "retries a retryable failure before the last attempt",
      modelTextClaim,
      down,
      {},
      ["? extract", "? now", "? now"],
      "RETRY",
    ],
    [
      "holds the claim for an unreachable model: the extraction sent again later",
      modelTextClaim,
      down,
      { hold: true },
      ["? extract", "? now", "extraction + audit CLAIM_HELD + claim_update"],
      "HELD",
    ],
    [
      "performs an outcome an earlier delivery stored and died before performing, asking the model nothing",
      { ...textClaim, outbox: [{ kind: "extraction", claimId: "clm_1" }] },
      ok,
      {},
      ["extraction + claim_update"],
      "SKIPPED",
    ],
    ["skips a claim gone", undefined, ok, {}, [], "SKIPPED"],
  ])("%s", (_name, record, result, opts, trace, outcome) => {
    expect(extract(record, result, opts)).toEqual({ trace, outcome });
  });
});
