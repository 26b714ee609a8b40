// The scheduled batch's policy, apart from its I/O: whether the run is a simulation or live, which
// configuration a simulation records in SIMULATION_START, and how the rows of the batch file become
// submissions. By default the run is a SIMULATION: every claim carries the run's simulation_id, so its
// refunds go to a ledger of their own and consumers can filter them out. Live claims carry none, and their
// ids come from the file's content and the row, so a re-run of the same file submits nothing twice.
import { hashHex } from "../../core/crew/index.ts";
import type { ClaimsConfig } from "../../core/claim/config.ts";
import { renderClaimText, scenarioBody, scenarioKeys, simulationIdFor } from "../../core/history/scenarios.ts";
import type { Scenario } from "../../core/history/scenarios.ts";
import { simulationStartEvent } from "../../core/history/simulation.ts";
import type { AuditEvent, Order } from "../../core/integrity/index.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** How a batch runs. */
type BatchMode = "simulation" | "live";

/** The mode from CLAIMS_BATCH_MODE: `simulation` (the default) or `live`; anything else is refused, named. */
export function batchModeFrom(env: Env): { ok: true; mode: BatchMode } | { ok: false; message: string } {
  const mode = env.CLAIMS_BATCH_MODE?.trim() || "simulation";
  if (mode !== "simulation" && mode !== "live")
    return {
      ok: false,
      message: `CLAIMS_BATCH_MODE=${JSON.stringify(mode)} is invalid: expected simulation or live`,
    };
  return { ok: true, mode };
}

/** One claim a run submits: the batch row it comes from, the body, and the claim id and Idempotency-Key. */
interface BatchSubmission {
  id: string;
  body: Record<string, unknown>;
  keys: { claimId: string; idempotencyKey: string };
}

/** What a run does: a simulation records its start and submits under its simulation_id; a live run submits. */
export type BatchRun = SimulationRun | LiveRun;
type SimulationRun = { mode: "simulation"; simulationId: string; start: AuditEvent; submissions: BatchSubmission[] };
type LiveRun = { mode: "live"; submissions: BatchSubmission[] };

/** A live claim's id and Idempotency-Key: from the file's content and the row, so a re-run of the same file submits nothing twice. */
function liveKeys(fileSha: string, rowId: string): { claimId: string; idempotencyKey: string } {
  const digest = hashHex(`live:${fileSha}:${rowId}`);
  return { claimId: `clm_${digest.slice(0, 20)}`, idempotencyKey: `live:${fileSha.slice(0, 16)}:${rowId}` };
}

/** A live run at `nowMs`: every row a real claim (relative dates in free text resolved against `nowMs`). */
export function liveRun(scenarios: readonly Scenario[], nowMs: number): LiveRun {
  const fileSha = hashHex(JSON.stringify(scenarios));
  return {
    mode: "live",
    submissions: scenarios.map((s) => {
      const input =
        "claim" in s.input ? { claim: s.input.claim } : { claim_text: renderClaimText(s.input.claim_text, nowMs) };
      return { id: s.id, body: { ...input, label: `${s.id} — ${s.label}` }, keys: liveKeys(fileSha, s.id) };
    }),
  };
}

/**
 * A simulation run at `nowMs` under `config`: its simulation id, the SIMULATION_START event recording the
 * configuration, the files and the model (LLM_PROVIDER and LLM_MODEL override the configuration's), and every
 * row under the run's simulation_id.
 */
export function simulationRun(input: {
  scenarios: readonly Scenario[];
  nowMs: number;
  config: ClaimsConfig;
  files: { config: string; scenarios: string };
  stack: string;
  env: Env;
}): SimulationRun {
  const { scenarios, nowMs, config, env } = input;
  const simulationId = simulationIdFor(config.simulationId, nowMs);
  // An empty variable is unset.
  const llm = {
    provider: env.LLM_PROVIDER?.trim() || config.llm.provider,
    model: env.LLM_MODEL?.trim() || config.llm.model,
  };
  const start = simulationStartEvent({
    simulationId,
    nowMs,
    config,
    scenarios,
    files: input.files,
    stack: input.stack,
    llm,
  });
  return {
    mode: "simulation",
    simulationId,
    start,
    submissions: scenarios.map((s) => {
      const body = scenarioBody(s, simulationId, nowMs);
      return { id: s.id, body, keys: scenarioKeys(simulationId, s.id, body) };
    }),
  };
}

/** The orders the rows of structured claims name, each once: the ones a deployed policy's run records. */
export function namedOrderIds(scenarios: readonly Scenario[]): string[] {
  return [...new Set(scenarios.flatMap((s) => ("claim" in s.input ? [s.input.claim.order_id] : [])))];
}

/** The deployed policy as the configuration a simulation records, with the context store's orders. */
export function policyRunConfig(
  policy: Pick<ClaimsConfig, "llm" | "agent"> & {
    source: string;
    run_id: string;
    contract_format: ClaimsConfig["reading"]["format"];
  },
  orders: readonly (Order | undefined)[],
): ClaimsConfig {
  return {
    file: policy.source,
    llm: policy.llm,
    simulationId: policy.run_id,
    agent: policy.agent,
    orders: orders.filter((o): o is Order => o !== undefined),
    reading: { format: policy.contract_format, mappings: [], ignored: [] },
  };
}

/** What one run submitted: a simulation under its simulation_id, or (live) real claims. */
export interface BatchRunResult {
  mode: BatchMode;
  /** The run's simulation id (simulation runs only: live claims carry none). */
  simulation_id?: string;
  submitted: string[];
  refused: { id: string; code: string }[];
}

/** The run's result from intake's answer to each submission, in order. */
export function batchRunResult(
  run: BatchRun,
  answers: readonly { id: string; answer: { ok: true; claimId: string } | { ok: false; code: string } }[],
): BatchRunResult {
  return {
    mode: run.mode,
    ...(run.mode === "simulation" ? { simulation_id: run.simulationId } : {}),
    submitted: answers.flatMap((a) => (a.answer.ok ? [a.answer.claimId] : [])),
    refused: answers.flatMap((a) => (a.answer.ok ? [] : [{ id: a.id, code: a.answer.code }])),
  };
}
