// Deterministic audit events of a whole scenario batch, produced by the in-process pipeline with the
// rules model and a fixed clock, plus SIMULATION_START / SIMULATION_END built per their schemas.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createAuditEvent } from "../core/integrity/audit.ts";
import type { AuditEvent } from "../core/integrity/audit.ts";
import type { ClaimsContract } from "../core/integrity/contracts.ts";
import { parseConfig } from "../core/claim/config.ts";
import { parseScenarios } from "../core/history/scenarios.ts";
import type { Scenario } from "../core/history/scenarios.ts";
import { createInProcessPipeline } from "../pipeline/in-process.ts";
import { SimulationEndDetailsSchema, SimulationStartDetailsSchema } from "../core/history/audit-events.ts";
import type { ScenarioResult } from "../core/history/audit-events.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { decideReview } from "../pipeline/review.ts";

/** The fixed clock of the fixture run. */
export const FIXTURE_NOW = "2026-03-10T09:00:00.000Z";

/** The simulation id of the fixture run. */
export const FIXTURE_SIMULATION_ID = "sim_report_fixture";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

/** Replaces `{{date:-3d}}` placeholders by a prose date (`7 March 2026`) relative to `nowMs`. */
export function fillDatePlaceholders(text: string, nowMs: number): string {
  return text.replace(/\{\{date:([+-])(\d+)d\}\}/g, (_m, sign: string, days: string) => {
    const d = new Date(nowMs + (sign === "-" ? -1 : 1) * Number(days) * 86_400_000);
    return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
  });
}

/** What `buildFixtureEvents` can change. */
export interface FixtureOptions {
  /** Only these scenario ids (in file order); all by default. */
  only?: readonly string[];
  /** Leave SIMULATION_END out, as a crashed or running batch would. */
  withoutEnd?: boolean;
  /** Reviewers' decisions taken after the scenarios ran (before SIMULATION_END), by scenario id. */
  reviews?: readonly { scenario: string; decision: Record<string, unknown> }[];
  /** The wall time the batch waited for each claim, as `claims batch` records it (default 0 for every claim). */
  wallMs?: (index: number) => number;
  /** A shadow policy's claims bounds, decided beside the bundled agent's (as the config's `shadow_policy`). */
  shadowContract?: Partial<ClaimsContract>;
}

/** Runs the bundled scenarios through the in-process pipeline and returns the run's audit events. */
export async function buildFixtureEvents(options: FixtureOptions = {}): Promise<AuditEvent[]> {
  const nowMs = Date.parse(FIXTURE_NOW);
  const configFile = "scenarios/config.yaml";
  const scenariosFile = "scenarios/scenarios.yaml";
  const config = parseConfig(readFileSync(`${ROOT}${configFile}`, "utf8"), configFile, nowMs);
  const all = parseScenarios(readFileSync(`${ROOT}${scenariosFile}`, "utf8"), scenariosFile);
  const scenarios = options.only ? all.filter((s) => options.only!.includes(s.id)) : all;
  const shadow = options.shadowContract && {
    ...config.agent,
    contract: { ...config.agent.contract, ...options.shadowContract },
  };
  const pipeline = createInProcessPipeline({
    agent: shadow ? { ...config.agent, shadow } : config.agent,
    orders: config.orders,
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    // A fixed clock: the batch runner's `--now` behaves the same, and the 14-day boundary row stays exact.
    clock: { now: () => nowMs },
  });
  const sim = FIXTURE_SIMULATION_ID;
  const rootDfid = `dfid_sim_${sim}`; // the root DFID intake gives every claim of a simulation
  const start = createAuditEvent({
    dfid: rootDfid,
    type: "SIMULATION_START",
    state: "RUNNING",
    at: new Date(nowMs).toISOString(),
    simulationId: sim,
    details: SimulationStartDetailsSchema.parse({
      simulation_id: sim,
      run_id: config.simulationId,
      started_at: new Date(nowMs).toISOString(),
      config_file: configFile,
      scenarios_file: scenariosFile,
      stack: "in-process (fixture)",
      llm: { provider: "rules", model: "rules" },
      agent: {
        agent_id: config.agent.agentId,
        version: config.agent.version,
        responsibility: config.agent.responsibility,
        contract: config.agent.contract,
      },
      orders: config.orders,
      scenarios: scenarios.map((s) => ({ id: s.id, label: s.label, expected: s.expected })),
    }),
  });
  const results: ScenarioResult[] = [];
  for (const [i, s] of scenarios.entries())
    results.push({ ...(await runScenario(pipeline, s, sim, nowMs)), duration_ms: options.wallMs?.(i) ?? 0 });
  // As `claims batch` records its review steps: the review's status after the decision, against the expected one.
  const steps: { id: string; label: string; claim_id: string; outcome: string; expected: string; matches: boolean }[] =
    [];
  for (const r of options.reviews ?? []) {
    const claimId = results.find((x) => x.id === r.scenario)?.claim_id;
    if (!claimId) throw new Error(`fixture: no claim for scenario ${r.scenario}`);
    const decided = await decideReview(claimId, r.decision, pipeline.deps);
    if (!decided.ok) throw new Error(`fixture: the review of ${r.scenario} was refused: ${JSON.stringify(decided)}`);
    await pipeline.drain();
    const status = String(decided.body.review.status);
    steps.push({
      id: `${r.scenario}-${String(r.decision.decision).toLowerCase()}`,
      label: `A reviewer decides ${r.scenario}`,
      claim_id: claimId,
      outcome: status,
      expected: status,
      matches: true,
    });
  }
  const events = [start, ...pipeline.auditEvents()];
  if (options.withoutEnd) return events;
  const endMs = nowMs;
  const end = createAuditEvent({
    dfid: rootDfid,
    type: "SIMULATION_END",
    state: results.every((r) => r.matches) ? "PASSED" : "FAILED",
    at: new Date(endMs).toISOString(),
    simulationId: sim,
    details: SimulationEndDetailsSchema.parse({
      simulation_id: sim,
      ended_at: new Date(endMs).toISOString(),
      duration_ms: endMs - nowMs,
      total: results.length,
      matched: results.filter((r) => r.matches).length,
      results,
      ...(steps.length > 0 ? { review_steps: steps } : {}),
    }),
  });
  return [...events, end];
}

async function runScenario(
  pipeline: ReturnType<typeof createInProcessPipeline>,
  s: Scenario,
  sim: string,
  nowMs: number,
): Promise<ScenarioResult> {
  const input =
    "claim" in s.input ? { claim: s.input.claim } : { claim_text: fillDatePlaceholders(s.input.claim_text, nowMs) };
  const { submit, record } = await pipeline.decide({ ...input, simulation_id: sim, label: s.label });
  if (!submit.ok) throw new Error(`fixture: scenario ${s.id} was refused at intake: ${JSON.stringify(submit)}`);
  const verdict = record?.verdict ?? record?.status ?? "UNKNOWN";
  const reasonCode = record?.reason_code ?? null;
  const matches =
    verdict === s.expected.verdict && (s.expected.reason_code === undefined || s.expected.reason_code === reasonCode);
  return {
    id: s.id,
    label: s.label,
    claim_id: submit.claimId,
    verdict,
    expected: s.expected.verdict,
    expected_reason_code: s.expected.reason_code ?? null,
    reason_code: reasonCode,
    reason: record?.reason ?? null,
    order_id: record?.proposal?.order_id ?? record?.claim?.order_id ?? null,
    amount_eur: record?.proposal?.amount_eur ?? record?.claim?.amount_eur ?? null,
    executed: record?.executed === true,
    matches,
    duration_ms: 0,
  };
}
