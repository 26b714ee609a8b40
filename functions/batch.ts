// Scheduled batch (EventBridge Scheduler, daily, off by default): submits the claims of its batch file
// through the intake path (submitClaim) and returns at once; the claims run through the queues like any
// other (with LLM_BATCH_MODE=batch a simulation's claims ask the model through the OpenAI Batch API, docs/llm.md). A SIMULATION by default (SIMULATION_START records the run, GET /reports/{simulation_id} shows it);
// real claims only when the operator deployed a claims file of their own and said so (CLAIMS_BATCH_LIVE=true
// at deploy: CLAIMS_BATCH_MODE=live here). The policy is pipeline/decide/batch.ts; this loads and submits.
import { submitClaim } from "../pipeline/intake.ts";
import type { PipelineDeps } from "../pipeline/deps.ts";
import {
  batchModeFrom,
  batchRunResult,
  liveRun,
  namedOrderIds,
  policyRunConfig,
  simulationRun,
} from "../pipeline/decide/batch.ts";
import type { BatchRun, BatchRunResult } from "../pipeline/decide/batch.ts";
import type { ClaimsConfig } from "../core/claim/config.ts";
import type { Scenario } from "../core/history/scenarios.ts";
import { productionDeps } from "./composition/compose.ts";
import type { DepsSource } from "./composition/compose.ts";
import { configPathFrom, loadConfig } from "./composition/config-file.ts";
import { ConfigLoadError } from "./composition/errors.ts";
import { createLogger } from "./observability/logger.ts";
import type { HandlerLogger } from "./observability/logger.ts";
import { measured } from "./observability/metrics.ts";
import type { HandlerMetrics } from "./observability/metrics.ts";
import { loadPolicyFile, policyPathFrom } from "./composition/policy.ts";
import { loadScenarios, scenariosPathFrom } from "./composition/scenario-batch.ts";

type Env = Record<string, string | undefined>;

/** The batch over `getDeps`; the batch file from CLAIMS_SCENARIOS_PATH or the bundled copy, the mode from CLAIMS_BATCH_MODE. */
export function createBatchHandler(
  getDeps: DepsSource,
  options: { logger?: HandlerLogger; metrics?: HandlerMetrics; env?: Env; stack?: string } = {},
) {
  const logger = options.logger ?? createLogger("claims-batch");
  const env = options.env ?? process.env;
  return measured("batch", getDeps, options.metrics, (deps) => async (): Promise<BatchRunResult> => {
    const mode = batchModeFrom(env);
    if (!mode.ok) throw new ConfigLoadError(mode.message);
    const d = await deps();
    const now = d.clock.now();
    const scenariosFile = scenariosPathFrom(env);
    const scenarios = loadScenarios(scenariosFile);
    let run: BatchRun;
    if (mode.mode === "live") run = liveRun(scenarios, now);
    else {
      const { config, file } = await runConfig(env, now, scenarios, d);
      const files = { config: file, scenarios: scenariosFile };
      run = simulationRun({ scenarios, nowMs: now, config, files, stack: options.stack ?? "aws", env });
      await d.audit.append(run.start);
    }
    const answers = [];
    for (const s of run.submissions) answers.push({ id: s.id, answer: await submitClaim(s.body, s.keys, d) });
    const result = batchRunResult(run, answers);
    const fields = run.mode === "live" ? { file: scenariosFile } : { simulationId: run.simulationId };
    logger.info(`${run.mode} batch submitted`, {
      ...fields,
      submitted: result.submitted.length,
      refused: result.refused,
    });
    return result;
  });
}

/**
 * The policy the run records in SIMULATION_START: a YAML config when CLAIMS_CONFIG_PATH is set (local runs),
 * else the deployed policy, whose orders are the context store's (the ones the scenarios name).
 */
async function runConfig(
  env: Env,
  nowMs: number,
  scenarios: readonly Scenario[],
  deps: PipelineDeps,
): Promise<{ config: ClaimsConfig; file: string }> {
  if (env.CLAIMS_CONFIG_PATH) {
    const file = configPathFrom(env);
    return { config: loadConfig(file, nowMs), file };
  }
  const policy = loadPolicyFile(policyPathFrom(env));
  const orders = await Promise.all(namedOrderIds(scenarios).map((id) => deps.orders.getOrder(id)));
  return { config: policyRunConfig(policy, orders), file: policy.source };
}

/** The deployed handler (infra/schedules.ts: Batch). */
export const handler = createBatchHandler(productionDeps);
