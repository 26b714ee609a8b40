// The parts of `claims batch` that the scenario format's later rows need: racing rows (`race:` — submitted at once,
// matched as a group by count), the payment steps among the review steps (`payment:`) and rows that run after the
// review steps (`after_reviews:`).
import type { ScenarioResult } from "../core/history/audit-events.ts";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { scenarioBody, scenarioKeys } from "../core/history/scenarios.ts";
import type { ReviewStep, Scenario } from "../core/history/scenarios.ts";
import { matchRace } from "../core/history/race.ts";
import type { RaceGroup } from "../core/history/race.ts";
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

/**
 * Matches the rows of the race `race` as a group (core/history/race.ts): which claim of a race wins is not
 * determined, how many do is. Every row of the race, and its result, gets the group's answer.
 */
export function applyRace(
  race: string,
  rows: BatchRow[],
  results: ScenarioResult[],
  scenarios: readonly Scenario[],
): RaceGroup {
  const group = matchRace(
    race,
    scenarios.filter((s) => s.race === race).map((s) => ({ id: s.id, ...s.expected })),
    rows,
  );
  for (const r of rows) if (group.ids.includes(r.id)) Object.assign(r, { matches: group.matches, race_group: group });
  for (const r of results) if (group.ids.includes(r.id)) r.matches = group.matches;
  return group;
}

/** Whether row `i` of `rows` closes its race (the race's rows are next to each other): its group can be matched. */
export function closesRace(rows: readonly Scenario[], i: number): string | undefined {
  const race = rows[i]?.race;
  return race !== undefined && rows[i + 1]?.race !== race ? race : undefined;
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
  const { note: _note, race_group: _group, ...rest } = row;
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
  const executedMatches = s.expected.executed === undefined || s.expected.executed === (record?.executed === true);
  // What the ACCEPT gave (docs/returns.md#outcomes): a claim without a recorded outcome was refunded.
  const outcomeMatches = s.expected.outcome === undefined || s.expected.outcome === (record?.outcome ?? "REFUND");
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
    matches: outcome === s.expected.verdict && reasonMatches && executedMatches && outcomeMatches,
    expected_reason_code: s.expected.reason_code ?? null,
    ...(s.race === undefined ? {} : { race: s.race }),
  };
}

/**
 * Runs one payment step (`payment: { of, declined }`): the provider's decline of the refund the claim `claimId`
 * executed, rehearsed with the simulated provider (docs/payments.md); its row says the settlement's status after it
 * (FAILED, its review opened) or REFUSED with why nothing ran.
 */
export async function runPaymentStep(
  runtime: Pick<ClaimsRuntime, "rehearseDecline">,
  step: Extract<ReviewStep, { kind: "payment" }>,
  claimId: string,
  atMs?: number,
): Promise<BatchRow> {
  const result =
    claimId === ""
      ? { ok: false as const, code: "NOT_FOUND", message: `scenario ${step.of} has no claim` }
      : await runtime.rehearseDecline(claimId, step.declined, atMs).catch((error: unknown) => ({
          ok: false as const,
          code: "ERROR",
          message: `the payment step could not run: ${(error as Error).message}`,
        }));
  const settlement = result.ok ? result.settlement : undefined;
  const outcome = result.ok ? (settlement?.status ?? result.outcome) : "REFUSED";
  const code = result.ok ? null : result.code;
  return stepRow(step, claimId, {
    outcome,
    code,
    reason: result.ok ? (settlement?.failure_reason ?? null) : result.message,
    order_id: settlement?.order_id ?? null,
    amount_eur: settlement?.amount_eur ?? null,
    executed: false,
  });
}

/** What a step of the `reviews:` list (a person's decision, a rehearsed payment) came to, as a row of the run. */
export function stepRow(
  step: { id: string; label: string; expected: { outcome: string; reason_code?: string | undefined } },
  claimId: string,
  got: {
    outcome: string;
    code: string | null;
    reason: string | null;
    order_id: string | null;
    amount_eur: number | null;
    executed: boolean;
  },
): BatchRow {
  const { outcome, code } = got;
  return {
    id: step.id,
    label: step.label,
    claim_id: claimId,
    verdict: outcome,
    expected: step.expected.outcome,
    reason_code: code,
    reason: got.reason,
    order_id: got.order_id,
    amount_eur: got.amount_eur,
    executed: got.executed,
    matches:
      outcome === step.expected.outcome &&
      (step.expected.reason_code === undefined || step.expected.reason_code === code),
    expected_reason_code: step.expected.reason_code ?? null,
  };
}
