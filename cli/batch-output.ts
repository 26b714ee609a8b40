// Console output of `claims batch`: one block per scenario as it is decided, then a summary.
import { raceText } from "../core/history/race.ts";
import type { RaceGroup } from "../core/history/race.ts";
import { minorUnitsOf } from "../core/integrity/currency.ts";

/** One row of the `--json` contract of `claims batch` (docs/cli.md). */
export interface BatchRow {
  id: string;
  label: string;
  claim_id: string;
  verdict: string;
  expected: string;
  reason_code: string | null;
  reason: string | null;
  order_id: string | null;
  amount_eur: number | null;
  executed: boolean;
  /** Not part of the JSON contract: whether the expected reason code (if given) matched too. */
  matches?: boolean;
  /** Not part of the JSON contract: the expected reason code, when the scenario names one. */
  expected_reason_code?: string | null;
  /** Not part of the JSON contract: why a mismatch is expected to differ from the seed, when that is known. */
  note?: string;
  /** The race the row belongs to (`race:` in the scenario file): it is matched as a group, by count. */
  race?: string;
  /** The race's group answer, once all its rows have ended. */
  race_group?: RaceGroup;
}

/** What a claim's model calls cost, on its first `--json` row (a priced model only; Batch API calls at the discount). */
export interface RowModelCost {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  usd: number;
}

/** One row of `claims batch --json`: the contract's fields, whether it matched, its race's group answer and its model cost. */
export function jsonRow(r: BatchRow, model?: RowModelCost): Record<string, unknown> {
  const { id, label, claim_id, verdict, expected, reason_code, reason, order_id, amount_eur, executed } = r;
  return {
    id,
    label,
    claim_id,
    verdict,
    expected,
    reason_code,
    reason,
    order_id,
    amount_eur,
    executed,
    matches: r.matches === true,
    ...(r.race_group
      ? { race: { name: r.race_group.race, outcome: r.race_group.outcome, matches: r.race_group.matches } }
      : {}),
    ...(model ? { model } : {}),
  };
}

/** The mark of a row: ✓ or ✗, or for a race row the group's answer ("race customer-limit: 2 of 4 accepted ✓"). */
function rowMark(r: BatchRow): string {
  if (r.race_group) return paint(r.race_group.matches ? "32" : "31", raceText(r.race_group));
  if (r.race !== undefined) return `· race ${r.race}, matched as a group below`;
  return r.matches ? paint("32", "✓") : paint("31", "✗");
}

/** `REJECT (EXCEEDS_REFUNDABLE_BALANCE)`, or the verdict alone without a code. */
function outcomeText(verdict: string, code: string | null | undefined): string {
  return code ? `${verdict} (${code})` : verdict;
}

/**
 * Explains a balance rejection that an earlier row of the same run caused by refunding the same order — what
 * happens to DIR sample 35's scenario E, whose seed refunds ord_001 a second time after A (docs/config.md).
 */
export function refundedBeforeNote(row: BatchRow, earlier: readonly BatchRow[]): { note?: string } {
  if (row.reason_code !== "EXCEEDS_REFUNDABLE_BALANCE" || row.order_id === null) return {};
  const before = earlier.filter((r) => r.executed && r.order_id === row.order_id);
  if (before.length === 0) return {};
  const refunded = before.map((r) => `${r.amount_eur?.toFixed(2)} EUR by ${r.id}`).join(", ");
  return {
    note: `${row.order_id} was already refunded in this run (${refunded}) and the refund ledger never pays an order twice; DIR sample 35 refunds the same order again because its runtime keeps no ledger`,
  };
}

const useColor = () => process.stdout.isTTY === true && !process.env.NO_COLOR;
const paint = (code: string, s: string) => (useColor() ? `\u001b[${code}m${s}\u001b[0m` : s);
const VERDICT_COLOR: Record<string, string> = { ACCEPT: "32", ESCALATE: "33", REJECT: "31", NEEDS_REVIEW: "35" };

/** Colours a verdict for a terminal. */
function paintVerdict(verdict: string): string {
  return paint(VERDICT_COLOR[verdict] ?? "0", verdict);
}

