// LLM settings read once at the edge from the environment, over defaults from the config file.
import { LLM_DEFAULTS } from "../../core/llm/defaults.ts";
import { LlmConfigError } from "../../core/llm/errors.ts";

/** Which implementation of the LLM port to use. */
type LlmProvider = "rules" | "openai";

/** LLM configuration after validation; the API key is only ever in `apiKey` and never logged. */
export type LlmConfig =
  | { readonly provider: "rules"; readonly timeoutMs: number }
  | {
      readonly provider: "openai";
      readonly baseURL: string;
      readonly model: string;
      readonly apiKey: string;
      readonly timeoutMs: number;
      readonly maxRetries: number;
      readonly temperature: number;
    };

/** Defaults from `scenarios/config.yaml` (LLM defaults); secrets never come from the config file. */
interface LlmDefaults {
  readonly provider?: LlmProvider | undefined;
  readonly baseURL?: string | undefined;
  readonly model?: string | undefined;
  readonly timeoutMs?: number | undefined;
  readonly maxRetries?: number | undefined;
  readonly temperature?: number | undefined;
}

/** The defaults a config file's `llm_defaults` section gives (its names as the file spells them). */
export function llmDefaultsOfConfig(llm: {
  readonly provider: LlmProvider;
  readonly model: string;
  readonly base_url: string;
  readonly timeout_ms: number;
  readonly max_retries: number;
  readonly temperature: number;
}): LlmDefaults {
  return {
    provider: llm.provider,
    model: llm.model,
    baseURL: llm.base_url,
    timeoutMs: llm.timeout_ms,
    maxRetries: llm.max_retries,
    temperature: llm.temperature,
  };
}

/** Built-in defaults (core/llm/defaults.ts, the one definition the config schema uses too). */
const BUILTIN_LLM_DEFAULTS = {
  provider: LLM_DEFAULTS.provider,
  baseURL: LLM_DEFAULTS.baseUrl,
  model: LLM_DEFAULTS.model,
  timeoutMs: LLM_DEFAULTS.timeoutMs,
  maxRetries: LLM_DEFAULTS.maxRetries,
  temperature: LLM_DEFAULTS.temperature,
} as const satisfies Required<LlmDefaults>;

/** The placeholder key sent to local servers (Ollama, vLLM) that ignore it. */
export const LOCAL_PLACEHOLDER_KEY = "local-no-key";

type Env = Readonly<Record<string, string | undefined>>;

function setting(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === "" ? undefined : v;
}

