// Errors of the LLM layer: stable failure codes returned by every LlmPort, and the few thrown
// errors for broken configuration or invariants.
import { ClaimsError } from "../errors.ts";

/** Every way an LLM call can fail; the orchestrator turns these into `agent.step.failed`. */
export const LLM_FAILURE_CODES = [
  "LLM_TIMEOUT",
  "LLM_UNREACHABLE",
  "LLM_RATE_LIMITED",
  "LLM_SERVER_ERROR",
  "LLM_AUTH_FAILED",
  "LLM_BAD_REQUEST",
  "LLM_INVALID_JSON",
  "LLM_SCHEMA_VIOLATION",
  "LLM_EMPTY_RESPONSE",
  "LLM_REFUSED",
  "LLM_ABORTED",
  "LLM_BATCH_PENDING",
] as const;

/** A stable LLM failure code. */
export type LlmFailureCode = (typeof LLM_FAILURE_CODES)[number];

/** Failure codes worth trying again later (a redelivery, the intake queue), as opposed to a bad request or a bad answer. */
const RETRYABLE_LLM_FAILURES: ReadonlySet<LlmFailureCode> = new Set<LlmFailureCode>([
  "LLM_TIMEOUT",
  "LLM_UNREACHABLE",
  "LLM_RATE_LIMITED",
  "LLM_SERVER_ERROR",
  "LLM_BATCH_PENDING",
]);

/**
 * The answer is not there yet: the call went to the OpenAI Batch API (LLM_BATCH_MODE=batch, docs/llm.md) and its
 * batch has not completed, or what the batch endpoint gave back could not be read yet. The claim waits for it as it
 * waits out an outage (pipeline/decide/outage.ts), then a person decides.
 */
export const BATCH_PENDING_CODE = "LLM_BATCH_PENDING" satisfies LlmFailureCode;

/** Whether a failure code names a transient condition rather than a bad request or answer. */
export function isRetryableLlmFailure(code: LlmFailureCode): boolean {
  return RETRYABLE_LLM_FAILURES.has(code);
}

/** Failure codes that say the model could not be used at all (down, or refusing the credentials), not that it answered badly. */
const MODEL_UNAVAILABLE_FAILURES: ReadonlySet<string> = new Set<LlmFailureCode>(["LLM_UNREACHABLE", "LLM_AUTH_FAILED"]);

/** Whether a (step or call) failure code says the model could not be used at all; such a claim ends in NEEDS_REVIEW under that code. */
export function isModelUnavailable(code: string | undefined): code is "LLM_UNREACHABLE" | "LLM_AUTH_FAILED" {
  return code !== undefined && MODEL_UNAVAILABLE_FAILURES.has(code);
}

/** Codes of the errors this module throws (broken configuration or invariants, never a model's answer). */
type LlmErrorCode = "LLM_CONFIG_INVALID" | "LLM_SCHEMA_NOT_STRICT";

/** Configuration for the LLM (environment or config file) is missing or malformed; the message names the setting. */
export class LlmConfigError extends ClaimsError<LlmErrorCode> {
  /** The setting that is wrong, e.g. `LLM_PROVIDER`. */
  readonly setting: string;

  constructor(setting: string, message: string, options?: { cause?: unknown }) {
    super("LLM_CONFIG_INVALID", message, options);
    this.setting = setting;
  }
}

/** A zod schema cannot be turned into an OpenAI strict JSON schema (e.g. an `.optional()` field). */
export class LlmSchemaNotStrictError extends ClaimsError<LlmErrorCode> {
  constructor(schemaName: string, message: string) {
    super("LLM_SCHEMA_NOT_STRICT", `schema '${schemaName}' cannot be used for strict structured output: ${message}`);
  }
}

/** A model price table file that cannot be used: the file and what is wrong (a configuration error, exit 2). */
export class PriceTableError extends ClaimsError<"PRICE_TABLE"> {
  readonly exitCode = 2;
  constructor(message: string) {
    super("PRICE_TABLE", message);
  }
}
