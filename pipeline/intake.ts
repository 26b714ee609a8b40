// Intake: validate a submission, store the claim, start extraction or the crew (docs/architecture.md).
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { extractionMessages } from "../core/agents/prompts.ts";
import type { PipelineDeps } from "./deps.ts";
import type { Effect } from "./effects.ts";
import {
  extractionDecision,
  extractionAwaited,
  receivedClaim,
  startEffects,
  submissionHash,
  SubmissionSchema,
  toInputIssues,
} from "./decide/intake.ts";
import type { InputIssue } from "./decide/intake.ts";
import { holdDecision } from "./decide/outage.ts";
import { ANY_STATUS, performClaimOutbox, performEffects } from "./perform.ts";

/** The outcome of a submission. */
export type SubmitResult =
  | { ok: true; claimId: string; status: ClaimRecord["status"]; created: boolean }
  | { ok: false; code: "INVALID_INPUT"; message: string; issues: InputIssue[] }
  | { ok: false; code: "IDEMPOTENCY_CONFLICT"; message: string; claimId: string }
  | { ok: false; code: "OVERLOADED"; message: string; retryAfterS: number };

/** Whether one more claim may be opened now (back-pressure: the local stack bounds its open claims, docs/http-api.md). */
export type Admission = { ok: true } | { ok: false; open: number; bound: number; retryAfterS: number };

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
  const record = receivedClaim(
    sub,
    { claimId: opts.claimId ?? deps.ids.next("clm"), parentClaimId: opts.parentClaimId },
    now,
  );
  const idem = opts.idempotencyKey ? { key: opts.idempotencyKey, requestHash: submissionHash(sub) } : undefined;
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
  return { ok: true, claimId: record.claim_id, status: record.status, created: true };
}

/** The outcome of an extraction attempt. */
type ExtractOutcome = "EXTRACTED" | "NEEDS_REVIEW" | "SKIPPED" | "RETRY" | "HELD";

/**
 * Extracts a free-text claim with the LLM. A retryable LLM failure returns `RETRY` (the queue tries
 * again) until `finalAttempt`; every other failure ends the claim in NEEDS_REVIEW with the reason. While the model
 * cannot be reached and the claim's outage hold lasts (docs/llm.md), the extraction is sent again for a little
 * later instead (`HELD`).
 */
export async function extractClaim(
  claimId: string,
  opts: { finalAttempt: boolean },
  deps: Pick<
    PipelineDeps,
    "claims" | "clock" | "llm" | "queues" | "audit" | "publisher" | "reviews" | "ledger" | "settings"
  >,
): Promise<ExtractOutcome> {
  const record = await deps.claims.getClaim(claimId);
  if (!record) return "SKIPPED";
  // An outcome stored by an earlier delivery that died before performing it: perform it now.
  if (await performClaimOutbox(record, deps)) return "SKIPPED";
  const awaited = extractionAwaited(record);
  if (!awaited.awaited) {
    await performEffects(awaited.effects, deps);
    return "SKIPPED";
  }
  const { text } = awaited;
  const result = await deps.llm.complete(extractionMessages(text, { receivedAt: record.received_at }));
  if (!result.ok) {
    const hold = holdDecision(record, result, deps.clock.now(), deps.settings, {
      step: "extraction",
      key: "extraction",
    });
    if (hold) {
      const again = { kind: "extraction" as const, claimId, delayMs: hold.retryInMs };
      await performEffects(hold.resend ? [again, ...hold.effects] : [], deps);
      return "HELD";
    }
  }
  const decision = extractionDecision(record, text, result, { finalAttempt: opts.finalAttempt, now: deps.clock.now() });
  if (decision.outcome === "RETRY") return "RETRY";
  return (await settleExtraction(record, decision.patch, decision.effects, deps)) ? decision.outcome : "SKIPPED";
}

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
