// The steps of `claims batch`'s `reviews:` list (docs/config.md), run in file order once every scenario has: a
// person's decision, the payment provider's rehearsed answer, a return event a shop or warehouse posts, the sweep's
// pass over the returns that are due (docs/returns.md). Each runs at its instant (the run's clock, moved forward by
// the steps' `at`) and ends in a row of the run.
import type { ReviewStep } from "../core/history/scenarios.ts";
import type { ClaimsRuntime } from "../local/runtime.ts";
import { formatScenario } from "./batch-output.ts";
import type { BatchRow } from "./batch-output.ts";
import { runPaymentStep, stepRow } from "./batch-scenarios.ts";

/** What the steps need from the run. */
interface StepsRun {
  runtime: Pick<
    ClaimsRuntime,
    "decideReview" | "settle" | "rehearseDecline" | "postReturnEvent" | "sweepReturns" | "getClaim"
  >;
  /** The claim id of each scenario that ran. */
  claimOf: ReadonlyMap<string, string>;
  /** The run's clock (ms): a step runs `offsetMs` after it. */
  startedMs: number;
  log: (text: string) => void;
  /** True once the run must stop (interrupted, or stopped before its first claim). */
  stop: () => boolean;
}

/** Runs the steps in file order; their rows, as many as ran. */
export async function runSteps(steps: readonly ReviewStep[], run: StepsRun): Promise<BatchRow[]> {
  const rows: BatchRow[] = [];
  for (const [i, step] of steps.entries()) {
    if (run.stop()) break;
    const t0 = performance.now();
    const claimId = run.claimOf.get(step.of) ?? "";
    const atMs = run.startedMs + step.offsetMs;
    const when = step.offsetMs === 0 ? "" : ` at ${new Date(atMs).toISOString()}`;
    const { row, input } = await runStep(step, claimId, atMs, run);
    rows.push(row);
    run.log(
      formatScenario(i + 1, steps.length, row, {
        input: `${input}${when}`,
        ms: performance.now() - t0,
      }),
    );
  }
  return rows;
}

async function runStep(
  step: ReviewStep,
  claimId: string,
  atMs: number,
  run: StepsRun,
): Promise<{ row: BatchRow; input: string }> {
  const { runtime } = run;
  const at = atMs === run.startedMs ? undefined : atMs;
  switch (step.kind) {
    case "payment":
      // The provider's answer to the claim's refund, rehearsed (a batch run's refund is never paid).
      return {
        row: await runPaymentStep(runtime, step, claimId, at),
        input: `payment of ${step.of} (${claimId}): the simulated provider declines it (${step.declined})`,
      };
    case "return_event":
      return {
        row: await runReturnEvent(runtime, step, claimId, atMs),
        input: `return event of ${step.of} (${claimId}): ${step.body.event} (event_id ${step.body.event_id})`,
      };
    case "sweep":
      return {
        row: await runSweep(runtime, step, claimId, atMs),
        input: `the sweep's pass over the returns that are due, for ${step.of} (${claimId})`,
      };
    case "review":
      return runReview(runtime, step, claimId, at);
  }
}

