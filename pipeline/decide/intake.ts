// Intake, decided: a valid submission becomes the claim's record and the effects that start it; an
// extraction's answer becomes the claim's next state and its effects. Pure: the shell loads, stores, performs.
import * as z from "zod";
import { canonicalize, hashHex } from "../../core/crew/index.ts";
import { ClaimTextSchema, IntakeClaimSchema, oneLineText } from "../../core/claim/claim.ts";
import { dfidOf } from "../../core/kernel/claim-record.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { claimFromExtraction, extractionFailureReasonCode } from "../../core/extraction/extraction.ts";
import type { ClaimExtractionOutput } from "../../core/claim/proposal-output.ts";
import { simulationDfid, simulationIdProblem } from "../../core/history/simulation.ts";
import type { AuditEvent } from "../../core/integrity/index.ts";
import type { LlmResult } from "../../core/llm/index.ts";
import { claimAudit } from "./audit.ts";
import type { Effect } from "../effects.ts";
import { needsReview } from "./needs-review.ts";
import { resumeAudit } from "./outage.ts";

/** The body of `POST /claims`: exactly one of `claim` or `claim_text`, plus optional batch metadata. */
export const SubmissionSchema = z
  .object({
    claim: IntakeClaimSchema.optional(),
    claim_text: ClaimTextSchema.optional(),
    simulation_id: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9_.:-]+$/, "simulation_id may hold letters, digits and _ . : -")
      // `.` and `..` too, as `claims report` and the run store refuse them (core/history/simulation.ts).
      .refine((id) => !/^\.{1,2}$/.test(id), {
        error: (issue) => simulationIdProblem(String(issue.input)) ?? "simulation_id is invalid",
      })
      .optional(),
    label: oneLineText().max(200).optional(),
  })
  .strict()
  .refine((b) => (b.claim === undefined) !== (b.claim_text === undefined), {
    message: "give exactly one of claim (structured) or claim_text (free text)",
    path: [],
  });

/** A valid submission. */
type Submission = z.infer<typeof SubmissionSchema>;

/** One problem with a submission, for the 400 body. */
export interface InputIssue {
  path: string;
  message: string;
}

/** Turns zod issues into `{ path, message }` pairs. */
export function toInputIssues(error: z.ZodError): InputIssue[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join(".") || "(body)", message: i.message }));
}

/** The hash a repeated Idempotency-Key is compared by: the same submission, the same hash. */
export function submissionHash(sub: Submission): string {
  return hashHex(canonicalize(sub));
}

/** The stored record of a new claim, RECEIVED at `now`. */
export function receivedClaim(
  sub: Submission,
  ids: { claimId: string; parentClaimId?: string | undefined },
  now: number,
): ClaimRecord {
  const { claimId } = ids;
  const iso = new Date(now).toISOString();
  return {
    claim_id: claimId,
    dfid: dfidOf(claimId),
    root_dfid: sub.simulation_id ? simulationDfid(sub.simulation_id) : dfidOf(claimId),
    ...(sub.simulation_id ? { simulation_id: sub.simulation_id } : {}),
    ...(sub.label ? { label: sub.label } : {}),
    ...(ids.parentClaimId ? { parent_claim_id: ids.parentClaimId } : {}),
    status: "RECEIVED",
    input: sub.claim ? { claim: sub.claim } : { claim_text: sub.claim_text! },
    ...(sub.claim ? { claim: sub.claim } : {}),
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
export function startEffects(record: ClaimRecord): Effect[] {
  const received = claimAudit(record, "CLAIM_RECEIVED", "RECEIVED", Date.parse(record.received_at), {
    input_kind: "claim" in record.input ? "claim" : "claim_text",
    input: record.input,
    label: record.label,
    received_at: record.received_at,
    ...(record.parent_claim_id ? { parent_claim_id: record.parent_claim_id } : {}),
  });
  if (record.claim) return [crewStart(record.claim_id, [received])];
  return [
    { kind: "audit", event: received },
    { kind: "extraction", claimId: record.claim_id },
  ];
}

function crewStart(claimId: string, audit?: AuditEvent[]): Effect {
  return {
    kind: "crew_event",
    claimId,
    message: { type: "claim.start", crewId: claimId, ...(audit ? { audit } : {}) },
  };
}

/**
 * Whether the claim awaits its extraction (then the text to extract), or the effects of a request it does not
 * await: nothing, or — when the claim's crew should be running — its start again (an extraction kept whose start
 * was lost).
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
 * Decides a free-text claim on the model's answer at `now`. A retryable failure is tried again until
 * `finalAttempt`; every other failure ends the claim in NEEDS_REVIEW with the reason; a usable answer
 * becomes the claim and starts the crew.
 */
export function extractionDecision(
  record: ClaimRecord,
  text: string,
  result: LlmResult<ClaimExtractionOutput>,
  opts: { finalAttempt: boolean; now: number },
): ExtractionDecision {
  const { now } = opts;
  const llmDetails = { model: result.model, attempts: result.attempts, usage: result.usage, task: "extract_claim" };
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
    crewStart(record.claim_id),
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
