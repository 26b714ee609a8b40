// The composition helper: the LLM port named by the configuration.
import type OpenAI from "openai";
import type { LlmPort } from "../../core/llm/port.ts";
import { createRulesModel } from "../../core/agents/rules-model.ts";
import type { ClaimsContract, ResponsibilityContract } from "../../core/integrity/contracts.ts";
import type { LlmConfig } from "./config.ts";
import { createOpenAiModel, type Sleep } from "./openai.ts";
import { createBatchModel } from "./batch.ts";
import type { BatchJournal } from "../../core/llm/port.ts";

/** What building a model may need beside its configuration. */
interface CreateLlmDeps {
  /** The contract the rules model reasons with (network models read it from the prompts). */
  readonly contract: ClaimsContract;
  readonly responsibility?: ResponsibilityContract | undefined;
  readonly client?: OpenAI | undefined;
  readonly sleep?: Sleep | undefined;
}

/** Builds the configured LlmPort; an openai configuration never silently falls back to rules. */
export function createLlm(config: LlmConfig, deps: CreateLlmDeps): LlmPort {
  if (config.provider === "rules")
    return createRulesModel({ contract: deps.contract, responsibility: deps.responsibility });
  return createOpenAiModel({
    baseURL: config.baseURL,
    apiKey: config.apiKey,
    model: config.model,
    timeoutMs: config.timeoutMs,
    maxRetries: config.maxRetries,
    temperature: config.temperature,
    client: deps.client,
    sleep: deps.sleep,
  });
}

/** The model behind the OpenAI Batch API of an openai configuration (LLM_BATCH_MODE=batch), its batches kept in `journal`. */
export function createBatchLlm(config: Extract<LlmConfig, { provider: "openai" }>, journal?: BatchJournal): LlmPort {
  return createBatchModel({
    baseURL: config.baseURL,
    apiKey: config.apiKey,
    model: config.model,
    temperature: config.temperature,
    timeoutMs: config.timeoutMs,
    journal,
  });
}
