// What a batch run records at its start and end, so the audit alone can rebuild the report.
import type { AuditEvent } from "../integrity/audit.ts";
import { auditEvent } from "./audit-events.ts";
import type { SimulationStartDetails } from "./audit-events.ts";
import type { ClaimsConfig } from "../claim/config.ts";
import type { Scenario } from "./scenarios.ts";

/** The root DFID of a simulation run: the run's own events are recorded under it. */
export function simulationDfid(simulationId: string): string {
  return `dfid_sim_${simulationId}`;
}

/** The SIMULATION_START audit event of a scheduled run (the report reads expectations and orders from it). */
export function simulationStartEvent(input: {
  simulationId: string;
  nowMs: number;
  config: ClaimsConfig;
  scenarios: readonly Scenario[];
  files: { config: string; scenarios: string };
  stack: string;
  llm: { provider: string; model: string };
}): AuditEvent {
  const at = new Date(input.nowMs).toISOString();
  const details: SimulationStartDetails = {
    simulation_id: input.simulationId,
    run_id: input.config.simulationId,
    started_at: at,
    config_file: input.files.config,
    scenarios_file: input.files.scenarios,
    stack: input.stack,
    llm: input.llm,
    agent: {
      agent_id: input.config.agent.agentId,
      version: input.config.agent.version,
      responsibility: input.config.agent.responsibility,
      contract: input.config.agent.contract,
    },
    orders: input.config.orders,
    scenarios: input.scenarios.map((s) => ({ id: s.id, label: s.label, expected: s.expected })),
  };
  return auditEvent({
    dfid: simulationDfid(input.simulationId),
    type: "SIMULATION_START",
    state: "RUNNING",
    details,
    at,
    simulationId: input.simulationId,
  });
}
