// Intake, decided: a valid submission becomes the claim's record and the effects that start it; an
// extraction's answer becomes the claim's next state and its effects. Intake's two processes — a submission, an
// extraction — each one `decide(state, observation) → { effects, next }` its shell (pipeline/intake.ts) loops over.
// Pure: the shell loads, stores, performs.
import type * as z from "zod";
import { canonicalize, hashHex } from "../../core/crew/index.ts";
import type { Claim } from "../../core/claim/claim.ts";
import { completeClaim, needsCompletion } from "../../core/kernel/claim-completion.ts";
import { dfidOf } from "../../core/kernel/claim-record.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import {
  claimFromExtraction,
  extractionFailureReasonCode,
  PATTERN_EXTRACTOR,
  plainTextExtraction,
} from "../../core/extraction/extraction.ts";
import type { ClaimExtractionOutput } from "../../core/claim/proposal-output.ts";
import { simulationDfid } from "../../core/history/simulation.ts";
import type { AuditEvent } from "../../core/integrity/index.ts";
import type { LlmResult } from "../../core/llm/index.ts";
import { extractionMessages } from "../../core/agents/prompts.ts";
import { claimAudit } from "./audit.ts";
import type { PipelineSettings } from "../deps.ts";
import type { Effect } from "../effects.ts";
import { needsReview } from "./needs-review.ts";
import { holdDecision, resumeAudit, unheldFailure } from "./outage.ts";
import type { ClaimUpdate, Observation } from "./requests.ts";
import { ask, done, observedAs } from "./step.ts";
import type { Next, Step } from "./step.ts";

export { SubmissionSchema } from "./submission-schema.ts";
import { SubmissionSchema } from "./submission-schema.ts";

/** A valid submission. */
type Submission = z.infer<typeof SubmissionSchema>;

export { toInputIssues } from "./input-issues.ts";
export type { InputIssue } from "./input-issues.ts";
import { toInputIssues } from "./input-issues.ts";
import type { InputIssue } from "./input-issues.ts";

/** The hash a repeated Idempotency-Key is compared by: the same submission, the same hash. */
export function submissionHash(sub: Submission): string {
  return hashHex(canonicalize(sub));
}

/**
 * The stored record of a new claim, RECEIVED at `now`: `claim` is the structured claim as intake completed it from
 * its order (core/kernel/claim-completion.ts), else as submitted.
 */
export function receivedClaim(
  sub: Submission,
  ids: { claimId: string; parentClaimId?: string | undefined },
  now: number,
  completed?: Claim,
): ClaimRecord {
  const { claimId } = ids;
  const claim = completed ?? (sub.claim as Claim | undefined);
  const iso = new Date(now).toISOString();
  return {
    claim_id: claimId,
    dfid: dfidOf(claimId),
    root_dfid: sub.simulation_id ? simulationDfid(sub.simulation_id) : dfidOf(claimId),
    ...(sub.simulation_id ? { simulation_id: sub.simulation_id } : {}),
    ...(sub.label ? { label: sub.label } : {}),
    ...(ids.parentClaimId ? { parent_claim_id: ids.parentClaimId } : {}),
    // Structured: RUNNING at once, its crew started by this invocation (issue 37: no update at the start). Free text: RECEIVED.
    status: claim ? "RUNNING" : "RECEIVED",
    input: claim ? { claim } : { claim_text: sub.claim_text! },
    ...(claim ? { claim } : {}),
    received_at: iso,
    updated_at: iso,
  };
}

/**
 * What starts a stored claim: its CLAIM_RECEIVED audit event, then extraction (free text) or the crew. The event
 * carries the receipt time, so a repeat — a client's retry, the sweep restarting a claim whose intake died before
 * its audit — is identical and the audit log drops it. A structured claim's receipt rides in its crew start and is
 * stored with the crew's first step (one write for both; a start that makes no step has it appended).
 */
export function startEffects(record: ClaimRecord, opts: { stored?: boolean } = {}): Effect[] {
  const received = claimAudit(record, "CLAIM_RECEIVED", "RECEIVED", Date.parse(record.received_at), {
    input_kind: "claim" in record.input ? "claim" : "claim_text",
    input: record.input,
    label: record.label,
    received_at: record.received_at,
    ...(record.parent_claim_id ? { parent_claim_id: record.parent_claim_id } : {}),
  });
  if (record.claim) return [crewStart(record.claim_id, [received], opts.stored ? FIRST_START : undefined)];
  return [
    { kind: "audit", event: received },
    { kind: "extraction", claimId: record.claim_id },
  ];
}