function integer(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new LlmConfigError(name, `${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return Number(raw);
}

/** Validates an http(s) base URL; a URL without a path (`http://localhost:11434`) gets `/v1`, the OpenAI-compatible root. */
function url(name: string, raw: string): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch (cause) {
    throw new LlmConfigError(name, `${name} must be an http(s) URL such as http://localhost:11434/v1, got '${raw}'`, {
      cause,
    });
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new LlmConfigError(name, `${name} must be an http(s) URL, got '${raw}'`);
  }
  const trimmed = raw.trim().replace(/\/+$/, "");
  return parsed.pathname === "/" || parsed.pathname === "" ? `${trimmed}/v1` : trimmed;
}

/**
 * Reads `LLM_PROVIDER` (rules|openai), `LLM_BASE_URL` (else `OLLAMA_BASE_URL`; a URL without a path gets `/v1`), `LLM_MODEL`
 * (else `OLLAMA_MODEL`), `LLM_API_KEY`, `LLM_TIMEOUT_MS`, `LLM_MAX_RETRIES` and `LLM_TEMPERATURE` over
 * `defaults`; throws LlmConfigError naming the setting that is wrong. In AWS pass the SST secret as
 * `LLM_API_KEY` in `env`.
 */
export function llmConfigFromEnv(env: Env, defaults: LlmDefaults = {}): LlmConfig {
  const d = { ...BUILTIN_LLM_DEFAULTS, ...stripUndefined(defaults) };
  const providerRaw = setting(env, "LLM_PROVIDER")?.toLowerCase() ?? d.provider;
  if (providerRaw !== "rules" && providerRaw !== "openai") {
    throw new LlmConfigError("LLM_PROVIDER", `LLM_PROVIDER must be 'rules' or 'openai', got '${providerRaw}'`);
  }
  const timeoutMs = integer("LLM_TIMEOUT_MS", setting(env, "LLM_TIMEOUT_MS"), d.timeoutMs, 1, 900_000);
  const maxRetries = integer("LLM_MAX_RETRIES", setting(env, "LLM_MAX_RETRIES"), d.maxRetries, 0, 10);
  const temperatureRaw = setting(env, "LLM_TEMPERATURE");
  let temperature: number = d.temperature;
  if (temperatureRaw !== undefined) {
    temperature = Number(temperatureRaw);
    if (!/^\d+(\.\d+)?$/.test(temperatureRaw) || temperature > 2) {
      throw new LlmConfigError(
        "LLM_TEMPERATURE",
        `LLM_TEMPERATURE must be a number from 0 to 2, got '${temperatureRaw}'`,
      );
    }
  }
  if (providerRaw === "rules") return { provider: "rules", timeoutMs };

  const explicit = setting(env, "LLM_BASE_URL");
  const ollama = setting(env, "OLLAMA_BASE_URL");
  // Ollama documents its server as http://localhost:11434: a URL without a path gets /v1 from any source.
  const baseURL =
    explicit !== undefined
      ? url("LLM_BASE_URL", explicit)
      : ollama !== undefined
        ? ollamaV1(url("OLLAMA_BASE_URL", ollama))
        : url("llm_defaults.base_url", d.baseURL);
  const model = setting(env, "LLM_MODEL") ?? setting(env, "OLLAMA_MODEL") ?? d.model;
  if (model.trim() === "")
    throw new LlmConfigError("LLM_MODEL", "LLM_MODEL is empty; set LLM_MODEL (or OLLAMA_MODEL), e.g. gemma3:4b");
  let apiKey = setting(env, "LLM_API_KEY");
  if (apiKey === undefined) {
    if (new URL(baseURL).hostname === "api.openai.com") {
      throw new LlmConfigError("LLM_API_KEY", `LLM_API_KEY is required for ${baseURL}`);
    }
    apiKey = LOCAL_PLACEHOLDER_KEY;
  }
  return { provider: "openai", baseURL, model, apiKey, timeoutMs, maxRetries, temperature };
}

/**
 * Only the LLM's time budget (`LLM_TIMEOUT_MS` over the config file's `timeout_ms`), for the functions
 * that derive their waits from it without calling a model (no API key needed).
 */
export function llmTimeoutMsFromEnv(env: Env, fallbackMs: number = BUILTIN_LLM_DEFAULTS.timeoutMs): number {
  return integer("LLM_TIMEOUT_MS", setting(env, "LLM_TIMEOUT_MS"), fallbackMs, 1, 900_000);
}

/** Whether a batch run's model calls go through the OpenAI Batch API, and how long its claims may wait for a batch. */
export type LlmBatchSettings = { readonly mode: "off" } | { readonly mode: "batch"; readonly holdMs: number };

/** How long a claim waits for its batch when LLM_BATCH_HOLD_S is not set: the Batch API's 24 h window and an hour. */
export const DEFAULT_LLM_BATCH_HOLD_S = 90_000;

/**
 * Reads `LLM_BATCH_MODE` (`off`, the default, or `batch`) and `LLM_BATCH_HOLD_S` (whole seconds from 60 to 604800,
 * default 90000); `provider` is the effective LLM provider: the Batch API needs `openai`. Throws LlmConfigError
 * naming the setting that is wrong.
 */
export function llmBatchSettingsFromEnv(env: Env, provider: LlmProvider): LlmBatchSettings {
  const mode = setting(env, "LLM_BATCH_MODE")?.toLowerCase() ?? "off";
  if (mode !== "off" && mode !== "batch")
    throw new LlmConfigError("LLM_BATCH_MODE", `LLM_BATCH_MODE must be 'off' or 'batch', got '${mode}'`);
  if (mode === "off") return { mode };
  if (provider !== "openai")
    throw new LlmConfigError(
      "LLM_BATCH_MODE",
      "LLM_BATCH_MODE=batch needs LLM_PROVIDER=openai (an endpoint with the OpenAI Batch API); the rules model has none",
    );
  const holdS = integer("LLM_BATCH_HOLD_S", setting(env, "LLM_BATCH_HOLD_S"), DEFAULT_LLM_BATCH_HOLD_S, 60, 604_800);
  return { mode, holdMs: holdS * 1000 };
}

/** A one-line description of the configuration that is safe to log: it never contains the API key. */
export function describeLlmConfig(config: LlmConfig): string {
  if (config.provider === "rules") return `llm provider=rules timeoutMs=${config.timeoutMs}`;
  const key = config.apiKey === LOCAL_PLACEHOLDER_KEY ? "none" : "set";
  return `llm provider=openai model=${config.model} baseURL=${config.baseURL} timeoutMs=${config.timeoutMs} maxRetries=${config.maxRetries} temperature=${config.temperature} apiKey=${key}`;
}

/** OLLAMA_BASE_URL names Ollama's server, whose OpenAI-compatible API is always under /v1. */
function ollamaV1(base: string): string {
  return /\/v1$/.test(base) ? base : `${base}/v1`;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
