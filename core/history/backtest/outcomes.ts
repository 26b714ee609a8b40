// The backtest's outcome figures (docs/backtest.md#outcomes): under the candidate policy, what its automatic ACCEPTs
// would have given — cash refunded, store credit issued and the bonus that credit would have cost, exchanges — per
// currency (no two currencies added). Kept apart from the other figures so each stays its own column of the report.
import type { Claim } from "../../claim/claim.ts";
import type { ClaimsContract, Order } from "../../integrity/contracts.ts";
import { money, moneyJson } from "../../kernel/money.ts";
import { outcomeOfClaim } from "../../kernel/outcomes.ts";

/** Per currency, in its minor units: cash refunded, credit issued (base + bonus), the bonus alone, exchanges. */
export type OutcomeTally = Record<string, { cash: number; credit: number; bonus: number; exchanges: number }>;

/** The figures as the report gives them, one row per currency (amounts `{ value, currency }`). */
export type OutcomeFigures = {
  currency: string;
  cash_refunded: { value: string; currency: string };
  credit_issued: { value: string; currency: string };
  bonus_cost: { value: string; currency: string };
  exchanges: number;
}[];

/** Counts one candidate ACCEPT refunding `minor` of `currency` on `order`: as cash, store credit or an exchange. */
export function tallyOutcome(
  tally: OutcomeTally,
  contract: Pick<ClaimsContract, "outcomes">,
  order: Order,
  claim: Pick<Claim, "category" | "lines" | "outcome">,
  minor: number,
  currency: string,
): void {
  if (minor <= 0) return;
  const row = tally[currency] ?? { cash: 0, credit: 0, bonus: 0, exchanges: 0 };
  const outcome = outcomeOfClaim(contract, order, claim, minor, currency);
  if (outcome.outcome === "STORE_CREDIT") {
    row.credit += minor + outcome.bonus.minor;
    row.bonus += outcome.bonus.minor;
  } else if (outcome.outcome === "EXCHANGE") row.exchanges++;
  else row.cash += minor;
  tally[currency] = row;
}

/** The tally as the report's rows, currencies in code order. */
export function outcomeFigures(tally: OutcomeTally): OutcomeFigures {
  return Object.keys(tally)
    .sort()
    .map((currency) => {
      const t = tally[currency]!;
      const amount = (minor: number) => moneyJson(money(minor, currency));
      return {
        currency,
        cash_refunded: amount(t.cash),
        credit_issued: amount(t.credit),
        bonus_cost: amount(t.bonus),
        exchanges: t.exchanges,
      };
    });
}
