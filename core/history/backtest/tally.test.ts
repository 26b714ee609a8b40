// A backtest's automatic refunds per currency (issue 32): EUR's stay `auto_refunded_eur`, every other currency is
// totalled apart in its own minor units, and nothing is added across currencies.
import { describe, expect, it } from "vitest";
import { count, newAccumulator, totalsOf } from "./tally.ts";

describe("a backtest side's totals", () => {
  it("counts EUR in cents and USD and JPY apart, never adding them", () => {
    const { before } = newAccumulator();
    count(before, "ACCEPT", "VALIDATION_PASSED", 12_000);
    count(before, "ACCEPT", "VALIDATION_PASSED", 4_500, "USD");
    count(before, "ACCEPT", "VALIDATION_PASSED", 500, "JPY");
    count(before, "ACCEPT", "VALIDATION_PASSED", 1_000, "USD");
    count(before, "ESCALATE", "AMOUNT_ABOVE_LIMIT", 0, "USD");
    expect(totalsOf(before)).toEqual({
      auto_refunded_eur: 120,
      auto_refunded: [
        { value: "500", currency: "JPY" },
        { value: "55.00", currency: "USD" },
      ],
      reviews: 1,
      by_reason: { AMOUNT_ABOVE_LIMIT: 1 },
    });
  });

  it("keeps the shape of an EUR-only backtest as it was", () => {
    const { after } = newAccumulator();
    count(after, "ACCEPT", "VALIDATION_PASSED", 29_999);
    expect(totalsOf(after)).toEqual({ auto_refunded_eur: 299.99, reviews: 0, by_reason: {} });
  });
});
