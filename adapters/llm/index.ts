// The LLM adapters: the OpenAI-compatible model, configuration, and the scripted test server.
export { createOpenAiModel, defaultSleep, repairMessage, type OpenAiModelOptions, type Sleep, type StructuredOutputMode } from "./openai.ts";
export { toStrictJsonSchema } from "./strict-schema.ts";
export { llmConfigFromEnv, llmTimeoutMsFromEnv, describeLlmConfig, BUILTIN_LLM_DEFAULTS, LOCAL_PLACEHOLDER_KEY, type LlmConfig, type LlmDefaults, type LlmProvider } from "./config.ts";
export { createLlm, type CreateLlmDeps } from "./create.ts";
export { preflightLlm, describePreflight, guardWithPreflight, PREFLIGHT_TIMEOUT_MS, PREFLIGHT_RECHECK_MS, type GuardedLlm, type PreflightResult } from "./preflight.ts";
export { meterLlm, type LlmCallRecord, type LlmCallInFlight, type LlmMeter } from "./meter.ts";
