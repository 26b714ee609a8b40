// The outage hold, decided (docs/llm.md): a claim that needs a model that cannot be reached waits for it — its
// step or its extraction is tried again a little later — until the hold runs out; from then on it goes on as
// without a hold and ends NEEDS_REVIEW LLM_UNREACHABLE. Pure: the shells load, perform and re-send.
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { isFinal } from "../../core/kernel/claim-record.ts";
import { claimAudit } from "./audit.ts";
import type { PipelineSettings } from "../deps.ts";
import type { Effect } from "../effects.ts";

/** A held step or extraction is tried again after this long unless the settings say otherwise: the endpoint's recheck. */
export const DEFAULT_LLM_OUTAGE_RETRY_MS = 30_000;

/** The only failure a hold waits out: the endpoint did not answer at all (refused credentials are a setting to fix). */
const HELD_CODE = "LLM_UNREACHABLE";

/** Whether the claim is waiting for the model now: on hold, and the hold has not run out. */
export function isHeld(record: ClaimRecord, now: number, settings: Pick<PipelineSettings, "llmOutageHoldMs">): boolean {
  const holdMs = settings.llmOutageHoldMs ?? 0;
  if (record.llm_hold === undefined || holdMs <= 0 || isFinal(record.status)) return false;
  return now - Date.parse(record.llm_hold.since) < holdMs;
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
  settings: Pick<PipelineSettings, "llmOutageHoldMs" | "llmOutageRetryMs">,
  work: { readonly step: "extraction" | "agent_step"; readonly key: string },
): HoldDecision | undefined {
  const holdMs = settings.llmOutageHoldMs ?? 0;
  if (holdMs <= 0 || failure.code !== HELD_CODE || isFinal(record.status)) return undefined;
  const hold = record.llm_hold;
  const since = hold?.since ?? new Date(now).toISOString();
  const left = Date.parse(since) + holdMs - now;
  if (left <= 0) return undefined;
  const retryInMs = Math.max(1_000, Math.min(settings.llmOutageRetryMs ?? DEFAULT_LLM_OUTAGE_RETRY_MS, left));
  if (hold?.key === work.key && hold.next_at !== undefined && now < Date.parse(hold.next_at))
    return { effects: [], retryInMs, resend: false };
  const until = new Date(Date.parse(since) + holdMs).toISOString();
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
                  reason_code: HELD_CODE,
                  reason: `The model could not be reached; the claim waits for it until ${until}, then a person decides: ${failure.message}`,
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
        patch: { llm_hold: { since, key: work.key, next_at: nextAt } },
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
