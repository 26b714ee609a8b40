// Console output of `claims batch`: one block per scenario as it is decided, then a summary.

/** One row of the `--json` contract of `claims batch` (SPEC §7.1). */
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
}

/** `REJECT (EXCEEDS_REFUNDABLE_BALANCE)`, or the verdict alone without a code. */
function outcomeText(verdict: string, code: string | null | undefined): string {
  return code ? `${verdict} (${code})` : verdict;
}

/**
 * Explains a balance rejection that an earlier row of the same run caused by refunding the same order — what
 * happens to DIR sample 35's scenario E, whose seed refunds ord_001 a second time after A (SPEC §6).
 */
export function refundedBeforeNote(row: BatchRow, earlier: readonly BatchRow[]): { note?: string } {
  if (row.reason_code !== "EXCEEDS_REFUNDABLE_BALANCE" || row.order_id === null) return {};
  const before = earlier.filter((r) => r.executed && r.order_id === row.order_id);
  if (before.length === 0) return {};
  const refunded = before.map((r) => `${r.amount_eur?.toFixed(2)} EUR by ${r.id}`).join(", ");
  return { note: `${row.order_id} was already refunded in this run (${refunded}) and the refund ledger never pays an order twice; DIR sample 35 refunds the same order again because its runtime keeps no ledger` };
}

const useColor = () => process.stdout.isTTY === true && !process.env.NO_COLOR;
const paint = (code: string, s: string) => (useColor() ? `\u001b[${code}m${s}\u001b[0m` : s);
const VERDICT_COLOR: Record<string, string> = { ACCEPT: "32", ESCALATE: "33", REJECT: "31", NEEDS_REVIEW: "35" };

/** Colours a verdict for a terminal. */
export function paintVerdict(verdict: string): string {
  return paint(VERDICT_COLOR[verdict] ?? "0", verdict);
}

/** The header printed before a batch. */
export function formatHeader(info: { config: string; scenarios: string; count: number; llm: string; agent: string; now: string; simulationId: string; stack: string }): string {
  const rule = "=".repeat(78);
  return [
    rule,
    "Claims Crew — scenario batch",
    rule,
    `  Config    : ${info.config}`,
    `  Scenarios : ${info.scenarios} (${info.count})`,
    `  LLM       : ${info.llm}`,
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
export function formatScenario(index: number, total: number, row: BatchRow, detail: { input: string; extracted?: string; proposal?: string; ms: number }): string {
  const mark = row.matches ? paint("32", "✓") : paint("31", "✗");
  const lines = [
    `[${index}/${total}] ${row.id} — ${row.label}`,
    `  Input    : ${detail.input}`,
    ...(detail.extracted ? [`  Extracted: ${detail.extracted}`] : []),
    ...(detail.proposal ? [`  Proposal : ${detail.proposal}`] : []),
    `  Verdict  : ${paintVerdict(row.verdict)}${row.reason_code ? ` (${row.reason_code})` : ""}  expected ${outcomeText(row.expected, row.expected_reason_code)}  ${mark}  ${detail.ms.toFixed(0)} ms`,
    ...(row.reason ? [`  Reason   : ${row.reason}`] : []),
    ...(row.note ? [`  Why      : ${row.note}`] : []),
    ...(row.executed ? [`  Refund   : executed ${row.amount_eur?.toFixed(2)} EUR on ${row.order_id}`] : []),
    "",
  ];
  return lines.join("\n");
}

/** The summary printed after a batch. */
export function formatSummary(rows: BatchRow[], extra: { report?: string; ms: number }): string {
  const rule = "=".repeat(78);
  const passed = rows.filter((r) => r.matches).length;
  const lines = [rule, "Summary", rule];
  for (const r of rows) {
    const mark = r.matches ? paint("32", "✓") : paint("31", "✗");
    lines.push(`  ${mark} ${paintVerdict(r.verdict.padEnd(12))} ${r.id.padEnd(4)} ${r.label}${r.matches ? "" : `  (expected ${[r.expected, r.expected_reason_code].filter(Boolean).join(" ")}, got ${[r.verdict, r.reason_code].filter(Boolean).join(" ")})`}`);
    if (!r.matches && r.note) lines.push(`      why: ${r.note}`);
  }
  lines.push("", `  ${passed}/${rows.length} scenarios match their expected verdict in ${(extra.ms / 1000).toFixed(1)} s.`);
  if (extra.report) lines.push(`  Report: ${extra.report}`);
  return `${lines.join("\n")}\n`;
}
