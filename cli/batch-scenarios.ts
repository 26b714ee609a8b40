// The parts of `claims batch` that the scenario format's later rows need: racing rows (`race:` — submitted at once,
// matched as a group by count) and rows that run after the review steps (`after_reviews:`).
import type { ScenarioResult } from "../core/history/audit-events.ts";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { scenarioBody, scenarioKeys } from "../core/history/scenarios.ts";
import type { Scenario } from "../core/history/scenarios.ts";
import type { ClaimsRuntime } from "../local/runtime.ts";
import type { BatchRow } from "./batch-output.ts";

/**
 * Submits every row of the race `race` at once (each under the keys the row's own run uses, so the row's submission
 * afterwards is a replay of it): the claims are decided concurrently, so which one wins is not determined.
 */
export async function submitRace(
  runtime: Pick<ClaimsRuntime, "submit">,
  rows: readonly Scenario[],
  race: string,
  simulationId: string,
  nowMs: number,
): Promise<void> {
  await Promise.all(
    rows
      .filter((r) => r.race === race)
      .map((r) => {
        const body = scenarioBody(r, simulationId, nowMs);
        return runtime.submit(body, scenarioKeys(simulationId, r.id, body)).catch(() => undefined);
      }),
  );
}

const outcomeKey = (verdict: string, code: string | null | undefined) => `${verdict} ${code ?? ""}`;

/**
 * Matches the rows of each race as a group: which claim of a race wins is not determined, how many do is. A race
 * matches when the outcomes its rows ended with, counted, are the ones its rows expect, counted (an expected row
 * without a reason code takes any code of its verdict). Every row of the race gets the group's answer.
 */
export function matchRaces(rows: BatchRow[], results: ScenarioResult[], scenarios: readonly Scenario[]): void {
  for (const race of new Set(scenarios.flatMap((s) => (s.race ? [s.race] : [])))) {
    const ids = new Set(scenarios.filter((s) => s.race === race).map((s) => s.id));
    const group = rows.filter((r) => ids.has(r.id));
    const actual = group.map((r) => outcomeKey(r.verdict, r.reason_code));
    let matches = true;
    // Exact expectations first, then the verdict-only ones take what is left of their verdict.
    const expected = scenarios
      .filter((s) => ids.has(s.id))
      .map((s) => s.expected)
      .sort((a, b) => (a.reason_code === undefined ? 1 : 0) - (b.reason_code === undefined ? 1 : 0));
    for (const e of expected) {
      const at = actual.findIndex((k) =>
        e.reason_code === undefined ? k.startsWith(`${e.verdict} `) : k === outcomeKey(e.verdict, e.reason_code),
      );
      if (at < 0) matches = false;
      else actual.splice(at, 1);
    }
    for (const r of group) r.matches = matches;
    for (const r of results) if (ids.has(r.id)) r.matches = matches;
  }
}

/** Runs one row after the review steps: submitted, settled, and its row (as the run's own rows are built). */
export async function runLaterRow(
  runtime: Pick<ClaimsRuntime, "submit" | "settle">,
  s: Scenario,
  simulationId: string,
  nowMs: number,
): Promise<{ row: BatchRow; result: ScenarioResult; record?: ClaimRecord }> {
  const t0 = performance.now();
  const body = scenarioBody(s, simulationId, nowMs);
  let claimId = "";
  let record: ClaimRecord | undefined;
  let failure: string | undefined;
  try {
    const submitted = await runtime.submit(body, scenarioKeys(simulationId, s.id, body));
    if (!submitted.ok) failure = `refused by intake: ${submitted.message}`;
    else {
      claimId = submitted.claimId;
      record = await runtime.settle(submitted.claimId);
    }
  } catch (error) {
    failure = `the run could not finish this claim: ${(error as Error).message}`;
  }
  const row = scenarioRow(s, claimId, record, failure);
  const { note: _note, ...rest } = row;
  const result: ScenarioResult = {
    ...rest,
    matches: row.matches === true,
    expected_reason_code: s.expected.reason_code ?? null,
    duration_ms: Math.round(performance.now() - t0),
  };
  return { row, result, ...(record ? { record } : {}) };
}

/** The batch row of a scenario's claim: its outcome (ERROR when the run could not finish it), against the expected one. */
export function scenarioRow(
  s: Scenario,
  claimId: string,
  record: ClaimRecord | undefined,
  failure: string | undefined,
): BatchRow {
  const outcome =
    failure !== undefined
      ? "ERROR"
      : record?.status === "NEEDS_REVIEW"
        ? "NEEDS_REVIEW"
        : (record?.verdict ?? record?.status ?? "MISSING");
  const reasonMatches = s.expected.reason_code === undefined || s.expected.reason_code === record?.reason_code;
  return {
    id: s.id,
    label: s.label,
    claim_id: claimId,
    verdict: outcome,
    expected: s.expected.verdict,
    reason_code: record?.reason_code ?? null,
    reason: failure ?? record?.reason ?? null,
    order_id: record?.proposal?.order_id ?? record?.claim?.order_id ?? null,
    amount_eur: record?.proposal?.amount_eur ?? record?.claim?.amount_eur ?? null,
    executed: record?.executed === true,
    matches: outcome === s.expected.verdict && reasonMatches,
    expected_reason_code: s.expected.reason_code ?? null,
  };
}
