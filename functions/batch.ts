// Scenario batch (EventBridge Scheduler, daily, off by default): submits the bundled scenarios
// through the intake path (core: submitClaim) under one simulation_id and returns at once; the
// claims run through the queues like any other. GET /reports/{simulation_id} shows the run.
import { submitClaim } from "../pipeline/intake.ts";
import { scenarioBody, scenarioKeys, simulationIdFor } from "../core/claims/scenarios.ts";
import { simulationStartEvent } from "../core/claims/simulation.ts";
import { configPathFrom, loadConfig, productionDeps } from "./lib/compose.ts";
import type { DepsSource } from "./lib/compose.ts";
import { createLogger } from "./lib/logger.ts";
import type { HandlerLogger } from "./lib/logger.ts";
import { loadScenarios, scenariosPathFrom } from "./lib/scenario-batch.ts";

/** What one batch run submitted. */
export interface BatchRunResult {
  simulation_id: string;
  submitted: string[];
  refused: { id: string; code: string }[];
}

/** The batch over `getDeps`; file paths from CLAIMS_CONFIG_PATH / CLAIMS_SCENARIOS_PATH or the bundled copies. */
export function createBatchHandler(getDeps: DepsSource, options: { logger?: HandlerLogger; env?: Record<string, string | undefined>; stack?: string } = {}) {
  const logger = options.logger ?? createLogger("claims-batch");
  const env = options.env ?? process.env;
  return async (): Promise<BatchRunResult> => {
    const deps = await getDeps();
    const now = deps.clock.now();
    const files = { config: configPathFrom(env), scenarios: scenariosPathFrom(env) };
    const config = loadConfig(files.config, now);
    const scenarios = loadScenarios(files.scenarios);
    const simulationId = simulationIdFor(config.simulationId, now);
    const llm = { provider: env.LLM_PROVIDER ?? config.llm.provider, model: env.LLM_MODEL ?? config.llm.model };
    await deps.audit.append(simulationStartEvent({ simulationId, nowMs: now, config, scenarios, files, stack: options.stack ?? "aws", llm }));
    const result: BatchRunResult = { simulation_id: simulationId, submitted: [], refused: [] };
    for (const s of scenarios) {
      const body = scenarioBody(s, simulationId, now);
      const submitted = await submitClaim(body, scenarioKeys(simulationId, s.id, body), deps);
      if (submitted.ok) result.submitted.push(submitted.claimId);
      else result.refused.push({ id: s.id, code: submitted.code });
    }
    logger.info("batch submitted", { simulationId, submitted: result.submitted.length, refused: result.refused });
    return result;
  };
}

/** The deployed handler (infra/schedules.ts: Batch). */
export const handler = createBatchHandler(productionDeps);
