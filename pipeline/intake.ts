// Intake: validate a submission, store the claim, start extraction or the crew (SPEC §2, §7.2).
import * as z from "zod";
import { canonicalize, hashHex } from "../core/crew/index.ts";
import { busEntry } from "../core/claims/events.ts";
import { ClaimSchema, ClaimTextSchema } from "../core/claims/claim.ts";
import type { ClaimRecord } from "../core/claims/claim-record.ts";
import { claimFromExtraction, extractionFailureReasonCode } from "../core/claims/extraction.ts";
import { extractionMessages } from "../core/claims/prompts.ts";
import { claimAudit } from "./audit-events.ts";
import type { NeedsReviewDetails, ReviewCauseEvent } from "./audit-events.ts";
import type { PipelineDeps } from "./deps.ts";
import type { Effect } from "./effects.ts";
import { performEffects } from "./perform.ts";
import { reviewFor, reviewRequested } from "./review.ts";

/** The body of `POST /claims`: exactly one of `claim` or `claim_text`, plus optional batch metadata. */
export const SubmissionSchema = z
  .object({
    claim: ClaimSchema.optional(),
    claim_text: ClaimTextSchema.optional(),
    simulation_id: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9_.:-]+$/, "simulation_id may hold letters, digits and _ . : -")
      .optional(),
    label: z.string().max(200).optional(),
  })
  .strict()
  .refine((b) => (b.claim === undefined) !== (b.claim_text === undefined), {
    message: "give exactly one of claim (structured) or claim_text (free text)",
    path: [],
  });

/** One problem with a submission, for the 400 body. */
export interface InputIssue {
  path: string;
  message: string;
}

/** The outcome of a submission. */
export type SubmitResult =
  | { ok: true; claimId: string; status: ClaimRecord["status"]; created: boolean }
  | { ok: false; code: "INVALID_INPUT"; message: string; issues: InputIssue[] }
  | { ok: false; code: "IDEMPOTENCY_CONFLICT"; message: string; claimId: string }
  | { ok: false; code: "OVERLOADED"; message: string; retryAfterS: number };

/** Whether one more claim may be opened now (back-pressure: the local stack bounds its open claims, SPEC §7.2). */
export type Admission = { ok: true } | { ok: false; open: number; bound: number; retryAfterS: number };

/** Turns zod issues into `{ path, message }` pairs. */
export function toInputIssues(error: z.ZodError): InputIssue[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join(".") || "(body)", message: i.message }));
}

/** The dfid of a claim: one decision flow per claim. */
export function dfidOf(claimId: string): string {
  return `dfid_${claimId}`;
}

/**
 * Validates and stores a claim, then starts it (extraction for free text, the crew otherwise).
 * Invalid input stores nothing. A repeated Idempotency-Key with the same body returns the first claim
 * (and restarts it if a crash stopped it before it started); with another body it is a conflict. With
 * `admit`, a valid submission that the stack cannot take now is refused (`OVERLOADED`) and stores nothing.
 */
export async function submitClaim(
  body: unknown,
  opts: { idempotencyKey?: string; claimId?: string; parentClaimId?: string; admit?: () => Promise<Admission> },
  deps: Pick<PipelineDeps, "claims" | "clock" | "ids" | "queues" | "audit" | "publisher" | "reviews" | "ledger">,
): Promise<SubmitResult> {
  const parsed = SubmissionSchema.safeParse(body);
  if (!parsed.success)
    return { ok: false, code: "INVALID_INPUT", message: "the claim is invalid", issues: toInputIssues(parsed.error) };
  const sub = parsed.data;
  if (opts.admit) {
    const admission = await opts.admit();
    if (!admission.ok) {
      return {
        ok: false,
        code: "OVERLOADED",
        message: `${admission.open} claims are open, the bound is ${admission.bound}: try again in ${admission.retryAfterS} s`,
        retryAfterS: admission.retryAfterS,
      };
    }
  }
  const now = deps.clock.now();
  const claimId = opts.claimId ?? deps.ids.next("clm");
  const iso = new Date(now).toISOString();
  const record: ClaimRecord = {
    claim_id: claimId,
    dfid: dfidOf(claimId),
    root_dfid: sub.simulation_id ? `dfid_sim_${sub.simulation_id}` : dfidOf(claimId),
    ...(sub.simulation_id ? { simulation_id: sub.simulation_id } : {}),
    ...(sub.label ? { label: sub.label } : {}),
    ...(opts.parentClaimId ? { parent_claim_id: opts.parentClaimId } : {}),
    status: "RECEIVED",
    input: sub.claim ? { claim: sub.claim } : { claim_text: sub.claim_text! },
    ...(sub.claim ? { claim: sub.claim } : {}),
    received_at: iso,
    updated_at: iso,
  };
  const idem = opts.idempotencyKey ? { key: opts.idempotencyKey, requestHash: hashHex(canonicalize(sub)) } : undefined;
  const created = await deps.claims.createClaim(record, idem);
  if (!created.created) {
    if (!created.sameRequest) {
      return {
        ok: false,
        code: "IDEMPOTENCY_CONFLICT",
        message: "this Idempotency-Key was used with a different body",
        claimId: created.record.claim_id,
      };
    }
    // A crash after storing may have stopped the claim before it started: start it again (idempotent).
    if (created.record.status === "RECEIVED") await performEffects(startEffects(created.record), deps);
    return { ok: true, claimId: created.record.claim_id, status: created.record.status, created: false };
  }
  await performEffects(startEffects(record), deps);
  return { ok: true, claimId, status: record.status, created: true };
}

