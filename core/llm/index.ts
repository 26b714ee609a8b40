// The LLM layer: one port, its failure codes and shared helpers (the deterministic rules model of the claims crew is core/agents/rules-model.ts).
export type {
  BatchJournal,
  FixableTask,
  LlmPromptFacts,
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
  BATCH_PENDING_CODE,
  isRetryableLlmFailure,
  isModelUnavailable,
  LlmConfigError,
  LlmSchemaNotStrictError,
  type LlmFailureCode,
} from "./errors.ts";
export { parseJsonFromText, readStructuredOutput } from "./structured-output.ts";
export { estimateUsage, sumUsage } from "./usage.ts";
