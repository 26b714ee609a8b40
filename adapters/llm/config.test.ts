import { LLM_DEFAULTS } from "../../core/llm/defaults.ts";
import { describe, expect, it } from "vitest";
import { LlmConfigError } from "../../core/llm/errors.ts";
import {
  DEFAULT_LLM_BATCH_HOLD_S,
  describeLlmConfig,
  llmBatchSettingsFromEnv,
  llmConfigFromEnv,
  llmTimeoutMsFromEnv,
  LOCAL_PLACEHOLDER_KEY,
} from "./config.ts";

describe("llmConfigFromEnv", () => {
  it("defaults to the rules model", () => {
    expect(llmConfigFromEnv({})).toEqual({ provider: "rules", timeoutMs: LLM_DEFAULTS.timeoutMs });
  });

  it("reads an OpenAI-compatible configuration", () => {
    expect(
      llmConfigFromEnv({
        LLM_PROVIDER: "OpenAI",
        LLM_BASE_URL: "https://api.openai.com/v1/",
        LLM_MODEL: "gpt-4o-mini",
        LLM_API_KEY: "sk-x",
        LLM_TIMEOUT_MS: "2500",
        LLM_MAX_RETRIES: "0",
        LLM_TEMPERATURE: "0.2",
      }),
    ).toEqual({
      provider: "openai",
      baseURL: "https://api.openai.com/v1",
      model: "gpt-4o-mini",
      apiKey: "sk-x",
      timeoutMs: 2500,
      maxRetries: 0,
      temperature: 0.2,
    });
  });

  const fallbacks: Array<[string, Record<string, string>, { baseURL: string; model: string }]> = [
    [
      "Ollama variables",
      { OLLAMA_BASE_URL: "http://ollama:11434/", OLLAMA_MODEL: "llama3.2" },
      { baseURL: "http://ollama:11434/v1", model: "llama3.2" },
    ],
    [
      "an Ollama URL that already ends in /v1",
      { OLLAMA_BASE_URL: "http://ollama:11434/v1" },
      { baseURL: "http://ollama:11434/v1", model: "gemma3:4b" },
    ],
    [
      "LLM_* over OLLAMA_*",
      {
        LLM_BASE_URL: "http://vllm:8000/v1",
        OLLAMA_BASE_URL: "http://ollama:11434",
        LLM_MODEL: "m",
        OLLAMA_MODEL: "o",
      },
      { baseURL: "http://vllm:8000/v1", model: "m" },
    ],
    ["built-in defaults", {}, { baseURL: "http://localhost:11434/v1", model: "gemma3:4b" }],
  ];
  it.each(fallbacks)("falls back to %s", (_name, env, expected) => {
    expect(llmConfigFromEnv({ LLM_PROVIDER: "openai", ...env })).toMatchObject({
      ...expected,
      apiKey: LOCAL_PLACEHOLDER_KEY,
    });
  });

  const pathless: Array<[string, Record<string, string>, { baseURL?: string } | undefined, string]> = [
    ["LLM_BASE_URL", { LLM_BASE_URL: "http://localhost:11434" }, undefined, "http://localhost:11434/v1"],
    ["LLM_BASE_URL with a slash", { LLM_BASE_URL: "http://localhost:11434/" }, undefined, "http://localhost:11434/v1"],
    ["OLLAMA_BASE_URL", { OLLAMA_BASE_URL: "http://localhost:11434" }, undefined, "http://localhost:11434/v1"],
    ["the config file's base_url (the seed's)", {}, { baseURL: "http://localhost:11434" }, "http://localhost:11434/v1"],
  ];
  it.each(pathless)("adds /v1 to a base URL without a path given as %s", (_name, env, defaults, baseURL) => {
    expect(llmConfigFromEnv({ LLM_PROVIDER: "openai", ...env }, defaults)).toMatchObject({ baseURL });
  });

  it("keeps a base URL that has a path as written", () => {
    expect(
      llmConfigFromEnv({
        LLM_PROVIDER: "openai",
        LLM_BASE_URL: "https://gateway.example/openai/v1/",
        LLM_API_KEY: "k",
      }),
    ).toMatchObject({ baseURL: "https://gateway.example/openai/v1" });
    expect(llmConfigFromEnv({ LLM_PROVIDER: "openai" }, { baseURL: "http://gpu:8000/serving" })).toMatchObject({
      baseURL: "http://gpu:8000/serving",
    });
  });

  it("reads the time budget alone for functions that only derive their waits from it", () => {
    expect(llmTimeoutMsFromEnv({}, 30_000)).toBe(30_000);
    expect(
      llmTimeoutMsFromEnv(
        { LLM_TIMEOUT_MS: "90000", LLM_PROVIDER: "openai", LLM_BASE_URL: "https://api.openai.com/v1" },
        30_000,
      ),
    ).toBe(90_000);
    expect(() => llmTimeoutMsFromEnv({ LLM_TIMEOUT_MS: "soon" })).toThrow(/LLM_TIMEOUT_MS must be an integer/);
  });

  it("takes defaults from the config file under the environment", () => {
    const defaults = {
      provider: "openai" as const,
      baseURL: "http://gpu:8000/v1",
      model: "qwen",
      timeoutMs: 30_000,
      maxRetries: 1,
      temperature: 0.1,
    };
    expect(llmConfigFromEnv({}, defaults)).toMatchObject({
      provider: "openai",
      baseURL: "http://gpu:8000/v1",
      model: "qwen",
      timeoutMs: 30_000,
      maxRetries: 1,
    });
    expect(llmConfigFromEnv({ LLM_PROVIDER: "rules" }, defaults)).toEqual({ provider: "rules", timeoutMs: 30_000 });
  });

  const bad: Array<[Record<string, string>, string, RegExp]> = [
    [{ LLM_PROVIDER: "foo" }, "LLM_PROVIDER", /LLM_PROVIDER must be 'rules' or 'openai', got 'foo'/],
    [{ LLM_TIMEOUT_MS: "abc" }, "LLM_TIMEOUT_MS", /LLM_TIMEOUT_MS must be an integer from 1 to 900000, got 'abc'/],
    [{ LLM_TIMEOUT_MS: "0" }, "LLM_TIMEOUT_MS", /got '0'/],
    [{ LLM_MAX_RETRIES: "-1" }, "LLM_MAX_RETRIES", /LLM_MAX_RETRIES/],
    [{ LLM_TEMPERATURE: "hot" }, "LLM_TEMPERATURE", /LLM_TEMPERATURE/],
    [
      { LLM_PROVIDER: "openai", LLM_BASE_URL: "localhost:11434" },
      "LLM_BASE_URL",
      /LLM_BASE_URL must be an http\(s\) URL/,
    ],
    [{ LLM_PROVIDER: "openai", LLM_BASE_URL: "not a url" }, "LLM_BASE_URL", /LLM_BASE_URL must be an http\(s\) URL/],
    [{ LLM_PROVIDER: "openai", LLM_BASE_URL: "https://api.openai.com/v1" }, "LLM_API_KEY", /LLM_API_KEY is required/],
  ];
  it.each(bad)("refuses %j naming %s", (env, settingName, message) => {
    let caught: unknown;
    try {
      llmConfigFromEnv(env);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(LlmConfigError);
    expect((caught as LlmConfigError).setting).toBe(settingName);
    expect((caught as LlmConfigError).code).toBe("LLM_CONFIG_INVALID");
    expect((caught as Error).message).toMatch(message);
  });
});

describe("describeLlmConfig", () => {
  it("never contains the API key", () => {
    const config = llmConfigFromEnv({ LLM_PROVIDER: "openai", LLM_API_KEY: "sk-very-secret" });
    const line = describeLlmConfig(config);
    expect(line).not.toContain("sk-very-secret");
    expect(line).toContain("apiKey=set");
    expect(line).toContain("model=gemma3:4b");
  });
});

describe("llmBatchSettingsFromEnv", () => {
  it("is off unless LLM_BATCH_MODE says batch, and then waits 25 h for a batch unless LLM_BATCH_HOLD_S says otherwise", () => {
    expect(llmBatchSettingsFromEnv({}, "openai")).toEqual({ mode: "off" });
    expect(llmBatchSettingsFromEnv({ LLM_BATCH_MODE: "off" }, "rules")).toEqual({ mode: "off" });
    expect(llmBatchSettingsFromEnv({ LLM_BATCH_MODE: "Batch" }, "openai")).toEqual({
      mode: "batch",
      holdMs: DEFAULT_LLM_BATCH_HOLD_S * 1000,
    });
    expect(llmBatchSettingsFromEnv({ LLM_BATCH_MODE: "batch", LLM_BATCH_HOLD_S: "7200" }, "openai")).toEqual({
      mode: "batch",
      holdMs: 7_200_000,
    });
  });

  it.each([
    [{ LLM_BATCH_MODE: "half-price" }, "openai", "LLM_BATCH_MODE", /must be 'off' or 'batch', got 'half-price'/],
    [{ LLM_BATCH_MODE: "batch" }, "rules", "LLM_BATCH_MODE", /needs LLM_PROVIDER=openai/],
    [{ LLM_BATCH_MODE: "batch", LLM_BATCH_HOLD_S: "30" }, "openai", "LLM_BATCH_HOLD_S", /from 60 to 604800, got '30'/],
  ] as const)("refuses %j with %s, naming the setting", (env, provider, setting, message) => {
    const attempt = () => llmBatchSettingsFromEnv(env, provider);
    expect(attempt).toThrow(LlmConfigError);
    expect(attempt).toThrow(message);
    try {
      attempt();
    } catch (e) {
      expect((e as LlmConfigError).setting).toBe(setting);
    }
  });
});
