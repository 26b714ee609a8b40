// What a batch run records at its start and end, so the audit alone can rebuild the report.
import * as z from "zod";
import { ClaimsContractSchema, OrderSchema, ResponsibilityContractSchema } from "../integrity/contracts.ts";
import { createAuditEvent } from "../integrity/audit.ts";
import type { AuditEvent } from "../integrity/audit.ts";
import type { ClaimsConfig } from "./config.ts";
import { ExpectedOutcomeSchema } from "./expected-outcome.ts";
import type { Scenario } from "./scenarios.ts";

/** details of SIMULATION_START: the run's configuration, authoritative orders and expectations. */
export const SimulationStartDetailsSchema = z.object({
  simulation_id: z.string(),
  run_id: z.string(),
  started_at: z.string(),
  config_file: z.string(),
  scenarios_file: z.string(),
  stack: z.string(),
  llm: z.object({ provider: z.string(), model: z.string() }),
  agent: z.object({
    agent_id: z.string(),
    version: z.string(),
    responsibility: ResponsibilityContractSchema,
    contract: ClaimsContractSchema,
  }),
  orders: z.array(OrderSchema),
  scenarios: z.array(
    z.object({
      id: z.string(),
      label: z.string(),
      expected: z.object({ verdict: ExpectedOutcomeSchema, reason_code: z.string().optional() }),
    }),
  ),
});

/** SIMULATION_START details. */
export type SimulationStartDetails = z.infer<typeof SimulationStartDetailsSchema>;

/** One scenario's result as recorded in SIMULATION_END. */
const ScenarioResultSchema = z.object({
  id: z.string(),
  label: z.string(),
  claim_id: z.string(),
  verdict: z.string(),
  expected: z.string(),
  expected_reason_code: z.string().nullable(),
  reason_code: z.string().nullable(),
  reason: z.string().nullable(),
  order_id: z.string().nullable(),
  amount_eur: z.number().nullable(),
  executed: z.boolean(),
  matches: z.boolean(),
  duration_ms: z.number(),
});

/** One scenario's result. */
export type ScenarioResult = z.infer<typeof ScenarioResultSchema>;

/** details of SIMULATION_END: every scenario's result and the totals. */
export const SimulationEndDetailsSchema = z.object({
  simulation_id: z.string(),
  ended_at: z.string(),
  duration_ms: z.number(),
  total: z.number().int(),
  matched: z.number().int(),
  results: z.array(ScenarioResultSchema),
});

/** SIMULATION_END details. */
export type SimulationEndDetails = z.infer<typeof SimulationEndDetailsSchema>;

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
  return createAuditEvent({
    dfid: simulationDfid(input.simulationId),
    type: "SIMULATION_START",
    state: "RUNNING",
    details,
    at,
    simulationId: input.simulationId,
  });
}
