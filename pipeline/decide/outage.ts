// The outage hold, decided (docs/llm.md): a claim that needs a model that cannot be reached waits for it — its
// step or its extraction is tried again a little later — until the hold runs out; from then on it goes on as
// without a hold and ends NEEDS_REVIEW LLM_UNREACHABLE. A call sent through the OpenAI Batch API
// (LLM_BATCH_MODE=batch) waits for its batch the same way, under its own bound (`llmBatchHoldMs`). Pure: the shells
// load, perform and re-send.
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { isFinal } from "../../core/kernel/claim-record.ts";
import { BATCH_PENDING_CODE } from "../../core/llm/errors.ts";
import { claimAudit } from "./audit.ts";
import type { PipelineSettings } from "../deps.ts";
import type { Effect } from "../effects.ts";

/** A held step or extraction is tried again after this long unless the settings say otherwise: the endpoint's recheck. */
export const DEFAULT_LLM_OUTAGE_RETRY_MS = 30_000;

/** The failure an outage hold waits out: the endpoint did not answer at all (refused credentials are a setting to fix). */
const HELD_CODE = "LLM_UNREACHABLE";

type HoldSettings = Pick<PipelineSettings, "llmOutageHoldMs" | "llmBatchHoldMs">;

/** How long a claim may wait from its first failure of this kind: the outage hold, or the batch hold; 0: no hold. */
function boundFor(code: string | undefined, settings: HoldSettings): number {
  if (code === HELD_CODE) return settings.llmOutageHoldMs ?? 0;
  if (code === BATCH_PENDING_CODE) return settings.llmBatchHoldMs ?? 0;
  return 0;
}

/** When the claim's hold runs out: as recorded, else (a hold recorded before `until` was) since + the outage hold. */
function holdEnd(hold: NonNullable<ClaimRecord["llm_hold"]>, settings: HoldSettings): number {
  return hold.until !== undefined
    ? Date.parse(hold.until)
    : Date.parse(hold.since) + Math.max(0, settings.llmOutageHoldMs ?? 0);
}

/** Whether the claim is waiting for the model now: on hold, and the hold has not run out. */
export function isHeld(record: ClaimRecord, now: number, settings: HoldSettings): boolean {
  if (record.llm_hold === undefined || isFinal(record.status)) return false;
  return now < holdEnd(record.llm_hold, settings);
}

/** A held claim's wait: what starts or extends the hold, and whether this delivery sends the work again. */
export interface HoldDecision {
  readonly effects: Effect[];
  /** How long until the work is tried again. */
  readonly retryInMs: number;
  /**
   * False for a surplus copy of the work (a queue's duplicate delivery, or a copy re-sent by a delivery that was
   * itself a duplicate): another copy is already due at the claim's `next_at`, so this one is dropped and copies
   * never multiply while a claim waits.
   */
  readonly resend: boolean;
}

/**
 * Whether a model failure at `now` holds the claim instead of answering its crew or ending its extraction: only
 * for LLM_UNREACHABLE, with a hold configured, on an open claim whose hold (from the first failure) has not run out.
 * `key` names the work (the step's correlation id, or `extraction`). The claim records the hold (CLAIM_HELD audited
 * when it starts) and when this work is next due; a delivery of the same work before then is a surplus copy. The work
 * is tried again after the retry interval, or when the hold runs out if that is sooner (then it fails as without a
 * hold). `undefined`: no hold, go on as before.
 */
export function holdDecision(
  record: ClaimRecord,
  failure: { readonly code?: string | undefined; readonly message: string },
  now: number,
  settings: Pick<PipelineSettings, "llmOutageHoldMs" | "llmOutageRetryMs" | "llmBatchHoldMs">,
  work: { readonly step: "extraction" | "agent_step"; readonly key: string },
): HoldDecision | undefined {
  const boundMs = boundFor(failure.code, settings);
  if (failure.code !== HELD_CODE && failure.code !== BATCH_PENDING_CODE) return undefined;
  if (isFinal(record.status)) return undefined;
  const hold = record.llm_hold;
  // A hold runs until the end it was given when it began (a batch's bound, or the outage's), whatever fails later.
  if (hold === undefined && boundMs <= 0) return undefined;
  const since = hold?.since ?? new Date(now).toISOString();
  const end = hold === undefined ? now + boundMs : holdEnd(hold, settings);
  const left = end - now;
  if (left <= 0) return undefined;
  const retryInMs = Math.max(1_000, Math.min(settings.llmOutageRetryMs ?? DEFAULT_LLM_OUTAGE_RETRY_MS, left));
  if (hold?.key === work.key && hold.next_at !== undefined && now < Date.parse(hold.next_at))
    return { effects: [], retryInMs, resend: false };
  const until = new Date(end).toISOString();
  const waiting = failure.code === BATCH_PENDING_CODE;
  // SQS delays by whole seconds: the copy sent now is delivered at next_at or later.
  const nextAt = new Date(now + Math.ceil(retryInMs / 1000) * 1000).toISOString();
  return {
    retryInMs,
    resend: true,
    // The audit first: a crash between the two leaves a hold the next delivery starts again (and audits), never a
    // recorded hold without its CLAIM_HELD.
    effects: [
      ...(hold !== undefined
        ? []
        : [
            {
              kind: "audit" as const,
              event: claimAudit(
                record,
                "CLAIM_HELD",
                record.status,
                now,
                {
                  reason_code: failure.code,
                  reason: waiting
                    ? `The model's answer is in a batch that has not completed; the claim waits for it until ${until}, then a person decides: ${failure.message}`
                    : `The model could not be reached; the claim waits for it until ${until}, then a person decides: ${failure.message}`,
                  since,
                  until,
                  step: work.step,
                },
                "WARN",
              ),
            },
          ]),
      {
        kind: "claim_update",
        claimId: record.claim_id,
        patch: { llm_hold: { since, key: work.key, next_at: nextAt, until, problem: failure.message.slice(0, 300) } },
        onlyFrom: [record.status],
      },
    ],
  };
}

/** The model answered a held claim: the hold ends (CLAIM_RESUMED). Nothing for a claim not on hold. */
export function resumeAudit(record: ClaimRecord, now: number): Effect[] {
  if (record.llm_hold === undefined) return [];
  const since = record.llm_hold.since;
  return [
    {
      kind: "audit",
      event: claimAudit(record, "CLAIM_RESUMED", record.status, now, {
        held_since: since,
        waited_ms: Math.max(0, now - Date.parse(since)),
      }),
    },
  ];
}

/**
 * A failure no hold waits for any longer, as the crew and the extraction see it: a batch whose answer never came back
 * within its hold is an outage (`LLM_UNREACHABLE`, then a person), naming the last problem the claim waited on; any
 * other failure unchanged.
 */
export function unheldFailure<F extends { readonly code?: string | undefined; readonly message: string }>(
  failure: F,
  record: ClaimRecord | undefined,
): F {
  if (failure.code !== BATCH_PENDING_CODE) return failure;
  const last = record?.llm_hold?.problem ?? failure.message;
  return {
    ...failure,
    code: HELD_CODE,
    message: `the model's answer did not come back from the Batch API before the claim's hold ran out (last: ${last})`,
    ...("retryable" in failure ? { retryable: true } : {}),
  };
}
