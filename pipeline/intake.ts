// Intake: the shells of pipeline/decide/intake.ts — a submission validated, admitted, stored and started
// (extraction for free text, the crew otherwise), and a free-text claim's extraction (docs/architecture.md). Each
// loops over its decider: the effects performed in order, what it asks read or written, the answer fed back.
import type { PipelineDeps } from "./deps.ts";
import { decideExtraction, decideSubmission, extractionStart, startSubmission } from "./decide/intake.ts";
import type { ExtractOutcome, SubmitResult } from "./decide/intake.ts";
import type { Admission } from "./decide/requests.ts";
import { runDecider } from "./perform.ts";

export type { SubmitResult } from "./decide/intake.ts";
export type { Admission } from "./decide/requests.ts";

/**
 * Validates and stores a claim, then starts it (extraction for free text, the crew otherwise).
 * Invalid input stores nothing. A repeated Idempotency-Key with the same body returns the first claim
 * (and restarts it if a crash stopped it before it started); with another body it is a conflict. With
 * `admit`, a valid submission that the stack cannot take now is refused (`OVERLOADED`) and stores nothing.
 */
export async function submitClaim(
  body: unknown,
  opts: { idempotencyKey?: string; claimId?: string; parentClaimId?: string; admit?: () => Promise<Admission> },
  deps: Pick<
    PipelineDeps,
    "claims" | "clock" | "ids" | "queues" | "audit" | "publisher" | "reviews" | "ledger" | "orders"
  >,
): Promise<SubmitResult> {
  const { admit, ...rest } = opts;
  const first = startSubmission(body, { ...rest, ...(admit ? { admit: true } : {}) });
  return runDecider(first, decideSubmission, { ...deps, ...(admit ? { admit } : {}) });
}

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
    "claims" | "clock" | "llm" | "batchLlm" | "queues" | "audit" | "publisher" | "reviews" | "ledger" | "settings"
  >,
): Promise<ExtractOutcome> {
  const claim = await deps.claims.getClaim(claimId);
  const decide = (state: Parameters<typeof decideExtraction>[0], observed: Parameters<typeof decideExtraction>[1]) =>
    decideExtraction(state, observed, deps);
  return runDecider(decide(extractionStart(claimId, opts.finalAttempt), { kind: "claim", claim }), decide, deps);
}
