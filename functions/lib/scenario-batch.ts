// The scenario batch as the scheduled function runs it: load the bundled files, record the run's
// start in the audit, and submit every scenario through intake under one simulation_id.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseScenarios } from "../../core/claims/scenarios.ts";
import type { Scenario } from "../../core/claims/scenarios.ts";
import type { ClaimsConfig } from "../../core/claims/config.ts";
import type { SimulationStartDetails } from "../../core/claims/simulation.ts";
import { canonicalize, hashHex } from "../../core/crew/index.ts";
import { createAuditEvent } from "../../core/dir/index.ts";
import type { AuditEvent } from "../../core/dir/index.ts";
import { ConfigLoadError } from "./errors.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** The scenario file: CLAIMS_SCENARIOS_PATH, else scenarios/scenarios.yaml under LAMBDA_TASK_ROOT (copyFiles) or the working directory. */
export function scenariosPathFrom(env: Env): string {
  return env.CLAIMS_SCENARIOS_PATH ?? join(env.LAMBDA_TASK_ROOT ?? process.cwd(), "scenarios", "scenarios.yaml");
}

/** Reads and validates the scenario file; ConfigLoadError names the file and the problem. */
export function loadScenarios(path: string): Scenario[] {
  try {
    return parseScenarios(readFileSync(path, "utf8"), path);
  } catch (cause) {
    throw new ConfigLoadError(`scenario file ${path} cannot be used: ${(cause as Error).message}`, { cause });
  }
}

/** The claim id and Idempotency-Key of a scenario in a run (the same as `claims batch` uses), so a re-run submission is a replay. */
export function scenarioKeys(simulationId: string, scenarioId: string, body: unknown): { claimId: string; idempotencyKey: string } {
  return { claimId: `clm_${hashHex(`${simulationId}:${scenarioId}`).slice(0, 20)}`, idempotencyKey: `${simulationId}:${scenarioId}:${hashHex(canonicalize(body)).slice(0, 16)}` };
}

/** The SIMULATION_START audit event of a scheduled run (the report reads expectations and orders from it). */
export function simulationStartEvent(input: { simulationId: string; nowMs: number; config: ClaimsConfig; scenarios: readonly Scenario[]; files: { config: string; scenarios: string }; stack: string; llm: { provider: string; model: string } }): AuditEvent {
  const at = new Date(input.nowMs).toISOString();
  const details: SimulationStartDetails = {
    simulation_id: input.simulationId,
    run_id: input.config.simulationId,
    started_at: at,
    config_file: input.files.config,
    scenarios_file: input.files.scenarios,
    stack: input.stack,
    llm: input.llm,
    agent: { agent_id: input.config.agent.agentId, version: input.config.agent.version, responsibility: input.config.agent.responsibility, contract: input.config.agent.contract },
    orders: input.config.orders,
    scenarios: input.scenarios.map((s) => ({ id: s.id, label: s.label, expected: s.expected })),
  };
  return createAuditEvent({ dfid: `dfid_sim_${input.simulationId}`, type: "SIMULATION_START", state: "RUNNING", details, at, simulationId: input.simulationId });
}
