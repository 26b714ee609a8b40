// What a backtest counts as it goes: the claims re-decided and not evaluable, the flips, the people's decisions, and
// each side's (recorded, candidate) verdicts, reviews and automatic refunds.
import { centsToEur, money, moneyJson } from "../../kernel/money.ts";
import type { VerdictKind } from "../../integrity/verdict.ts";
import type { LineReserve } from "../../kernel/ledger.ts";
import type { BacktestReport, BacktestTotals, FlipDetail, PersonDecision } from "./types.ts";
import { newPaidBeforeReturn, type PaidBeforeReturnTally } from "./returns.ts";
import type { OutcomeTally } from "./outcomes.ts";

/** One side's counts: the recorded decisions' or the candidate's. */
export type Side = {
  /** EUR cents refunded without a person. */
  autoCents: number;
  /** Minor units refunded without a person in each other currency: never added to EUR's, nor to each other. */
  autoMinor: Record<string, number>;
  reviews: number;
  byReason: Record<string, number>;
  verdicts: Record<VerdictKind, number>;
};
/** Everything counted over the histories of one backtest. */
export type Accumulator = {
  evaluated: number;
  notEvaluable: BacktestReport["not_evaluable"];
  flips: FlipDetail[];
  people: PersonDecision[];
  /** The person decisions of the history being simulated, by claim id, awaiting the person's step. */
  awaitingPerson: Map<string, PersonDecision>;
  /** The cents each escalated claim proposed: an approval of less binds the order. */
  proposedCents: Map<string, number>;
  /** The order each decided claim of the history being simulated holds a review or refund on. */
  orderOfClaim: Map<string, string>;
  /** For a person's later approval on an order with lines: the lines its refund is reserved on, by the amount approved. */
  linesOfClaim: Map<string, (cents: number) => LineReserve | undefined>;
  before: Side;
  after: Side;
  /** Each side's automatic refunds paid at once, with no return asked (returns.ts). */
  paidBeforeReturn: PaidBeforeReturnTally;
  /** The candidate's automatic ACCEPTs by outcome: cash, store credit and its bonus, exchanges (outcomes.ts). */
  outcomes: OutcomeTally;
};

const newSide = (): Side => ({
  autoCents: 0,
  autoMinor: {},
  reviews: 0,
  byReason: {},
  verdicts: { ACCEPT: 0, ESCALATE: 0, REJECT: 0 },
});
/** An empty tally. */
export const newAccumulator = (): Accumulator => ({
  evaluated: 0,
  notEvaluable: [],
  flips: [],
  people: [],
  awaitingPerson: new Map(),
  proposedCents: new Map(),
  orderOfClaim: new Map(),
  linesOfClaim: new Map(),
  before: newSide(),
  after: newSide(),
  paidBeforeReturn: newPaidBeforeReturn(),
  outcomes: {},
});

/**
 * Counts one decision on `side`: its verdict, an ESCALATE's review by reason, the minor units of the order's
 * `currency` refunded without a person (EUR's as cents, each other currency apart).
 */
export function count(
  side: Side,
  verdict: VerdictKind,
  reasonCode: string,
  refundedMinor: number,
  currency = "EUR",
): void {
  side.verdicts[verdict]++;
  if (currency === "EUR") side.autoCents += refundedMinor;
  else if (refundedMinor !== 0) side.autoMinor[currency] = (side.autoMinor[currency] ?? 0) + refundedMinor;
  if (verdict === "ESCALATE") {
    side.reviews++;
    side.byReason[reasonCode] = (side.byReason[reasonCode] ?? 0) + 1;
  }
}

/** A side's totals as the report gives them (reasons sorted). */
export function totalsOf(side: Side): BacktestTotals {
  const byReason = Object.fromEntries(Object.entries(side.byReason).sort(([a], [b]) => (a < b ? -1 : 1)));
  const others = Object.entries(side.autoMinor).sort(([a], [b]) => (a < b ? -1 : 1));
  return {
    auto_refunded_eur: centsToEur(side.autoCents),
    ...(others.length > 0 ? { auto_refunded: others.map(([c, minor]) => moneyJson(money(minor, c))) } : {}),
    reviews: side.reviews,
    by_reason: byReason,
  };
}
