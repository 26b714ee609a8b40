import { describe, expect, it } from "vitest";
import { CURRENCY_CODES, CurrencyCodeSchema, isCurrencyCode, minorUnitsOf } from "./currency.ts";

describe("the ISO 4217 table", () => {
  it.each([
    ["EUR", 2],
    ["USD", 2],
    ["JPY", 0],
    ["KRW", 0],
    ["ISK", 0],
    ["KWD", 3],
    ["BHD", 3],
    ["OMR", 3],
    ["JOD", 3],
    ["TND", 3],
    ["CLF", 4],
    ["HUF", 2],
  ] as const)("%s has %d decimals", (code, units) => {
    expect(minorUnitsOf(code)).toBe(units);
    expect(isCurrencyCode(code)).toBe(true);
  });
  it.each(["usd", "EURO", "XAU", "XXX", "XTS", "ABC", "", " EUR"])("%j is not a currency with a minor unit", (code) => {
    expect(isCurrencyCode(code)).toBe(false);
    expect(minorUnitsOf(code)).toBeUndefined();
    expect(CurrencyCodeSchema.safeParse(code).success).toBe(false);
  });
  it("holds each code once, three upper-case letters", () => {
    expect(new Set(CURRENCY_CODES).size).toBe(CURRENCY_CODES.length);
    for (const code of CURRENCY_CODES) expect(code).toMatch(/^[A-Z]{3}$/);
    expect(CURRENCY_CODES.length).toBeGreaterThan(150);
  });
  it("names the refused code", () => {
    const parsed = CurrencyCodeSchema.safeParse("EURO");
    expect(parsed.success ? "" : parsed.error.issues[0]!.message).toBe(
      '"EURO" is not an ISO 4217 currency code (e.g. EUR, USD, JPY)',
    );
  });
});
