import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MoneyError } from "../integrity/errors.ts";
import { centsToEur, formatEur, MAX_CENTS, parseCents, toCents } from "./money.ts";

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