/** The header printed before a batch. */
export function formatHeader(info: {
  config: string;
  scenarios: string;
  count: number;
  llm: string;
  llmCheck?: string;
  waits?: string;
  /** LLM_BATCH_MODE=batch: how a claim waits for its batch. */
  batchApi?: string;
  agent: string;
  now: string;
  simulationId: string;
  stack: string;
}): string {
  const rule = "=".repeat(78);
  return [
    rule,
    "Claims Crew — scenario batch",
    rule,
    `  Config    : ${info.config}`,
    `  Scenarios : ${info.scenarios} (${info.count})`,
    `  LLM       : ${info.llm}`,
    ...(info.llmCheck === undefined
      ? []
      : [`  LLM check : ${info.llmCheck.startsWith("FAILED") ? paint("31", info.llmCheck) : info.llmCheck}`]),
    ...(info.waits === undefined
      ? []
      : [`  Waits     : ${info.waits} (from LLM_TIMEOUT_MS; claims batch --claim-timeout overrides the last)`]),
    ...(info.batchApi === undefined ? [] : [`  Batch API : ${info.batchApi}`]),
    `  Agent     : ${info.agent}`,
    `  Crew      : Claims Analyst → Decision Maker (fixer on fault)`,
    `  Kernel    : 11 layers (schema, validity, order, category, window, amount, balance, alignment, confidence, date, limit)`,
    `  Stack     : ${info.stack}`,
    `  Clock     : ${info.now}`,
    `  Run       : ${info.simulationId}`,
    "",
  ].join("\n");
}

/** The block printed for one decided scenario. */
export function formatScenario(
  index: number,
  total: number,
  row: BatchRow,
  detail: {
    input: string;
    extracted?: string;
    proposal?: string;
    llm?: string;
    ms: number;
    currency?: string;
    /** Where the claim's return stands, when its ACCEPT asked the item back (docs/returns.md). */
    awaiting?: string;
    /** The bonus of an ACCEPT given as store credit (docs/returns.md#outcomes). */
    credit?: string;
    /** What an ACCEPT given as an exchange does (docs/returns.md#outcomes). */
    exchange?: string;
  },
): string {
  const mark = rowMark(row);
  const lines = [
    `[${index}/${total}] ${row.id} — ${row.label}`,
    `  Input    : ${detail.input}`,
    ...(detail.extracted ? [`  Extracted: ${detail.extracted}`] : []),
    ...(detail.proposal ? [`  Proposal : ${detail.proposal}`] : []),
    `  Verdict  : ${paintVerdict(row.verdict)}${row.reason_code ? ` (${row.reason_code})` : ""}  expected ${outcomeText(row.expected, row.expected_reason_code)}  ${mark}  ${detail.ms.toFixed(0)} ms`,
    ...(row.reason ? [`  Reason   : ${row.reason}`] : []),
    ...(row.note ? [`  Why      : ${row.note}`] : []),
    ...(detail.llm ? [`  LLM      : ${detail.llm}`] : []),
    ...(row.executed
      ? [
          detail.credit
            ? `  Credit   : store credit of ${refundText(row.amount_eur, detail.currency ?? "EUR")} on ${row.order_id}, ${detail.credit}`
            : `  Refund   : executed ${refundText(row.amount_eur, detail.currency ?? "EUR")} on ${row.order_id}`,
        ]
      : []),
    ...(detail.awaiting
      ? [`  ${detail.awaiting.startsWith("an exchange") ? "Exchange" : "Return  "} : ${detail.awaiting}`]
      : []),
    "",
  ];
  return lines.join("\n");
}

/** "12.50 EUR", "12800 JPY": the amount with its currency's decimals (ISO 4217: JPY none, KWD three). */
function refundText(amount: number | null, currency: string): string {
  return `${amount?.toFixed(minorUnitsOf(currency) ?? 2)} ${currency}`;
}

/** The line printed once every row of a race has ended: "Race customer-limit (CL1, CL2, CL3, CL4): 2 of 4 accepted ✓". */
export function formatRace(group: RaceGroup): string {
  const answer = `${group.outcome} ${group.matches ? "✓" : "✗"}`;
  return `Race ${group.race} (${group.ids.join(", ")}): ${paint(group.matches ? "32" : "31", answer)}  (which rows win is not determined, how many do is)\n`;
}

