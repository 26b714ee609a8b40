// The backtest's outcome figures: cash, store credit with its bonus and exchanges, per currency, never added across.
import { describe, expect, it } from "vitest";
import type { ClaimsContract, Order } from "../../integrity/contracts.ts";
import { outcomeFigures, tallyOutcome, type OutcomeTally } from "./outcomes.ts";

const order = (currency: string, category: string): Order =>
  ({ order_id: "o", purchase_date: "2026-11-01", currency, category, amount: 100 }) as Order;
const policy: Pick<ClaimsContract, "outcomes"> = {
  outcomes: { categories: { home: { outcome: "STORE_CREDIT", store_credit_bonus_pct: 10, allows: ["EXCHANGE"] } } },
};

describe("the backtest's outcome figures", () => {
  it("count cash, credit with its bonus and exchanges apart, per currency", () => {
    const tally: OutcomeTally = {};
    tallyOutcome(tally, policy, order("EUR", "home"), { category: "home" }, 8000, "EUR");
    tallyOutcome(tally, policy, order("EUR", "home"), { category: "home", outcome: "REFUND" }, 2000, "EUR");
    tallyOutcome(tally, policy, order("EUR", "electronics"), { category: "electronics" }, 5000, "EUR");
    tallyOutcome(tally, policy, order("EUR", "home"), { category: "home", outcome: "EXCHANGE" }, 4500, "EUR");
    tallyOutcome(tally, policy, order("JPY", "home"), { category: "home" }, 1999, "JPY");
    tallyOutcome(tally, policy, order("EUR", "home"), { category: "home" }, 0, "EUR");
    expect(outcomeFigures(tally)).toEqual([
      {
        currency: "EUR",
        cash_refunded: { value: "70.00", currency: "EUR" },
        credit_issued: { value: "88.00", currency: "EUR" },
        bonus_cost: { value: "8.00", currency: "EUR" },
        exchanges: 1,
      },
      {
        currency: "JPY",
        cash_refunded: { value: "0", currency: "JPY" },
        credit_issued: { value: "2198", currency: "JPY" },
        bonus_cost: { value: "199", currency: "JPY" },
        exchanges: 0,
      },
    ]);
  });

  it("is all cash without an outcome policy", () => {
    const tally: OutcomeTally = {};
    tallyOutcome(tally, {}, order("EUR", "home"), { category: "home", outcome: "STORE_CREDIT" }, 8000, "EUR");
    expect(outcomeFigures(tally)[0]).toMatchObject({
      cash_refunded: { value: "80.00" },
      credit_issued: { value: "0.00" },
    });
  });
});