/**
 * What starts a stored claim: its CLAIM_RECEIVED audit event, then extraction (free text) or the crew. The event
 * carries the receipt time, so a repeat — a client's retry, the sweep restarting a claim whose intake died before
 * its audit — is identical and the audit log drops it.
 */
export function startEffects(record: ClaimRecord): Effect[] {
  const received: Effect[] = [
    {
      kind: "audit",
      event: claimAudit(record, "CLAIM_RECEIVED", "RECEIVED", Date.parse(record.received_at), {
        input_kind: "claim" in record.input ? "claim" : "claim_text",
        input: record.input,
        label: record.label,
        received_at: record.received_at,
      }),
    },
  ];
  if (record.claim) {
    return [
      ...received,
      { kind: "crew_event", claimId: record.claim_id, message: { type: "claim.start", crewId: record.claim_id } },
    ];
  }
  return [...received, { kind: "extraction", claimId: record.claim_id }];
}

/** The outcome of an extraction attempt. */
type ExtractOutcome = "EXTRACTED" | "NEEDS_REVIEW" | "SKIPPED" | "RETRY";

/**
 * Extracts a free-text claim with the LLM. A retryable LLM failure returns `RETRY` (the queue tries
 * again) until `finalAttempt`; every other failure ends the claim in NEEDS_REVIEW with the reason.
 */
export async function extractClaim(
  claimId: string,
  opts: { finalAttempt: boolean },
  deps: Pick<PipelineDeps, "claims" | "clock" | "llm" | "queues" | "audit" | "publisher" | "reviews" | "ledger">,
): Promise<ExtractOutcome> {
  const record = await deps.claims.getClaim(claimId);
  if (!record) return "SKIPPED";
  // An outcome stored by an earlier delivery that died before performing it: perform it now.
  if (await performClaimOutbox(record, deps)) return "SKIPPED";
  if (record.status !== "RECEIVED" || !("claim_text" in record.input)) {
    if (record.claim && record.status === "RUNNING") {
      await performEffects([{ kind: "crew_event", claimId, message: { type: "claim.start", crewId: claimId } }], deps);
    }
    return "SKIPPED";
  }
  const text = record.input.claim_text;
  const result = await deps.llm.complete(extractionMessages(text, { receivedAt: record.received_at }));
  const now = deps.clock.now();
  const llmDetails = { model: result.model, attempts: result.attempts, usage: result.usage, task: "extract_claim" };
  const updatedAt = new Date(now).toISOString();
  if (!result.ok) {
    if (result.retryable && !opts.finalAttempt) return "RETRY";
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
    return (await settleExtraction(record, { updated_at: updatedAt }, effects, deps)) ? "NEEDS_REVIEW" : "SKIPPED";
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
    return (await settleExtraction(record, { updated_at: updatedAt }, effects, deps)) ? "NEEDS_REVIEW" : "SKIPPED";
  }
  const effects: Effect[] = [
    {
      kind: "audit",
      event: claimAudit(record, "CLAIM_EXTRACTED", "RUNNING", now, {
        ...llmDetails,
        extracted: result.value,
        claim: claim.claim,
        warnings: [...result.warnings, ...claim.warnings],
      }),
    },
    { kind: "crew_event", claimId, message: { type: "claim.start", crewId: claimId } },
  ];
  return (await settleExtraction(
    record,
    { claim: claim.claim, extracted: result.value, updated_at: updatedAt },
    effects,
    deps,
  ))
    ? "EXTRACTED"
    : "SKIPPED";
}

