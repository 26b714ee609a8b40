// The model of a local run as the environment names it over the config file's defaults (docs/llm.md): behind its
// endpoint check (a network model), metered, with a loggable description and the waits derived from its time
// budget. `claims batch` and `claims serve` build it here, and so does serve's handler thread (handler-thread.ts),
// which calls the model itself. With LLM_BATCH_MODE=batch `claims batch` gets the model behind the OpenAI Batch API
// too (its run's claims ask through it, docs/llm.md "Batch mode"); `claims serve` refuses it.
import {
  createBatchLlm,
  createLlm,
  describeLlmConfig,
  guardWithPreflight,
  inMemoryBatchJournal,
  llmConfigFromEnv,
  llmBatchSettingsFromEnv,
  llmDefaultsOfConfig,
  meterLlm,
  preflightLlm,
} from "../adapters/llm/index.ts";
import type { LlmMeter, PreflightResult } from "../adapters/llm/index.ts";
import type { ClaimsConfig } from "../core/claim/config.ts";
import type { LlmPort } from "../core/llm/index.ts";
import { BATCH_PENDING_CODE, LlmConfigError } from "../core/llm/index.ts";
import { pipelineWaitsFor } from "../pipeline/deps.ts";
import type { PipelineWaits } from "../pipeline/deps.ts";

/** The Batch API side of a `claims batch` run with LLM_BATCH_MODE=batch. */
export interface LocalBatchApi {
  /** The model behind the Batch API (its batches journaled in this process). */
  readonly port: LlmPort;
  /** LLM_BATCH_HOLD_S: how long a claim waits for its batch (on the run's clock) before a person decides it. */
  readonly holdMs: number;
  /** LLM_BATCH_POLL_S: the real time between two tries while claims wait for their batches. */
  readonly pollMs: number;
}

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
  /** With LLM_BATCH_MODE=batch (`claims batch` only): the model behind the Batch API and the wait's settings. */
  readonly batch?: LocalBatchApi;
}

/** LLM_BATCH_POLL_S when unset: a try every 30 s, the hold's own retry interval, so the run's clock keeps real pace. */
export const DEFAULT_LLM_BATCH_POLL_S = 30;

/**
 * The model named by the environment (`env`, default process.env) over `config`'s `llm` defaults. `keepCalls` bounds
 * the meter's records of finished calls (a batch reads them all; `claims serve` and its handler thread keep none).
 * `use`: who runs it — `batch` (`claims batch`) may ask through the OpenAI Batch API, `serve` may not.
 */
export function localLlm(
  config: ClaimsConfig,
  env: NodeJS.ProcessEnv = process.env,
  keepCalls = Number.POSITIVE_INFINITY,
  use: "batch" | "serve" = "serve",
): LocalLlm {
  const llmConfig = llmConfigFromEnv(env, llmDefaultsOfConfig(config.llm));
  const batchSettings = llmBatchSettingsFromEnv(env, llmConfig.provider);
  // `claims serve` answers the API's live claims, which never use the Batch API (docs/llm.md, "Batch mode").
  if (batchSettings.mode === "batch" && use === "serve")
    throw new LlmConfigError(
      "LLM_BATCH_MODE",
      'LLM_BATCH_MODE=batch is for batch runs: `claims batch` and the deployed scheduled batch (docs/llm.md, "Batch mode"); `claims serve` answers live claims and runs with LLM_BATCH_MODE=off',
    );
  const model = createLlm(llmConfig, { contract: config.agent.contract, responsibility: config.agent.responsibility });
  const guarded = llmConfig.provider === "rules" ? undefined : guardWithPreflight(model, () => preflightLlm(llmConfig));
  const direct = meterLlm(guarded?.port ?? model, undefined, keepCalls);
  const unreachable = () => guarded?.unreachable() ?? false;
  const batched =
    batchSettings.mode === "batch" && llmConfig.provider === "openai"
      ? meterLlm(createBatchLlm(llmConfig, inMemoryBatchJournal()), undefined, keepCalls)
      : undefined;
  // A try that finds its batch not yet answered is not a call (docs/llm.md, "What it costs").
  const answered = () => batched?.calls().filter((c) => c.code !== BATCH_PENDING_CODE) ?? [];
  const meter: LlmMeter =
    batched === undefined
      ? direct
      : {
          port: direct.port,
          inFlight: () => [...direct.inFlight(), ...batched.inFlight()],
          calls: () => [...direct.calls(), ...answered()],
        };
  return {
    port: meter.port,
    description: describeLlmConfig(llmConfig) + (batched ? " batch=Batch API" : ""),
    meter,
    waits: pipelineWaitsFor(llmConfig.timeoutMs),
    ...(guarded ? { preflight: guarded.check, unreachable } : {}),
    ...(batched && batchSettings.mode === "batch"
      ? { batch: { port: batched.port, holdMs: batchSettings.holdMs, pollMs: batchPollMsFromEnv(env) } }
      : {}),
  };
}

/** LLM_BATCH_POLL_S: seconds (a decimal, from 0.01 to 3600) between two tries while claims wait for their batches. */
export function batchPollMsFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env.LLM_BATCH_POLL_S?.trim();
  if (raw === undefined || raw === "") return DEFAULT_LLM_BATCH_POLL_S * 1000;
  const s = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(s >= 0.01 && s <= 3600))
    throw new LlmConfigError(
      "LLM_BATCH_POLL_S",
      `LLM_BATCH_POLL_S must be seconds from 0.01 to 3600 (default ${DEFAULT_LLM_BATCH_POLL_S}), got '${raw}'`,
    );
  return Math.round(s * 1000);
}
