// What a batch run records at its start and end, so the audit alone can rebuild the report.
import type { AuditEvent } from "../integrity/audit.ts";
import { auditEvent } from "./audit-events.ts";
import type { SimulationStartDetails } from "./audit-events.ts";
import type { ClaimsConfig } from "../claim/config.ts";
import type { Scenario } from "./scenarios.ts";

/** What a simulation id may be (a batch's, or one a client sends with a claim): 1–128 of letters, digits and _ . : -. */
const SIMULATION_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Why `id` cannot be a simulation id, or undefined: outside SIMULATION_ID, or `.` / `..` (a run's folder is
 * `runs/<simulation_id>`: those would name the runs folder or the data directory). Intake refuses what
 * `claims report` and the run store refuse.
 */
export function simulationIdProblem(id: string): string | undefined {
  if (!SIMULATION_ID.test(id)) return "simulation_id may hold 1 to 128 letters, digits and _ . : -";
  if (id === "." || id === "..") return `simulation_id ${JSON.stringify(id)} is not an id (it names a folder)`;
  return undefined;
}

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
    scenarios: input.scenarios.map((s) => ({
      id: s.id,
      label: s.label,
      expected: s.expected,
      ...(s.race === undefined ? {} : { race: s.race }),
    })),
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
