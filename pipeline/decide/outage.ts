// The outage hold, decided (docs/llm.md): a claim that needs a model that cannot be reached waits for it — its
// step or its extraction is tried again a little later — until the hold runs out; from then on it goes on as
// without a hold and ends NEEDS_REVIEW LLM_UNREACHABLE. Pure: the shells load, perform and re-send.
import type { ClaimRecord } from "../../core/claims/claim-record.ts";
import { isFinal } from "../../core/claims/claim-record.ts";
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

/** A held claim's wait: what starts (or keeps) the hold, and how long until its work is tried again. */
export interface HoldDecision {
  readonly effects: Effect[];
  readonly retryInMs: number;
}

/**
 * Whether a model failure at `now` holds the claim instead of answering its crew or ending its extraction: only
 * for LLM_UNREACHABLE, with a hold configured, on an open claim whose hold (from the first failure) has not run out.
 * A claim not yet on hold is put on hold (a conditional update from the status it was read in) and CLAIM_HELD
 * audited; one already on hold changes nothing. The work is tried again after the retry interval, or when the hold
 * runs out if that is sooner (then it fails as without a hold). `undefined`: no hold, go on as before.
 */
export function holdDecision(
  record: ClaimRecord,
  failure: { readonly code?: string | undefined; readonly message: string },
  now: number,
  settings: Pick<PipelineSettings, "llmOutageHoldMs" | "llmOutageRetryMs">,
  step: "extraction" | "agent_step",
): HoldDecision | undefined {
  const holdMs = settings.llmOutageHoldMs ?? 0;
  if (holdMs <= 0 || failure.code !== HELD_CODE || isFinal(record.status)) return undefined;
  const since = record.llm_hold?.since ?? new Date(now).toISOString();
  const left = Date.parse(since) + holdMs - now;
  if (left <= 0) return undefined;
  const retryInMs = Math.max(1_000, Math.min(settings.llmOutageRetryMs ?? DEFAULT_LLM_OUTAGE_RETRY_MS, left));
  if (record.llm_hold !== undefined) return { effects: [], retryInMs };
  const until = new Date(Date.parse(since) + holdMs).toISOString();
  return {
    retryInMs,
    effects: [
      {
        kind: "claim_update",
        claimId: record.claim_id,
        patch: { llm_hold: { since } },
        onlyFrom: [record.status],
      },
      {
        kind: "audit",
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
            step,
          },
          "WARN",
        ),
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
