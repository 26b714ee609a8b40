// The model of a local run as the environment names it over the config file's defaults (docs/llm.md): behind its
// endpoint check (a network model), metered, with a loggable description and the waits derived from its time
// budget. `claims batch` and `claims serve` build it here, and so does serve's handler thread (handler-thread.ts),
// which calls the model itself.
import {
  createLlm,
  describeLlmConfig,
  guardWithPreflight,
  llmConfigFromEnv,
  llmBatchSettingsFromEnv,
  llmDefaultsOfConfig,
  meterLlm,
  preflightLlm,
} from "../adapters/llm/index.ts";
import type { LlmMeter, PreflightResult } from "../adapters/llm/index.ts";
import type { ClaimsConfig } from "../core/claim/config.ts";
import type { LlmPort } from "../core/llm/index.ts";
import { LlmConfigError } from "../core/llm/index.ts";
import { pipelineWaitsFor } from "../pipeline/deps.ts";
import type { PipelineWaits } from "../pipeline/deps.ts";

/** The model of a local run: the port, a description, its endpoint check, call meter and derived waits. */
export interface LocalLlm {
  readonly port: LlmPort;
  readonly description: string;
  readonly meter: LlmMeter;
  readonly waits: PipelineWaits;
  /** Checks the endpoint (a network model only). */
  readonly preflight?: () => Promise<PreflightResult>;
  /** Whether the model was found unreachable (last check or call); an old failure is checked again in the background. */
  readonly unreachable?: () => boolean;
}

/**
 * The model named by the environment (`env`, default process.env) over `config`'s `llm` defaults. `keepCalls` bounds
 * the meter's records of finished calls (a batch reads them all; `claims serve` and its handler thread keep none).
 */
export function localLlm(
  config: ClaimsConfig,
  env: NodeJS.ProcessEnv = process.env,
  keepCalls = Number.POSITIVE_INFINITY,
): LocalLlm {
  const llmConfig = llmConfigFromEnv(env, llmDefaultsOfConfig(config.llm));
  // The Batch API serves the deployed stack's scheduled batch (docs/llm.md, "Batch mode"); a local run says so at once.
  if (llmBatchSettingsFromEnv(env, llmConfig.provider).mode === "batch")
    throw new LlmConfigError(
      "LLM_BATCH_MODE",
      'LLM_BATCH_MODE=batch is for the deployed stack\'s scheduled batch (docs/llm.md, "Batch mode"); `claims batch` and `claims serve` run with LLM_BATCH_MODE=off',
    );
  const model = createLlm(llmConfig, { contract: config.agent.contract, responsibility: config.agent.responsibility });
  const guarded = llmConfig.provider === "rules" ? undefined : guardWithPreflight(model, () => preflightLlm(llmConfig));
  const meter = meterLlm(guarded?.port ?? model, undefined, keepCalls);
  const unreachable = () => guarded?.unreachable() ?? false;
  return {
    port: meter.port,
    description: describeLlmConfig(llmConfig),
    meter,
    waits: pipelineWaitsFor(llmConfig.timeoutMs),
    ...(guarded ? { preflight: guarded.check, unreachable } : {}),
  };
}
