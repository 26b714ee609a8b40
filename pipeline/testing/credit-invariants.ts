// The money invariants of store credit (docs/returns.md#outcomes), over what the bus carried. Store credit is a
// RefundExecuted that carries `credit`: the base counts against the order's ledger like cash (so checkMoneyInvariants
// already holds credit + cash to what was paid, per line and order, once per claim, never before pay_on); these add
// what only credit has: its bonus is exactly the policy's percentage of the base, rounded down, in the order's
// currency; the credit a return reserved is the credit paid; and the provider settles it as credit (never as cash).
import { parseMoney } from "../../core/kernel/money.ts";
import type { PublishedEvent } from "./money-invariants.ts";

type Credit = { bonus?: { value?: unknown; currency?: unknown }; bonus_pct?: unknown };

/** The amount of an event in minor units of its currency (`amount`, else `amount_eur` as EUR), or undefined. */
function amountMinor(detail: Record<string, unknown>): { minor: number; currency: string } | undefined {
  const amount = detail.amount as { value?: unknown; currency?: unknown } | undefined;
  const currency = typeof amount?.currency === "string" ? amount.currency : "EUR";
  const parsed = amount ? parseMoney(amount.value, currency, { strings: true }) : parseMoney(detail.amount_eur, "EUR");
  return parsed.ok ? { minor: parsed.money.minor, currency } : undefined;
}

/** What is wrong with one RefundExecuted's store credit (nothing for a refund). */
function creditProblem(e: PublishedEvent): string | undefined {
  const credit = e.detail.credit as Credit | undefined;
  if (credit === undefined) return undefined;
  const what = `store credit ${String(e.detail.execution_id)} of claim ${String(e.detail.claim_id)}`;
  const base = amountMinor(e.detail);
  const pct = credit.bonus_pct;
  if (!base) return `${what} has no readable amount`;
  if (typeof pct !== "number" || !Number.isInteger(pct) || pct < 0 || pct > 100)
    return `${what}: bonus_pct ${String(pct)} is not a whole percentage 0-100`;
  if (credit.bonus?.currency !== base.currency)
    return `${what}: its bonus is in ${String(credit.bonus?.currency)}, its amount in ${base.currency}`;
  const bonus = parseMoney(credit.bonus.value, base.currency, { strings: true });
  const due = Math.floor((base.minor * pct) / 100);
  if (!bonus.ok || bonus.money.minor !== due)
    return `${what}: a bonus of ${String(credit.bonus.value)} is not ${pct}% of the base (${due} minor units)`;
  return undefined;
}

/**
 * Store credit's own invariants over distinct events (one per id; the settlements from every published event): each credit's bonus is its percentage of the base;
 * a credit paid on a return is the credit its ReturnRequested reserved (and a refund stays a refund); a settlement of
 * a credit is a credit's, of a refund a refund's.
 */
export function creditViolations(
  all: readonly PublishedEvent[],
  /** Every event as published, settlements included (repeats allowed). */
  published: readonly PublishedEvent[] = all,
): string[] {
  const violations: string[] = [];
  const executions = all.filter((e) => e.detailType === "RefundExecuted");
  for (const e of executions) {
    const problem = creditProblem(e);
    if (problem) violations.push(problem);
  }
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  for (const asked of all.filter((e) => e.detailType === "ReturnRequested"))
    for (const paid of executions.filter((e) => e.detail.execution_id === asked.detail.execution_id))
      if (!same(asked.detail.credit, paid.detail.credit))
        violations.push(
          `claim ${String(asked.detail.claim_id)}: its return reserved ${asked.detail.credit ? "store credit" : "a refund"} but ${paid.detail.credit ? "store credit" : "a refund"} was paid`,
        );
  const byExecution = new Map(executions.map((e) => [String(e.detail.execution_id), e]));
  // An exchange moves no money (docs/returns.md#outcomes): no RefundExecuted ever follows its ExchangeRequested.
  for (const x of all.filter((e) => e.detailType === "ExchangeRequested"))
    if (executions.some((e) => e.detail.verdict_id === x.detail.verdict_id))
      violations.push(`claim ${String(x.detail.claim_id)} was exchanged and paid too`);
  for (const s of published.filter((e) => e.detailType === "RefundSettled" || e.detailType === "RefundFailed")) {
    const paid = byExecution.get(String(s.detail.execution_id));
    if (paid && !same(paid.detail.credit, s.detail.credit))
      violations.push(
        `${s.detailType} ${String(s.detail.execution_id)} of claim ${String(s.detail.claim_id)} settles ${s.detail.credit ? "store credit" : "a refund"}, but ${paid.detail.credit ? "store credit" : "a refund"} was authorised`,
      );
  }
  return violations;
}

/** Store credit issued and its bonus, per currency in minor units (the backtest's and the chaos report's figures). */
export function creditSummary(all: readonly PublishedEvent[]): Record<string, { credit: number; bonus: number }> {
  const out: Record<string, { credit: number; bonus: number }> = {};
  for (const e of all) {
    const credit = e.detail.credit as Credit | undefined;
    if (e.detailType !== "RefundExecuted" || !credit) continue;
    const base = amountMinor(e.detail);
    const bonus = base ? parseMoney(credit.bonus?.value, base.currency, { strings: true }) : undefined;
    if (!base || !bonus?.ok) continue;
    const t = out[base.currency] ?? { credit: 0, bonus: 0 };
    t.credit += base.minor + bonus.money.minor;
    t.bonus += bonus.money.minor;
    out[base.currency] = t;
  }
  return out;
}
