import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CurrencyMismatchError, MoneyError } from "../integrity/errors.ts";
import {
  add,
  centsToEur,
  compare,
  describeMoney,
  formatEur,
  formatMoney,
  formatShort,
  MAX_CENTS,
  MAX_MINOR,
  money,
  moneyJson,
  parseCents,
  parseMoney,
  subtract,
  sum,
  times,
  toCents,
  toMajor,
} from "./money.ts";

describe("toCents", () => {
  it.each([
    [299.99, 29999],
    [500.01, 50001],
    [500, 50000],
    [1200, 120000],
    [0.01, 1],
    [0.1 + 0.2, 30],
    [-45.5, -4550],
    [0, 0],
  ])("%d EUR is %d cents", (eur, cents) => {
    expect(toCents(eur)).toBe(cents);
  });
  it.each([[299.999], [0.001], [Number.NaN], [Number.POSITIVE_INFINITY], [(MAX_CENTS + 100) / 100]])(
    "refuses %d",
    (eur) => {
      expect(() => toCents(eur)).toThrow(MoneyError);
    },
  );
  it("is exact for every 2-decimal amount written as text", () => {
    fc.assert(
      fc.property(fc.integer({ min: -MAX_CENTS, max: MAX_CENTS }), (cents) => {
        const text = `${cents < 0 ? "-" : ""}${Math.trunc(Math.abs(cents) / 100)}.${String(Math.abs(cents) % 100).padStart(2, "0")}`;
        expect(toCents(Number(text))).toBe(cents);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("parseCents", () => {
  it.each([
    [undefined, "MISSING"],
    [null, "MISSING"],
    ["299.99", "NOT_A_NUMBER"],
    [[1], "NOT_A_NUMBER"],
    [{}, "NOT_A_NUMBER"],
    [true, "NOT_A_NUMBER"],
    [Number.NaN, "NOT_FINITE"],
    [Number.NEGATIVE_INFINITY, "NOT_FINITE"],
    [1e20, "TOO_LARGE"],
    [12.345, "SUB_CENT"],
  ] as const)("%o is %s", (value, problem) => {
    expect(parseCents(value)).toMatchObject({ ok: false, problem });
  });
  it("normalises -0 to 0", () => {
    expect(parseCents(-0)).toEqual({ ok: true, cents: 0 });
    expect(Object.is(toCents(-0), 0)).toBe(true);
  });
});

describe("formatEur", () => {
  it.each([
    [120000, "1200.0"],
    [50000, "500.0"],
    [29999, "299.99"],
    [29990, "299.9"],
    [50001, "500.01"],
    [5, "0.05"],
    [0, "0.0"],
    [-1050, "-10.5"],
    [-5, "-0.05"],
  ])("%d cents is %s", (cents, text) => {
    expect(formatEur(cents)).toBe(text);
  });
  it("round-trips through toCents for every cent amount", () => {
    fc.assert(
      fc.property(fc.integer({ min: -MAX_CENTS, max: MAX_CENTS }), (cents) => {
        expect(toCents(Number(formatEur(cents)))).toBe(cents);
        expect(centsToEur(cents)).toBe(Number(formatEur(cents)));
      }),
      { numRuns: 2000 },
    );
  });
  it("refuses fractional cents", () => {
    expect(() => formatEur(1.5)).toThrow(MoneyError);
  });
});

describe("Money", () => {
  it("refuses to add, subtract or compare two currencies", () => {
    expect(() => add(money(100, "EUR"), money(100, "USD"))).toThrow(CurrencyMismatchError);
    expect(() => subtract(money(100, "EUR"), money(100, "USD"))).toThrow(CurrencyMismatchError);
    expect(() => compare(money(100, "JPY"), money(100, "KWD"))).toThrow(CurrencyMismatchError);
    expect(() => sum("EUR", [money(1, "EUR"), money(1, "USD")])).toThrow(CurrencyMismatchError);
  });
  it("adds exactly in one currency", () => {
    expect(add(money(1999, "USD"), money(1, "USD"))).toEqual({ minor: 2000, currency: "USD" });
    expect(sum("KWD", [money(1234, "KWD"), money(6, "KWD")])).toEqual({ minor: 1240, currency: "KWD" });
    expect(sum("JPY", [])).toEqual({ minor: 0, currency: "JPY" });
    expect(times(money(2000, "USD"), 3)).toEqual({ minor: 6000, currency: "USD" });
  });
  it("refuses a code that is not ISO 4217 and fractional minor units", () => {
    expect(() => money(1, "EURO")).toThrow(MoneyError);
    expect(() => money(1.5, "EUR")).toThrow(MoneyError);
  });
  it.each([
    ["499.00", "USD", 49900],
    ["499", "USD", 49900],
    ["0.5", "USD", 50],
    ["1200", "JPY", 1200],
    ["1.234", "KWD", 1234],
    ["1.2", "KWD", 1200],
    ["0", "EUR", 0],
    ["-3.10", "EUR", -310],
    [12.34, "USD", 1234],
    [1200, "JPY", 1200],
    [1.234, "KWD", 1234],
    [0.1 + 0.2, "EUR", 30],
  ] as const)("%j %s is %d minor units", (value, currency, minor) => {
    expect(parseMoney(value, currency, { strings: true })).toEqual({ ok: true, money: { minor, currency } });
  });
  it.each([
    ["12.345", "USD", "SUB_CENT", 'amount "12.345" has more than two decimals'],
    ["1200.5", "JPY", "SUB_CENT", 'amount "1200.5" has decimals, and JPY has no minor unit'],
    [1200.5, "JPY", "SUB_CENT", "amount 1200.5 has decimals, and JPY has no minor unit"],
    ["1.2345", "KWD", "SUB_CENT", 'amount "1.2345" has more than three decimals'],
    [1.2345, "KWD", "SUB_CENT", "amount 1.2345 has more than three decimals"],
    [
      "12,50",
      "EUR",
      "NOT_A_NUMBER",
      'amount "12,50" is not a decimal number (digits with an optional "." and decimals, e.g. "12.50")',
    ],
    [
      "1e3",
      "EUR",
      "NOT_A_NUMBER",
      'amount "1e3" is not a decimal number (digits with an optional "." and decimals, e.g. "12.50")',
    ],
    [
      " 12",
      "EUR",
      "NOT_A_NUMBER",
      'amount " 12" is not a decimal number (digits with an optional "." and decimals, e.g. "12.50")',
    ],
    [
      "99999999999999999",
      "EUR",
      "TOO_LARGE",
      'amount "99999999999999999" exceeds the supported maximum of 10000000000.0 EUR',
    ],
    [{}, "EUR", "NOT_A_NUMBER", "amount must be a decimal string or a number, got an object"],
  ] as const)("%j %s is refused: %s", (value, currency, problem, message) => {
    expect(parseMoney(value, currency, { strings: true })).toEqual({ ok: false, problem, message });
  });
  it("reads strings only when asked", () => {
    expect(parseMoney("12.00", "EUR")).toMatchObject({ ok: false, problem: "NOT_A_NUMBER" });
  });
  it.each([
    [money(1234, "EUR"), "12.34", "12.34", "12.34 EUR"],
    [money(120000, "EUR"), "1200.00", "1200.0", "1200.0 EUR"],
    [money(1200, "JPY"), "1200", "1200", "1200 JPY"],
    [money(1234, "KWD"), "1.234", "1.234", "1.234 KWD"],
    [money(1200, "KWD"), "1.200", "1.2", "1.2 KWD"],
    [money(-5, "USD"), "-0.05", "-0.05", "-0.05 USD"],
  ] as const)("%o is %s exactly, %s short", (m, exact, short, described) => {
    expect(formatMoney(m)).toBe(exact);
    expect(formatShort(m)).toBe(short);
    expect(describeMoney(m)).toBe(described);
    expect(moneyJson(m)).toEqual({ value: exact, currency: m.currency });
  });
  it("round-trips every amount of a 0-, 2- and 3-decimal currency through its text and its number", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -MAX_MINOR, max: MAX_MINOR }),
        fc.constantFrom("JPY", "USD", "KWD"),
        (minor, currency) => {
          const m = money(minor, currency);
          expect(parseMoney(formatMoney(m), currency, { strings: true })).toEqual({ ok: true, money: m });
          expect(parseMoney(toMajor(m), currency)).toEqual({ ok: true, money: m });
        },
      ),
      { numRuns: 3000 },
    );
  });
});
