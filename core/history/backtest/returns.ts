// The money a policy pays before the item is back (docs/backtest.md "Paid before the item was back"): per side, the
// automatic refunds paid at once — no return asked, so paid while the customer still has the item — in each currency
// apart (never added across currencies), and how many claims they were. The recorded side reads each refund's course
// (a return asked: waited for it); the candidate's asks its own policy whether the same refund would have waited.

import { money, moneyJson } from "../../kernel/money.ts";

/** One side's refunds paid at once: how many claims, and the minor units per currency. */
export type PaidAtOnce = { claims: number; minor: Record<string, number> };

/** Both sides' refunds paid at once, as a backtest counts them. */
export type PaidBeforeReturnTally = { before: PaidAtOnce; after: PaidAtOnce };

/** One side of the report's `paid_before_return`: claims paid at once and their amounts, one entry per currency. */
export type PaidBeforeReturnSide = { claims: number; paid: { value: string; currency: string }[] };

/** Nothing paid at once yet, on either side. */
export const newPaidBeforeReturn = (): PaidBeforeReturnTally => ({
  before: { claims: 0, minor: {} },
  after: { claims: 0, minor: {} },
});

/**
 * Counts one claim's refund paid at once on `side`: `minor` units of `currency` (0: nothing paid at once — no
 * refund, or one that waited for its return).
 */
export function countPaidAtOnce(side: PaidAtOnce, minor: number, currency: string): void {
  if (minor <= 0) return;
  side.claims++;
  side.minor[currency] = (side.minor[currency] ?? 0) + minor;
}

/** A side as the report gives it: its currencies sorted, each amount in its own currency. */
export function paidBeforeReturnOf(side: PaidAtOnce): PaidBeforeReturnSide {
  const currencies = Object.entries(side.minor).sort(([a], [b]) => (a < b ? -1 : 1));
  return { claims: side.claims, paid: currencies.map(([c, minor]) => moneyJson(money(minor, c))) };
}

/**
 * Each currency either side paid at once in, sorted, with both sides' amounts (a side that paid none in it: zero in
 * that currency's decimals): what the human output and the HTML report show, one pair per currency, never added.
 */
export function paidBeforeReturnPairs(p: {
  before: PaidBeforeReturnSide;
  after: PaidBeforeReturnSide;
}): { currency: string; before: string; after: string }[] {
  const of = (s: PaidBeforeReturnSide) => new Map(s.paid.map((a) => [a.currency, a.value]));
  const [b, a] = [of(p.before), of(p.after)];
  const zero = (value: string | undefined) => (value ?? "0").replace(/\d/g, "0");
  return [...new Set([...b.keys(), ...a.keys()])].sort().map((currency) => ({
    currency,
    before: b.get(currency) ?? zero(a.get(currency)),
    after: a.get(currency) ?? zero(b.get(currency)),
  }));
}
