// The LLM layer: one port, its failure codes, the deterministic rules model and shared helpers.
export type {
  FixableTask,
  LlmFacts,
  LlmFailure,
  LlmMessage,
  LlmOutputSchema,
  LlmPort,
  LlmRequest,
  LlmResult,
  LlmStructuredRequest,
  LlmTask,
  LlmTextRequest,
  LlmUsage,
} from "./port.ts";
export {
  LLM_FAILURE_CODES,
  isRetryableLlmFailure,
  isModelUnavailable,
  LlmConfigError,
  LlmSchemaNotStrictError,
  type LlmFailureCode,
} from "./errors.ts";
export { createRulesModel } from "./rules-model.ts";
export {
  assessClaim,
  confidenceFrom,
  formatAssessment,
  type ClaimAssessment,
} from "./rules-assessment.ts";
export { parseJsonFromText, readStructuredOutput } from "./structured-output.ts";
export { estimateUsage, sumUsage } from "./usage.ts";
