// The LLM adapters: the OpenAI-compatible model, configuration, and the scripted test server.
export { createOpenAiModel, type OpenAiModelOptions, type Sleep } from "./openai.ts";
export { toStrictJsonSchema } from "./strict-schema.ts";
export {
  llmConfigFromEnv,
  llmDefaultsOfConfig,
  llmTimeoutMsFromEnv,
  describeLlmConfig,
  llmBatchSettingsFromEnv,
  DEFAULT_LLM_BATCH_HOLD_S,
  LOCAL_PLACEHOLDER_KEY,
  type LlmBatchSettings,
  type LlmConfig,
} from "./config.ts";
export { createBatchLlm, createLlm } from "./create.ts";
export { createBatchModel, inMemoryBatchJournal, type BatchModelOptions } from "./batch.ts";
export {
  preflightLlm,
  describePreflight,
  guardWithPreflight,
  PREFLIGHT_RECHECK_MS,
  type PreflightResult,
} from "./preflight.ts";
export { meterLlm, type LlmMeter } from "./meter.ts";