/** A person's decision on the claim's review; a RESUBMIT's corrected claim checked against what the step expects. */
async function runReview(
  runtime: StepsRun["runtime"],
  step: Extract<ReviewStep, { kind: "review" }>,
  claimId: string,
  atMs: number | undefined,
): Promise<{ row: BatchRow; input: string }> {
  const result = await runtime.decideReview(claimId, step.body, step.by, atMs).catch((error: unknown) => ({
    ok: false as const,
    code: "ERROR",
    message: `the review step could not run: ${(error as Error).message}`,
  }));
  const outcome = !result.ok
    ? "REFUSED"
    : result.body.review.awaiting === "SECOND_APPROVAL"
      ? "AWAITING_SECOND_APPROVAL"
      : String(result.body.review.status);
  const code = result.ok ? null : result.code;
  const record = claimId === "" ? undefined : await runtime.settle(claimId).catch(() => undefined);
  const row = stepRow(step, claimId, {
    outcome,
    code,
    reason: result.ok ? null : result.message,
    order_id: record?.proposal?.order_id ?? record?.claim?.order_id ?? null,
    amount_eur: result.ok ? ((result.body.review.amount_eur as number | undefined) ?? null) : null,
    executed: result.ok && result.body.executed && result.body.review.status === "APPROVED",
  });
  if (result.ok && result.body.resubmitted_claim_id) {
    const corrected = await runtime.settle(result.body.resubmitted_claim_id).catch(() => undefined);
    // What the corrected claim ended with, when the step expects it.
    const e = step.expected.resubmitted;
    if (
      e &&
      (corrected?.verdict !== e.verdict || (e.reason_code !== undefined && corrected.reason_code !== e.reason_code))
    )
      Object.assign(row, {
        matches: false,
        reason: `the corrected claim ended ${corrected?.verdict ?? corrected?.status ?? "MISSING"} (${corrected?.reason_code ?? "no code"}), expected ${e.verdict}${e.reason_code ? ` (${e.reason_code})` : ""}`,
      });
  }
  const body = step.body;
  const input = `review of ${step.of} (${claimId}): ${String(body.decision)}${body.amount_eur === undefined ? "" : ` ${String(body.amount_eur)} EUR`}${body.paid_out_of_band === undefined ? "" : body.paid_out_of_band === true ? " (paid out of band)" : " (not paid)"}${result.ok && result.body.resubmitted_claim_id ? ` → ${result.body.resubmitted_claim_id}` : ""}`;
  return { row, input };
}

/** A return event posted for the claim at the step's instant: its row says the decision (WAIT, PAY, REVIEW, RECORDED). */
async function runReturnEvent(
  runtime: StepsRun["runtime"],
  step: Extract<ReviewStep, { kind: "return_event" }>,
  claimId: string,
  atMs: number,
): Promise<BatchRow> {
  const body = { ...step.body, at: new Date(atMs).toISOString() };
  const result =
    claimId === ""
      ? { ok: false as const, code: "NOT_FOUND", message: `scenario ${step.of} has no claim` }
      : await runtime.postReturnEvent(claimId, body, atMs).catch((error: unknown) => ({
          ok: false as const,
          code: "ERROR",
          message: `the return event could not be posted: ${(error as Error).message}`,
        }));
  const record = claimId === "" ? undefined : await runtime.getClaim(claimId).catch(() => undefined);
  return stepRow(step, claimId, {
    outcome: result.ok ? result.decision : "REFUSED",
    code: result.ok ? null : result.code,
    reason: result.ok ? returnReason(record) : result.message,
    order_id: record?.proposal?.order_id ?? record?.claim?.order_id ?? null,
    amount_eur: record?.proposal?.amount_eur ?? null,
    executed: result.ok && result.decision === "PAY",
  });
}

/** The sweep at the step's instant: its row says what it did to the claim (NOT_RECEIVED, PAY, REVIEW, or WAIT). */
async function runSweep(
  runtime: StepsRun["runtime"],
  step: Extract<ReviewStep, { kind: "sweep" }>,
  claimId: string,
  atMs: number,
): Promise<BatchRow> {
  const swept = await runtime.sweepReturns(atMs).catch((error: unknown) => error as Error);
  const record = claimId === "" ? undefined : await runtime.getClaim(claimId).catch(() => undefined);
  const failed = swept instanceof Error;
  const outcome = failed
    ? "REFUSED"
    : swept?.notReceived.includes(claimId)
      ? "NOT_RECEIVED"
      : swept?.paid.includes(claimId)
        ? "PAY"
        : swept?.reviewed.includes(claimId)
          ? "REVIEW"
          : "WAIT";
  return stepRow(step, claimId, {
    outcome,
    code: failed ? "ERROR" : null,
    reason: failed
      ? `the sweep could not run: ${swept.message}`
      : swept === undefined
        ? "the policy asks for no return: the sweep read no claim"
        : outcome === "NOT_RECEIVED"
          ? (record?.reason ?? null)
          : returnReason(record),
    order_id: record?.proposal?.order_id ?? record?.claim?.order_id ?? null,
    amount_eur: record?.proposal?.amount_eur ?? null,
    executed: outcome === "PAY",
  });
}

/** Where the claim's return stands, for the row's reason line. */
function returnReason(record: Awaited<ReturnType<StepsRun["runtime"]["getClaim"]>>): string | null {
  const r = record?.return;
  if (!r) return null;
  return `claim ${record.status}: return ${r.outcome ?? "awaited"} (pays on ${r.pay_on}, due by ${r.return_by})`;
}