/** Stamps the start made with the claim (`stored`) or by its extraction: no older layout's session (messages.ts). */
const FIRST_START = { sessionLayout: "steps" } as const;
function crewStart(claimId: string, audit?: AuditEvent[], first?: typeof FIRST_START): Effect {
  return {
    kind: "crew_event",
    claimId,
    message: { type: "claim.start", crewId: claimId, ...(audit ? { audit } : {}), ...first },
  };
}

/**
 * Whether the claim awaits its extraction (then its text), or the effects of a request it does not await: nothing,
 * or — when the claim's crew should be running — its start again (an extraction kept whose start was lost).
 */
export function extractionAwaited(
  record: ClaimRecord,
): { awaited: true; text: string } | { awaited: false; effects: Effect[] } {
  if (record.status === "RECEIVED" && "claim_text" in record.input)
    return { awaited: true, text: record.input.claim_text };
  return { awaited: false, effects: record.claim && record.status === "RUNNING" ? [crewStart(record.claim_id)] : [] };
}

/** What an extraction's answer decides: try again later, or the claim's patch and the effects stored with it. */
type ExtractionDecision =
  | { outcome: "RETRY" }
  | { outcome: "EXTRACTED" | "NEEDS_REVIEW"; patch: Partial<ClaimRecord>; effects: Effect[] };

/**
 * Decides a free-text claim on the model's answer at `now`. A retryable failure is tried again until `finalAttempt`;
 * every other failure ends the claim in NEEDS_REVIEW with the reason; a usable answer becomes the claim and starts it.
 */
export function extractionDecision(
  record: ClaimRecord,
  text: string,
  result: LlmResult<ClaimExtractionOutput>,
  opts: { finalAttempt: boolean; now: number; patterns?: boolean },
): ExtractionDecision {
  const { now } = opts;
  // Read by patterns alone (plainTextExtraction): no model call, no usage.
  const llmDetails = opts.patterns
    ? { model: PATTERN_EXTRACTOR, attempts: 0, task: "extract_claim", source: "patterns" as const }
    : {
        model: result.model,
        attempts: result.attempts,
        usage: result.usage,
        task: "extract_claim",
        ...(result.ok && result.via === "batch" ? { via: "batch" as const } : {}),
      };
  const updatedAt = new Date(now).toISOString();
  if (!result.ok) {
    if (result.retryable && !opts.finalAttempt) return { outcome: "RETRY" };
    // A model that cannot be used at all is named as such (LLM_UNREACHABLE, LLM_AUTH_FAILED), not as a failed extraction.
    const reasonCode = extractionFailureReasonCode(result.code);
    const effects = needsReview(
      record,
      now,
      reasonCode,
      `Extraction failed: ${result.message}`,
      {},
      { type: "CLAIM_EXTRACTION_FAILED", details: { ...llmDetails, code: result.code } },
    );
    return { outcome: "NEEDS_REVIEW", patch: { updated_at: updatedAt }, effects };
  }
  const claim = claimFromExtraction(result.value, { text, now: record.received_at });
  if (!claim.ok) {
    const effects = needsReview(
      record,
      now,
      claim.code,
      `Could not read a claim from the text: ${claim.message}`,
      {},
      { type: "CLAIM_EXTRACTION_FAILED", details: { ...llmDetails, extracted: result.value } },
    );
    return { outcome: "NEEDS_REVIEW", patch: { updated_at: updatedAt }, effects };
  }
  const effects: Effect[] = [
    // The model answered a claim that waited for it: its hold ends with this extraction.
    ...resumeAudit(record, now),
    {
      kind: "audit",
      event: claimAudit(record, "CLAIM_EXTRACTED", "RUNNING", now, {
        ...llmDetails,
        extracted: result.value,
        claim: claim.claim,
        warnings: [...result.warnings, ...claim.warnings],
      }),
    },
    crewStart(record.claim_id, undefined, FIRST_START),
  ];
  return {
    outcome: "EXTRACTED",
    patch: {
      claim: claim.claim,
      extracted: result.value,
      updated_at: updatedAt,
      ...(record.llm_hold ? { llm_hold: undefined } : {}),
    },
    effects,
  };
}

/** Every status: clearing an outbox is allowed whatever became of the claim meanwhile. */
export const ANY_STATUS: ClaimRecord["status"][] = [
  "RECEIVED",
  "RUNNING",
  "DECIDED",
  "NEEDS_REVIEW",
  "AWAITING_RETURN",
];

/**
 * The claim's stored outbox (an extraction's outcome a delivery kept and died before performing), performed then
 * cleared; `undefined` when it has none.
 */
