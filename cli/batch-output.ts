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
    `  Verdict  : ${paintVerdict(row.verdict)}${row.reason_code ? ` (${row.reason_code})` : ""}  expected ${row.expected}  ${mark}  ${detail.ms.toFixed(0)} ms`,
    ...(row.reason ? [`  Reason   : ${row.reason}`] : []),
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
    lines.push(`  ${mark} ${paintVerdict(r.verdict.padEnd(12))} ${r.id.padEnd(4)} ${r.label}${r.matches ? "" : `  (expected ${r.expected})`}`);
  }
  lines.push("", `  ${passed}/${rows.length} scenarios match their expected verdict in ${(extra.ms / 1000).toFixed(1)} s.`);
  if (extra.report) lines.push(`  Report: ${extra.report}`);
  return `${lines.join("\n")}\n`;
}
