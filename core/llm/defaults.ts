// The LLM settings used when neither the config file nor the environment gives one: defined once, read by
// the config schema (core/claim/config.ts) and the adapter's settings (adapters/llm/config.ts).

/** Built-in LLM defaults: the offline rules model; for `openai`, a local Ollama serving gemma3:4b (the seed's model). */
export const LLM_DEFAULTS = {
  provider: "rules",
  baseUrl: "http://localhost:11434/v1",
  model: "gemma3:4b",
  /** A call's whole budget, retries included. */
  timeoutMs: 30_000,
  maxRetries: 2,
  /** 0: the same claim gets the same answer where the backend allows it. */
  temperature: 0,
} as const;