/** The summary printed after a batch. */
export function formatSummary(
  rows: BatchRow[],
  extra: { report?: string; ms: number; notes?: readonly string[] },
): string {
  const rule = "=".repeat(78);
  const passed = rows.filter((r) => r.matches).length;
  const lines = [rule, "Summary", rule];
  for (const r of rows) {
    const mark = r.matches ? paint("32", "✓") : paint("31", "✗");
    const why = r.race_group
      ? `  (${raceText(r.race_group)})`
      : r.matches
        ? ""
        : `  (expected ${[r.expected, r.expected_reason_code].filter(Boolean).join(" ")}, got ${[r.verdict, r.reason_code].filter(Boolean).join(" ")})`;
    lines.push(`  ${mark} ${paintVerdict(r.verdict.padEnd(12))} ${r.id.padEnd(4)} ${r.label}${why}`);
    if (!r.matches && r.note) lines.push(`      why: ${r.note}`);
  }
  lines.push(
    "",
    `  ${passed}/${rows.length} scenarios match their expected verdict in ${(extra.ms / 1000).toFixed(1)} s.`,
  );
  for (const note of extra.notes ?? []) lines.push(`  ${note}`);
  if (extra.report) lines.push(`  Report: ${extra.report}`);
  return `${lines.join("\n")}\n`;
}

/** A call as the progress and figures need it. */
interface CallFigure {
  readonly task: string;
  readonly ok: boolean;
  readonly code?: string | undefined;
  /** HTTP attempts; 0 when the call was refused before it was sent (the endpoint is known to be down). */
  readonly attempts?: number;
  readonly ms: number;
}

/** The line printed while a claim is waited for: elapsed time, its status, and the model calls in flight. */
export function formatProgress(p: {
  id: string;
  claimId: string;
  status: string;
  elapsedMs: number;
  inFlight: ReadonlyArray<{ task: string; elapsedMs: number }>;
  done?: number | undefined;
}): string {
  const calls =
    p.inFlight.length === 0
      ? "no model call in flight"
      : `${p.inFlight.length} model call${p.inFlight.length === 1 ? "" : "s"} in flight (${p.inFlight.map((c) => `${c.task} ${(c.elapsedMs / 1000).toFixed(0)} s`).join(", ")})`;
  return `  … ${p.id} ${p.claimId}: ${p.status} for ${(p.elapsedMs / 1000).toFixed(0)} s; ${calls}${p.done === undefined ? "" : `; ${p.done} call${p.done === 1 ? "" : "s"} done in this run`}`;
}

/** "3 calls, 21.4 s (max 12.0 s); 1 failed: LLM_TIMEOUT" for one claim's calls. */
export function formatCalls(calls: readonly CallFigure[]): string {
  if (calls.length === 0) return "no model calls";
  const total = calls.reduce((n, c) => n + c.ms, 0);
  const max = Math.max(...calls.map((c) => c.ms));
  const failed = calls.filter((c) => !c.ok);
  return `${calls.length} call${calls.length === 1 ? "" : "s"}, ${(total / 1000).toFixed(1)} s (max ${(max / 1000).toFixed(1)} s)${failed.length === 0 ? "" : `; ${failed.length} failed: ${countCodes(failed)}`}`;
}

/** The model's figures for a whole run: time per call and per claim, and what failed. */
export function formatLlmFigures(calls: readonly CallFigure[], claimMs: readonly number[]): string[] {
  if (calls.length === 0) return ["LLM: no model calls."];
  const ms = calls.map((c) => c.ms).sort((a, b) => a - b);
  const s = (v: number) => `${(v / 1000).toFixed(1)} s`;
  const mean = (v: readonly number[]) => v.reduce((n, x) => n + x, 0) / Math.max(1, v.length);
  const failed = calls.filter((c) => !c.ok);
  const byTask = [...new Set(calls.map((c) => c.task))]
    .map((t) => `${t} ${calls.filter((c) => c.task === t).length}`)
    .join(", ");
  return [
    `LLM: ${calls.length} calls (${byTask}); per call mean ${s(mean(ms))}, median ${s(ms[Math.floor(ms.length / 2)]!)}, max ${s(ms.at(-1)!)}; ${failed.length === 0 ? "none failed" : `${failed.length} failed: ${countCodes(failed)}`}.`,
    `Per claim: mean ${s(mean(claimMs))}, max ${s(Math.max(0, ...claimMs))}.`,
  ];
}

function countCodes(calls: readonly CallFigure[]): string {
  const counts = new Map<string, number>();
  for (const c of calls) {
    const key = `${c.code ?? "failed"}${c.attempts === 0 ? " (not sent: endpoint down)" : ""}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([code, n]) => (n === 1 ? code : `${code} ×${n}`)).join(", ");
}
