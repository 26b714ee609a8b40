// The LLM of the two functions that call a model (worker, intake-extract). Kept out of compose.ts so
// that the other functions' bundles do not carry the openai SDK (and the intake API never waits on a model).
// A network model sits behind its endpoint check: the first call of a cold start checks the endpoint
// (a few seconds at most, once per container); while it is down every call fails at once naming URL,
// model and error (the claim ends NEEDS_REVIEW LLM_UNREACHABLE), and it is checked again after 30 s.
import {
  createBatchLlm,
  createLlm,
  llmBatchSettingsFromEnv,
  guardWithPreflight,
  llmConfigFromEnv,
  llmDefaultsOfConfig,
  preflightLlm,
} from "../../adapters/llm/index.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import type { BatchJournal, LlmPort } from "../../core/llm/index.ts";
import { composeDeps, productionVault } from "./compose.ts";
import type { ComposeOptions } from "./compose.ts";
import { once } from "./lazy.ts";
import { LINKS } from "../../app/manifest.ts";
import type { LinkedResources } from "./resources.ts";
import type { PolicySettings } from "../../app/policy-format.ts";

/** The LLM settings of the environment over the policy's defaults; the API key is read (from LlmApiKey) only for openai. */
function llmConfigOf(config: PolicySettings, env: Record<string, string | undefined>, resources: LinkedResources) {
  const provider = env.LLM_PROVIDER?.trim().toLowerCase() || config.llm.provider;
  const keyed =
    provider === "openai" && !env.LLM_API_KEY ? { ...env, LLM_API_KEY: resources.secret(LINKS.llmApiKey) } : env;
  return llmConfigFromEnv(keyed, llmDefaultsOfConfig(config.llm));
}

/** The LLM named by the environment over the policy's defaults, behind its endpoint check. */
function llmFromEnv(
  config: PolicySettings,
  env: Record<string, string | undefined>,
  resources: LinkedResources,
): LlmPort {
  const llmConfig = llmConfigOf(config, env, resources);
  const model = createLlm(llmConfig, { contract: config.agent.contract, responsibility: config.agent.responsibility });
  return llmConfig.provider === "rules" ? model : guardWithPreflight(model, () => preflightLlm(llmConfig)).port;
}

/**
 * The model behind the OpenAI Batch API (LLM_BATCH_MODE=batch) of the same endpoint, model and key; a provider without
 * one (rules) is a configuration error naming LLM_BATCH_MODE.
 */
function batchLlmFromEnv(
  config: PolicySettings,
  env: Record<string, string | undefined>,
  resources: LinkedResources,
  journal: BatchJournal,
): LlmPort {
  const llmConfig = llmConfigOf(config, env, resources);
  llmBatchSettingsFromEnv(env, llmConfig.provider);
  if (llmConfig.provider !== "openai") throw new Error("unreachable: llmBatchSettingsFromEnv refuses rules");
  return createBatchLlm(llmConfig, journal);
}

/** Dependencies of a function that calls a model. */
export function composeLlmDeps(options: ComposeOptions = {}): PipelineDeps {
  return composeDeps({ makeLlm: llmFromEnv, makeBatchLlm: batchLlmFromEnv, ...options });
}

/** The production dependencies of worker and intake-extract: composed once per cold start. */
export const productionLlmDeps: () => PipelineDeps = once(() => composeLlmDeps({ personalData: productionVault }));
