// Scheduled batch (EventBridge Scheduler, daily, off by default): submits the claims of its batch file
// through the intake path (pipeline: submitClaim) and returns at once; the claims run through the queues like
// any other. By default the run is a SIMULATION: every claim carries the run's simulation_id, so its refunds
// go to a ledger of their own and consumers can filter them out (SPEC §7.3); SIMULATION_START records the
// run and GET /reports/{simulation_id} shows it. Only when the operator deployed a claims file of their own
// and said so (CLAIMS_BATCH_LIVE=true at deploy: CLAIMS_BATCH_MODE=live here) are the claims real ones.
import { createHash } from "node:crypto";
import { submitClaim } from "../pipeline/intake.ts";
import type { PipelineDeps } from "../pipeline/deps.ts";
import type { ClaimsConfig } from "../core/claims/config.ts";
import { renderClaimText, scenarioBody, scenarioKeys, simulationIdFor } from "../core/claims/scenarios.ts";
import type { Scenario } from "../core/claims/scenarios.ts";
import { simulationStartEvent } from "../core/claims/simulation.ts";
import type { Order } from "../core/integrity/index.ts";
import { productionDeps } from "./lib/compose.ts";
import type { DepsSource } from "./lib/compose.ts";
import { configPathFrom, loadConfig } from "./lib/config-file.ts";
import { ConfigLoadError } from "./lib/errors.ts";
import { createLogger } from "./lib/logger.ts";
import type { HandlerLogger } from "./lib/logger.ts";
import { measured } from "./lib/metrics.ts";
import type { HandlerMetrics } from "./lib/metrics.ts";
import { loadPolicyFile, policyPathFrom } from "./lib/policy.ts";
import { loadScenarios, scenariosPathFrom } from "./lib/scenario-batch.ts";

/** What one batch run submitted: a simulation under its simulation_id, or (live) real claims. */
interface BatchRunResult {
  mode: "simulation" | "live";
  /** The run's simulation id (simulation runs only: live claims carry none). */
  simulation_id?: string;
  submitted: string[];
  refused: { id: string; code: string }[];
}

type Env = Record<string, string | undefined>;

/** How the batch runs: CLAIMS_BATCH_MODE `simulation` (default) or `live`; anything else stops the run. */
function batchModeFrom(env: Env): BatchRunResult["mode"] {
  const mode = env.CLAIMS_BATCH_MODE?.trim() || "simulation";
  if (mode !== "simulation" && mode !== "live")
    throw new ConfigLoadError(`CLAIMS_BATCH_MODE=${JSON.stringify(mode)} is invalid: expected simulation or live`);
  return mode;
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
  const ids = [...new Set(scenarios.flatMap((s) => ("claim" in s.input ? [s.input.claim.order_id] : [])))];
  const orders = (await Promise.all(ids.map((id) => deps.orders.getOrder(id)))).filter(
    (o): o is Order => o !== undefined,
  );
  const reading = { format: policy.contract_format, mappings: [], ignored: [] };
  return {
    config: { file: policy.source, llm: policy.llm, simulationId: policy.run_id, agent: policy.agent, orders, reading },
    file: policy.source,
  };
}

/** A live claim's id and Idempotency-Key: from the file's content and the row, so a re-run of the same file submits nothing twice. */
function liveKeys(fileSha: string, rowId: string): { claimId: string; idempotencyKey: string } {
  const digest = createHash("sha256").update(`live:${fileSha}:${rowId}`, "utf8").digest("hex");
  return { claimId: `clm_${digest.slice(0, 20)}`, idempotencyKey: `live:${fileSha.slice(0, 16)}:${rowId}` };
}

/** The batch over `getDeps`; the batch file from CLAIMS_SCENARIOS_PATH or the bundled copy, the mode from CLAIMS_BATCH_MODE. */
export function createBatchHandler(
  getDeps: DepsSource,
  options: { logger?: HandlerLogger; metrics?: HandlerMetrics; env?: Env; stack?: string } = {},
) {
  const logger = options.logger ?? createLogger("claims-batch");
  const env = options.env ?? process.env;
  return measured("batch", getDeps, options.metrics, (deps) => async (): Promise<BatchRunResult> => {
    const mode = batchModeFrom(env);
    const d = await deps();
    const now = d.clock.now();
    const scenariosFile = scenariosPathFrom(env);
    const scenarios = loadScenarios(scenariosFile);
    const result: BatchRunResult = { mode, submitted: [], refused: [] };
    const submit = async (
      s: Scenario,
      body: Record<string, unknown>,
      keys: { claimId: string; idempotencyKey: string },
    ) => {
      const submitted = await submitClaim(body, keys, d);
      if (submitted.ok) result.submitted.push(submitted.claimId);
      else result.refused.push({ id: s.id, code: submitted.code });
    };
    if (mode === "live") {
      const fileSha = createHash("sha256").update(JSON.stringify(scenarios), "utf8").digest("hex");
      for (const s of scenarios) {
        const input =
          "claim" in s.input ? { claim: s.input.claim } : { claim_text: renderClaimText(s.input.claim_text, now) };
        await submit(s, { ...input, label: `${s.id} — ${s.label}` }, liveKeys(fileSha, s.id));
      }
      logger.info("live batch submitted", {
        file: scenariosFile,
        submitted: result.submitted.length,
        refused: result.refused,
      });
      return result;
    }
    const { config, file } = await runConfig(env, now, scenarios, d);
    const simulationId = simulationIdFor(config.simulationId, now);
    const llm = { provider: env.LLM_PROVIDER ?? config.llm.provider, model: env.LLM_MODEL ?? config.llm.model };
    await d.audit.append(
      simulationStartEvent({
        simulationId,
        nowMs: now,
        config,
        scenarios,
        files: { config: file, scenarios: scenariosFile },
        stack: options.stack ?? "aws",
        llm,
      }),
    );
    result.simulation_id = simulationId;
    for (const s of scenarios) {
      const body = scenarioBody(s, simulationId, now);
      await submit(s, body, scenarioKeys(simulationId, s.id, body));
    }
    logger.info("simulation batch submitted", {
      simulationId,
      submitted: result.submitted.length,
      refused: result.refused,
    });
    return result;
  });
}

/** The deployed handler (infra/schedules.ts: Batch). */
export const handler = createBatchHandler(productionDeps);
