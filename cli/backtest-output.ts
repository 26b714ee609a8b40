// The human output of `claims backtest`: what flips, the automatically refunded amount and the review load
// before → after (by reason code), the claims a person decided, and the claims that could not be re-decided.
import type { BacktestReport, BacktestTotals, Outcome } from "../core/history/backtest/index.ts";
import { formatEur, toCents } from "../core/kernel/money.ts";
import { formatPolicyChanges } from "../core/history/backtest/policy-diff.ts";
import { describeReturnWindow } from "../core/kernel/policy.ts";
import { paidBeforeReturnPairs } from "../core/history/backtest/returns.ts";

const outcome = (o: Outcome) => `${o.verdict} ${o.reason_code}`;
const eur = (value: number) => `${formatEur(toCents(value))} EUR`;

function signed(n: number, unit = ""): string {
  return n === 0 ? "±0" : `${n > 0 ? "+" : "−"}${Math.abs(n)}${unit}`;
}

/** Rows of cells as aligned columns, indented. */
function table(rows: readonly string[][], indent = "  "): string[] {
  const widths = rows.reduce<number[]>((w, row) => row.map((cell, i) => Math.max(w[i] ?? 0, cell.length)), []);
  return rows.map(
    (row) =>
      indent +
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
  );
}

/** A zero amount written with the decimals of `value` ("0.00", "0"): what a currency without credit shows. */
function money0(value: string): string {
  return value.replace(/\d/g, "0");
}

/** The report for a person, in the order an operator reads it. */
export function formatBacktest(report: BacktestReport, header: { policyFile: string; source: string }): string {
  const c = report.policy.contract;
  const { before, after } = report.totals;
  const refundDelta = toCents(after.auto_refunded_eur) - toCents(before.auto_refunded_eur);
  const lines = [
    `Backtest of ${header.policyFile}: agent ${report.policy.agent_id}, up to ${eur(c.max_refund_without_escalation)} without a person, return window ${describeReturnWindow(c)}, escalate below confidence ${report.policy.escalate_on_uncertainty}`,
    ...(report.policy.changes === undefined
      ? ["  What changes: unknown (no recorded decision says the policy it was taken under)"]
      : [
          `  What changes: ${formatPolicyChanges(report.policy.changes)} (against the policy of the last recorded decision)`,
        ]),
    `  from ${header.source}: ${report.histories.map((h) => `${h.id} (${h.evaluated} re-decided)`).join(", ")}`,
    `  ${report.evaluated} claim(s) re-decided on their recorded proposal, claim, order facts and times; no model or order API called, nothing written`,
    ...(report.policy.ignored_shadow_policy
      ? [
          `  The file's shadow_policy (agent ${report.policy.ignored_shadow_policy.agent_id} v${report.policy.ignored_shadow_policy.version}) is ${report.policy.ignored_shadow_policy.note}`,
        ]
      : []),
    "",
    report.flips.length === 0 ? "Flips: none" : `Flips (${report.flips.length}):`,
    ...table(
      report.flip_details.map((f) => [
        f.claim_id,
        f.order_id ?? "-",
        f.amount_eur === null ? "-" : eur(f.amount_eur),
        outcome(f.from),
        "→",
        outcome(f.to),
      ]),
    ),
    "",
    `Refunded automatically: ${eur(before.auto_refunded_eur)} → ${eur(after.auto_refunded_eur)} (${refundDelta === 0 ? "±0" : `${refundDelta > 0 ? "+" : "−"}${formatEur(Math.abs(refundDelta))} EUR`})`,
    // Each other currency on a line of its own: no two currencies are ever added.
    ...otherCurrencies(before, after).map(([c, b, a]) => `Refunded automatically in ${c}: ${b} ${c} → ${a} ${c}`),
    // What each side paid at once, no return asked (docs/backtest.md#paid-before-the-item-was-back), per currency.
    `Paid before the item was back: ${report.paid_before_return.before.claims} → ${report.paid_before_return.after.claims} claims${paidBeforeReturnPairs(
      report.paid_before_return,
    )
      .map((p) => `; ${p.before} ${p.currency} → ${p.after} ${p.currency}`)
      .join("")}`,
    // The candidate's outcomes (docs/backtest.md#outcomes), only when it gives something other than cash.
    ...(report.outcomes ?? [])
      .filter((o) => o.credit_issued.value !== money0(o.credit_issued.value) || o.exchanges > 0)
      .map(
        (o) =>
          `Under the candidate, in ${o.currency}: ${o.cash_refunded.value} refunded as cash, ${o.credit_issued.value} issued as store credit (its bonus ${o.bonus_cost.value}), ${o.exchanges} exchange${o.exchanges === 1 ? "" : "s"}`,
      ),
    `Reviews (sent to a person): ${before.reviews} → ${after.reviews} (${signed(after.reviews - before.reviews)})`,
    ...table(
      [...new Set([...Object.keys(before.by_reason), ...Object.keys(after.by_reason)])].sort().map((code) => {
        const [b, a] = [before.by_reason[code] ?? 0, after.by_reason[code] ?? 0];
        return [code, `${b} → ${a}`, a === b ? "" : `(${signed(a - b)})`];
      }),
    ),
  ];
  if (report.human_decisions.length > 0) {
    lines.push(
      "",
      `Decided by a person (the decision stays as taken; not counted as flips): ${report.human_decisions.length}`,
    );
    lines.push(
      ...table(
        report.human_decisions.map((p) => [
          p.claim_id,
          `${p.decision}${p.reviewer ? ` by ${p.reviewer}` : ""}`,
          `recorded ${outcome(p.recorded)}`,
          p.candidate_sends_to_person
            ? `the candidate sends it to a person too (${outcome(p.candidate)})`
            : `the candidate would NOT send it to a person (${outcome(p.candidate)})`,
          [p.reviewer_note ? `note: ${JSON.stringify(p.reviewer_note)}` : "", p.note ?? ""].filter(Boolean).join("; "),
        ]),
      ),
    );
  }
  lines.push(
    "",
    report.not_evaluable.length === 0
      ? "Not evaluable: none"
      : `Not evaluable (${report.not_evaluable.length}): left out of the figures above`,
    ...table(report.not_evaluable.map((n) => [n.claim_id, n.reason])),
    "",
  );
  return lines.join("\n");
}

/** The currencies other than EUR either side refunded in, with each side's total ("0" when it refunded none). */
function otherCurrencies(before: BacktestTotals, after: BacktestTotals): [string, string, string][] {
  const of = (t: BacktestTotals) => new Map((t.auto_refunded ?? []).map((a) => [a.currency, a.value]));
  const b = of(before);
  const a = of(after);
  return [...new Set([...b.keys(), ...a.keys()])].sort().map((c) => [c, b.get(c) ?? "0", a.get(c) ?? "0"]);
}
