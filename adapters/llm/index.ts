// The LLM adapters: the OpenAI-compatible model, configuration, and the scripted test server.
export { createOpenAiModel, defaultSleep, type OpenAiModelOptions, type Sleep } from "./openai.ts";
export { toStrictJsonSchema } from "./strict-schema.ts";
export { llmConfigFromEnv, describeLlmConfig, BUILTIN_LLM_DEFAULTS, LOCAL_PLACEHOLDER_KEY, type LlmConfig, type LlmDefaults, type LlmProvider } from "./config.ts";
export { createLlm, type CreateLlmDeps } from "./create.ts";