/** Every status: clearing an outbox is allowed whatever became of the claim meanwhile. */
const ANY_STATUS: ClaimRecord["status"][] = ["RECEIVED", "RUNNING", "DECIDED", "NEEDS_REVIEW"];

/**
 * Keeps ONE extraction outcome however many deliveries race or repeat after a crash (the model may answer each
 * differently, and each at another instant): the outcome's effects are stored with the claim's move from RECEIVED
 * to RUNNING in one conditional update, then performed, then cleared. The delivery that loses the update performs
 * the winner's stored effects instead (they are idempotent); a failed extraction moves on to NEEDS_REVIEW as the
 * last of its effects, so a claim whose outbox was never performed is still open and the sweep finds it.
 * Returns whether this delivery's outcome is the one kept.
 */
async function settleExtraction(
  record: ClaimRecord,
  patch: Partial<ClaimRecord>,
  effects: Effect[],
  deps: Pick<PipelineDeps, "claims" | "queues" | "audit" | "publisher" | "reviews" | "ledger">,
): Promise<boolean> {
  const won = await deps.claims.updateClaim(record.claim_id, { ...patch, status: "RUNNING", outbox: effects }, [
    "RECEIVED",
  ]);
  if (!won.changed) {
    if (won.record) await performClaimOutbox(won.record, deps);
    return false;
  }
  await performEffects(effects, deps);
  await deps.claims.updateClaim(record.claim_id, { outbox: undefined }, ANY_STATUS);
  return true;
}

/** Performs the claim's stored outbox, if it has one, then clears it; returns whether there was one. */
export async function performClaimOutbox(
  record: ClaimRecord,
  deps: Pick<PipelineDeps, "claims" | "queues" | "audit" | "publisher" | "reviews" | "ledger">,
): Promise<boolean> {
  if (!record.outbox || record.outbox.length === 0) return false;
  await performEffects(record.outbox as Effect[], deps);
  await deps.claims.updateClaim(record.claim_id, { outbox: undefined }, ANY_STATUS);
  return true;
}

/**
 * Effects that end a claim in NEEDS_REVIEW and open its review: the audit (with the failing step's event
 * first), the review (marked pending on the order's ledger when the claim names an order), the
 * `ReviewRequested` and `ClaimNeedsReview` events, and — last, so that a crash before it is repaired by the
 * redelivery doing it all again — the claim's record.
 */
export function needsReview(
  record: ClaimRecord,
  now: number,
  reasonCode: string,
  reason: string,
  details: NeedsReviewDetails = {},
  cause?: ReviewCauseEvent,
): Effect[] {
  const review = reviewFor(record, {
    origin: "NEEDS_REVIEW",
    reasonCode,
    reason,
    now,
    orderId: record.claim?.order_id,
    amountEur: record.claim?.amount_eur,
  });
  const requested = reviewRequested(record, review);
  const entry = busEntry("ClaimNeedsReview", {
    claim_id: record.claim_id,
    dfid: record.dfid,
    reason_code: reasonCode,
    reason,
    review_id: review.review_id,
  });
  return [
    ...(cause
      ? [
          {
            kind: "audit" as const,
            event: claimAudit(
              record,
              cause.type,
              "NEEDS_REVIEW",
              now,
              { reason_code: reasonCode, reason, ...cause.details },
              "WARN",
            ),
          },
        ]
      : []),
    {
      kind: "audit",
      event: claimAudit(
        record,
        "CLAIM_NEEDS_REVIEW",
        "NEEDS_REVIEW",
        now,
        { reason_code: reasonCode, reason, review_id: review.review_id, ...details },
        "WARN",
      ),
    },
    { kind: "audit", event: requested.audit },
    { kind: "review_open", review },
    { kind: "publish", entries: [entry, requested.event] },
    {
      kind: "claim_update",
      claimId: record.claim_id,
      patch: { status: "NEEDS_REVIEW", reason_code: reasonCode, reason, updated_at: new Date(now).toISOString() },
    },
  ];
}
