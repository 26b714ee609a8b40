// Amounts in the public shapes: `{ value, currency }` exact to the currency's minor unit, `amount_eur` only for EUR.
import { describe, expect, it } from "vitest";
import { money } from "./money.ts";
import { AmountSchema, amountFields, currencyFor, recordedAmountFields } from "./public-amount.ts";

describe("an amount with its currency", () => {
  it.each([
    ["500", "JPY"],
    ["12.34", "USD"],
    ["12.345", "KWD"],
    ["0.05", "EUR"],
  ])("takes %s %s: exactly the currency's decimals", (value, currency) => {
    expect(AmountSchema.safeParse({ value, currency }).success).toBe(true);
  });

  it.each([
    ["500.0", "JPY", "value"],
    ["12.3", "USD", "value"],
    ["12.34", "KWD", "value"],
    ["12,34", "EUR", "value"],
    ["12.34", "usd", "currency"],
    ["12.34", "XYZ", "currency"],
  ])("refuses %s %s, naming the %s", (value, currency, field) => {
    const parsed = AmountSchema.safeParse({ value, currency });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path.join("."))).toContain(field);
  });

  it("carries amount_eur beside the amount only in EUR", () => {
    expect(amountFields(money(1234, "EUR"))).toEqual({
      amount: { value: "12.34", currency: "EUR" },
      amount_eur: 12.34,
    });
    expect(amountFields(money(1234, "USD"))).toEqual({ amount: { value: "12.34", currency: "USD" } });
    expect(amountFields(money(500, "JPY"))).toEqual({ amount: { value: "500", currency: "JPY" } });
    expect(amountFields(money(12345, "KWD"))).toEqual({ amount: { value: "12.345", currency: "KWD" } });
  });

  it("reads a recorded amount in its currency: null when there is none or it is not exact there", () => {
    expect(recordedAmountFields(12.345, "KWD")).toEqual({ amount: { value: "12.345", currency: "KWD" } });
    expect(recordedAmountFields(499.5, "JPY")).toEqual({ amount: null });
    expect(recordedAmountFields(null, "EUR")).toEqual({ amount: null, amount_eur: null });
    expect(recordedAmountFields(1200, "EUR")).toEqual({
      amount: { value: "1200.00", currency: "EUR" },
      amount_eur: 1200,
    });
  });

  it("counts the order's currency, else the claim's, else EUR", () => {
    expect(currencyFor({ currency: "JPY" }, "USD")).toBe("JPY");
    expect(currencyFor(undefined, "usd")).toBe("USD");
    expect(currencyFor({ currency: "ZZZ" }, "nope")).toBe("EUR");
    expect(currencyFor(undefined)).toBe("EUR");
  });
});