export function claimOutboxEffects(record: ClaimRecord): Effect[] | undefined {
  if (!record.outbox || record.outbox.length === 0) return undefined;
  return [
    ...(record.outbox as Effect[]),
    { kind: "claim_update", claimId: record.claim_id, patch: { outbox: undefined }, onlyFrom: ANY_STATUS },
  ];
}

/** The outcome of a submission. */
export type SubmitResult =
  | { ok: true; claimId: string; status: ClaimRecord["status"]; created: boolean }
  | { ok: false; code: "INVALID_INPUT"; message: string; issues: InputIssue[] }
  | { ok: false; code: "IDEMPOTENCY_CONFLICT"; message: string; claimId: string }
  | { ok: false; code: "OVERLOADED"; message: string; retryAfterS: number }
  /** A claim to complete from its order whose order could not be read (docs/orders.md#claims-on-lines): nothing stored. */
  | { ok: false; code: "ORDER_SOURCE_UNAVAILABLE"; message: string };

/** How a submission is made: under an Idempotency-Key, a given claim id (and parent), bounded by `admit`. */
export type SubmitOptions = { idempotencyKey?: string; claimId?: string; parentClaimId?: string; admit?: boolean };

/** Where a submission stands, waiting for the answer to what it asked. */
export type SubmissionState =
  /** A claim on lines to complete: its order. */
  | { at: "order"; sub: Submission; opts: SubmitOptions }
  | { at: "admitted"; sub: Submission; opts: SubmitOptions; claim?: Claim }
  /** The instant it is received at. */
  | { at: "received_at"; sub: Submission; opts: SubmitOptions; claim?: Claim }
  | { at: "claim_id"; sub: Submission; opts: SubmitOptions; now: number; claim?: Claim }
  | { at: "created"; record: ClaimRecord };

type SubmissionStep = Step<Next<SubmitResult, SubmissionState>>;

/**
 * Intake's process for a submission (docs/architecture.md): validated (invalid input stores nothing), admitted
 * when the caller bounds open claims (a valid submission the stack cannot take now is refused `OVERLOADED` and
 * stores nothing), stored RECEIVED, then started (extraction for free text, the crew otherwise). A repeated
 * Idempotency-Key with the same body returns the first claim (and starts it again if a crash stopped it before it
 * started); with another body it is a conflict.
 */
export function startSubmission(body: unknown, opts: SubmitOptions): SubmissionStep {
  const parsed = SubmissionSchema.safeParse(body);
  if (!parsed.success)
    return done({
      ok: false,
      code: "INVALID_INPUT",
      message: "the claim is invalid",
      issues: toInputIssues(parsed.error),
    });
  const sub = parsed.data;
  // A claim on lines that leaves out what only its order knows is completed from it (docs/orders.md#claims-on-lines).
  if (sub.claim && needsCompletion(sub.claim))
    return {
      effects: [],
      next: {
        awaiting: { kind: "order", orderId: sub.claim.order_id },
        state: { at: "order", sub, opts },
        failureObserved: "order",
      },
    };
  return admitted(sub, opts);
}

function admitted(sub: Submission, opts: SubmitOptions, claim?: Claim): SubmissionStep {
  const known = claim ? { claim } : {};
  if (opts.admit) return ask({ kind: "admit" }, { at: "admitted", sub, opts, ...known });
  return ask({ kind: "now" }, { at: "received_at", sub, opts, ...known });
}

/** The submitted claim completed from its order as read: the claim, or the 400 naming each field, or the 503. */
function completed(state: { sub: Submission; opts: SubmitOptions }, observed: Observation): SubmissionStep {
  const unavailable = (why: string) =>
    done<SubmitResult>({
      ok: false,
      code: "ORDER_SOURCE_UNAVAILABLE",
      message: `the claim names lines, and its order could not be read to complete it (${why}): try again later`,
    });
  if (observed.kind === "failed") return unavailable(observed.message);
  const completion = completeClaim(state.sub.claim!, observedAs(observed, "order").order);
  if (completion.ok) return admitted(state.sub, state.opts, completion.claim);
  if ("garbled" in completion) return unavailable(`the order is garbled: ${completion.garbled}`);
  const issues = completion.issues.map((i) => ({ path: ["claim", ...i.path].join("."), message: i.message }));
  return done({
    ok: false,
    code: "INVALID_INPUT",
    message: "the claim is invalid",
    issues,
  });
}

