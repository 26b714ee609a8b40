import { describe, expect, it } from "vitest";
import { stripeAmount } from "./stripe-amount.ts";

describe("a refund amount as Stripe takes it", () => {
  it.each([
    ["12.34 EUR", 1234, "EUR", 1234, "eur"],
    ["499.00 USD", 49900, "USD", 49900, "usd"],
    ["1200 JPY (zero-decimal: as is)", 1200, "JPY", 1200, "jpy"],
    ["5.250 KWD (three decimals, last digit 0)", 5250, "KWD", 5250, "kwd"],
    ["0.120 BHD", 120, "BHD", 120, "bhd"],
    ["100 ISK (sent as two decimals)", 100, "ISK", 10000, "isk"],
    ["MGA: ISO gives it two decimals, Stripe none", 150000, "MGA", 1500, "mga"],
  ])("sends %s", (_, minor, currency, amount, lower) => {
    expect(stripeAmount(minor, currency)).toEqual({ ok: true, amount, currency: lower });
  });

  it.each([
    ["a KWD amount whose last digit is not 0", 5255, "KWD", /last of its three decimals 0/],
    ["MGA with ariary cents", 150050, "MGA", /whole units only/],
    ["a four-decimal unit of account", 10000, "CLF", /4 decimals, and Stripe takes it with two/],
    ["a code that is not ISO 4217", 100, "XYZ", /not an ISO 4217/],
    ["nothing", 0, "EUR", /positive whole number/],
  ])("refuses %s rather than round it", (_, minor, currency, reason) => {
    const r = stripeAmount(minor, currency);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(reason);
  });
});
