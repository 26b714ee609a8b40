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
  LlmSuccess,
  LlmTask,
  LlmTextRequest,
  LlmUsage,
} from "./port.ts";
export {
  LLM_FAILURE_CODES,
  RETRYABLE_LLM_FAILURES,
  isRetryableLlmFailure,
  isModelUnavailable,
  MODEL_UNAVAILABLE_FAILURES,
  LlmConfigError,
  LlmSchemaNotStrictError,
  type LlmErrorCode,
  type LlmFailureCode,
} from "./errors.ts";
export { createRulesModel, RULES_MODEL_NAME, type RulesModelOptions } from "./rules-model.ts";
export {
  assessClaim,
  confidenceFrom,
  formatAssessment,
  type AssessmentFlag,
  type AssessmentFlagCode,
  type ClaimAssessment,
  type FlagWeight,
} from "./rules-assessment.ts";
export { parseJsonFromText, readStructuredOutput, type JsonFromText, type JsonSource, type StructuredOutput } from "./structured-output.ts";
export { estimateTokens, estimateUsage, sumUsage } from "./usage.ts";