/** A submission's next step on the answer to what it asked. */
export function decideSubmission(state: SubmissionState, observed: Observation): SubmissionStep {
  switch (state.at) {
    case "order":
      return completed(state, observed);
    case "admitted": {
      const { admission } = observedAs(observed, "admit");
      if (!admission.ok)
        return done({
          ok: false,
          code: "OVERLOADED",
          message: `${admission.open} claims are open, the bound is ${admission.bound}: try again in ${admission.retryAfterS} s`,
          retryAfterS: admission.retryAfterS,
        });
      return ask({ kind: "now" }, { ...state, at: "received_at" });
    }
    case "received_at": {
      const now = observedAs(observed, "now").now;
      if (state.opts.claimId === undefined)
        return ask({ kind: "new_id", prefix: "clm" }, { ...state, at: "claim_id", now });
      return stored(state, state.opts.claimId, now);
    }
    case "claim_id":
      return stored(state, observedAs(observed, "new_id").id, state.now);
    case "created": {
      const { result } = observedAs(observed, "create_claim");
      if (result.created) {
        const { record } = state;
        return { effects: startEffects(record, { stored: true }), next: { done: submitted(record, true) } };
      }
      if (!result.sameRequest)
        return done({
          ok: false,
          code: "IDEMPOTENCY_CONFLICT",
          message: "this Idempotency-Key was used with a different body",
          claimId: result.record.claim_id,
        });
      // A crash after storing may have stopped the claim before it started: start it again (idempotent).
      const effects = awaitsStart(result.record) ? startEffects(result.record) : [];
      return { effects, next: { done: submitted(result.record, false) } };
    }
  }
}

function stored(
  { sub, opts, claim }: { sub: Submission; opts: SubmitOptions; claim?: Claim },
  claimId: string,
  now: number,
): SubmissionStep {
  const record = receivedClaim(sub, { claimId, parentClaimId: opts.parentClaimId }, now, claim);
  // The submission as sent is hashed (a retry of the same body is the same request, whatever its order says now).
  const idempotency = opts.idempotencyKey ? { key: opts.idempotencyKey, requestHash: submissionHash(sub) } : undefined;
  return ask({ kind: "create_claim", record, idempotency }, { at: "created", record });
}

/** Whether a stored claim may lack its start: RECEIVED, or structured and RUNNING (a crew's repeated start is ignored). */
export const awaitsStart = (record: ClaimRecord): boolean =>
  record.status === "RECEIVED" || (record.status === "RUNNING" && "claim" in record.input);

/** A claim stored now answers `RECEIVED` (its receipt; docs/http-api.md), a repeat the claim's status. */
function submitted(record: ClaimRecord, created: boolean): SubmitResult {
  return { ok: true, claimId: record.claim_id, status: created ? "RECEIVED" : record.status, created };
}

/** The outcome of an extraction attempt. */
export type ExtractOutcome = "EXTRACTED" | "NEEDS_REVIEW" | "SKIPPED" | "RETRY" | "HELD";

/** What an extraction decides with: the outage hold's settings. */
export type ExtractionPolicy = {
  settings: Pick<PipelineSettings, "llmOutageHoldMs" | "llmOutageRetryMs" | "llmBatchHoldMs" | "extractByPatterns">;
};

/** Where an extraction stands, waiting for the answer to what it asked. */
export type ExtractionState =
  /** Loaded: the claim. */
  | { at: "claim"; claimId: string; finalAttempt: boolean }
  | { at: "extracted"; record: ClaimRecord; text: string; finalAttempt: boolean }
  /** The instant a failed extraction's hold is decided at. */
  | { at: "hold_time"; record: ClaimRecord; text: string; finalAttempt: boolean; result: ExtractionResult }
  /** The instant the extraction's outcome is decided at (`patterns`: read without the model). */
  | {
      at: "outcome_time";
      record: ClaimRecord;
      text: string;
      finalAttempt: boolean;
      result: ExtractionResult;
      patterns?: boolean;
    }
  /** The outcome kept with the claim's move from RECEIVED to RUNNING, or another delivery's kept instead. */
  | { at: "kept"; record: ClaimRecord; outcome: "EXTRACTED" | "NEEDS_REVIEW"; effects: Effect[] };

type ExtractionResult = LlmResult<ClaimExtractionOutput>;
type ExtractionStep = Step<Next<ExtractOutcome, ExtractionState>>;

/** The state an extraction starts in: the shell loads the claim and gives it as the first observation. */
export function extractionStart(claimId: string, finalAttempt: boolean): ExtractionState {
  return { at: "claim", claimId, finalAttempt };
}

/**
 * Intake's process for a free-text claim's extraction. An outcome an earlier delivery stored and died before
 * performing is performed now. A retryable LLM failure is `RETRY` (the queue tries again) until `finalAttempt`; every
 * other failure ends the claim in NEEDS_REVIEW with the reason. While the model cannot be reached and the claim's
 * outage hold lasts (docs/llm.md), the extraction is sent again for a little later instead (`HELD`). ONE outcome is
 * kept however many deliveries race or repeat after a crash (the model may answer each differently, and each at
 * another instant): its effects are stored with the claim's move from RECEIVED to RUNNING in one conditional update,
 * then performed, then cleared; the delivery that loses the update performs the winner's stored effects instead (they
 * are idempotent). A failed extraction moves on to NEEDS_REVIEW as the last of its effects, so a claim whose outbox
 * was never performed is still open and the sweep finds it.
 */
export function decideExtraction(
  state: ExtractionState,
  observed: Observation,
  policy: ExtractionPolicy,
): ExtractionStep {
  switch (state.at) {
    case "claim": {
      const record = observedAs(observed, "claim").claim;
      if (!record) return done("SKIPPED");
      const outbox = claimOutboxEffects(record);
      if (outbox) return { effects: outbox, next: { done: "SKIPPED" } };
      const awaited = extractionAwaited(record);
      if (!awaited.awaited) return { effects: awaited.effects, next: { done: "SKIPPED" } };
      const { text } = awaited;
      // Plain text the patterns read in full needs no model call (docs/llm.md, "Extraction by patterns").
      const plain =
        policy.settings.extractByPatterns === false ? undefined : plainTextExtraction(text, record.received_at);
      if (plain !== undefined) {
        const result: ExtractionResult = {
          ok: true,
          value: plain,
          text: JSON.stringify(plain),
          usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, estimated: false },
          attempts: 0,
          model: PATTERN_EXTRACTOR,
          warnings: [],
        };
        const next: ExtractionState = { at: "outcome_time", record, text, finalAttempt: state.finalAttempt, result };
        return ask({ kind: "now" }, { ...next, patterns: true });
      }
      const request = extractionMessages(text, { receivedAt: record.received_at });
      // A batch run's claim is read through the Batch API when the stack has one (LLM_BATCH_MODE=batch).
      const viaBatch = record.simulation_id !== undefined;
      return ask(
        { kind: "extract", request, ...(viaBatch ? { viaBatch } : {}) },
        { at: "extracted", record, text, finalAttempt: state.finalAttempt },
      );
    }
    case "extracted": {
      const { result } = observedAs(observed, "extract");
      return ask({ kind: "now" }, { ...state, at: result.ok ? "outcome_time" : "hold_time", result });
    }
    case "hold_time": {
      const now = observedAs(observed, "now").now;
      const { record, result } = state;
      if (!result.ok) {
        const work = { step: "extraction", key: "extraction" } as const;
        const hold = holdDecision(record, result, now, policy.settings, work);
        if (hold) {
          const again: Effect = { kind: "extraction", claimId: record.claim_id, delayMs: hold.retryInMs };
          return { effects: hold.resend ? [again, ...hold.effects] : [], next: { done: "HELD" } };
        }
        // No (more) waiting: a batch's answer that never came back is an outage (LLM_UNREACHABLE, then a person).
        return ask({ kind: "now" }, { ...state, at: "outcome_time", result: unheldFailure(result, record) });
      }
      return ask({ kind: "now" }, { ...state, at: "outcome_time" });
    }
    case "outcome_time": {
      const now = observedAs(observed, "now").now;
      const { record, text, result, finalAttempt } = state;
      const decision = extractionDecision(record, text, result, {
        finalAttempt,
        now,
        patterns: state.patterns === true,
      });
      if (decision.outcome === "RETRY") return done("RETRY");
      const { patch, effects, outcome } = decision;
      const update: ClaimUpdate = {
        kind: "claim_update",
        claimId: record.claim_id,
        patch: { ...patch, status: "RUNNING", outbox: effects },
        onlyFrom: ["RECEIVED"],
      };
      return ask({ kind: "claim_update", update }, { at: "kept", record, outcome, effects });
    }
    case "kept": {
      const won = observedAs(observed, "claim_update");
      if (!won.changed) {
        const winner = won.record ? claimOutboxEffects(won.record) : undefined;
        return { effects: winner ?? [], next: { done: "SKIPPED" } };
      }
      const clear: Effect = {
        kind: "claim_update",
        claimId: state.record.claim_id,
        patch: { outbox: undefined },
        onlyFrom: ANY_STATUS,
      };
      return { effects: [...state.effects, clear], next: { done: state.outcome } };
    }
  }
}
