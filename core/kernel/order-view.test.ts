import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Order } from "../integrity/contracts.ts";
import { OrderDataError } from "../integrity/errors.ts";
import { formatMoney, money } from "./money.ts";
import { costOfUnits, ONE_LINE_ID, readOrder, viewOrder } from "./order-view.ts";
import { validateOrder } from "./orders.ts";
import { ISSUE_EXAMPLE_ORDER } from "./order-lines.test-kit.ts";

const BASE = { order_id: "ord_1", purchase_date: "2026-11-24T09:30:00Z" };
const ISSUE_EXAMPLE: Order = ISSUE_EXAMPLE_ORDER;

const problemOf = (order: Order) => {
  const r = readOrder(order);
  return r.ok ? undefined : r.problem;
};

describe("the order view", () => {
  it("reads today's one-line form as one line \"1\" of the order's category and amount", () => {
    const view = viewOrder({ ...BASE, category: "electronics", amount: 299.99, currency: "EUR" });
    expect(view.lines).toEqual([
      { line_id: ONE_LINE_ID, category: "electronics", quantity: 1, amount: money(29999, "EUR") },
    ]);
    expect(view).toMatchObject({ oneLine: true, total: money(29999, "EUR"), shipping: money(0, "EUR") });
  });

  it("reads the issue's USD order: two lines, shipping, decimal strings, the total their sum", () => {
    const view = viewOrder(ISSUE_EXAMPLE);
    expect(view.lines.map((l) => [l.line_id, l.sku, l.category, l.quantity, formatMoney(l.amount)])).toEqual([
      ["l1", "TV-55", "electronics", 1, "499.00"],
      ["l2", "TEE-M", "clothing", 2, "40.00"],
    ]);
    expect(view.shipping).toEqual(money(999, "USD"));
    expect(view.total).toEqual(money(54899, "USD"));
    expect(view.oneLine).toBe(false);
  });

  it.each([
    ["JPY without decimals", "JPY", "1200", 1200],
    ["JPY as a JSON number", "JPY", 1200, 1200],
    ["KWD with three decimals", "KWD", "5.250", 5250],
    ["KWD as a JSON number", "KWD", 5.25, 5250],
    ["BHD", "BHD", "0.005", 5],
  ])("reads %s in the currency's minor unit", (_, currency, amount, minor) => {
    expect(
      viewOrder({ ...BASE, currency, lines: [{ line_id: "a", category: "home", quantity: 1, amount }] }).total,
    ).toEqual(money(minor, currency));
  });

  it.each([
    ["a currency that is not ISO 4217", { ...ISSUE_EXAMPLE, currency: "usd" }, /currency "usd" is not an ISO 4217/],
    ["cents on yen", { ...BASE, currency: "JPY", category: "home", amount: "1200.5" }, /JPY has no minor unit/],
    [
      "a fourth decimal on dinars",
      { ...BASE, currency: "KWD", lines: [{ line_id: "a", category: "home", quantity: 1, amount: "1.2345" }] },
      /more than three decimals/,
    ],
    ["a third decimal on dollars", { ...ISSUE_EXAMPLE, shipping: "9.999" }, /shipping: .*more than two decimals/],
    [
      "a duplicate line id",
      { ...ISSUE_EXAMPLE, lines: [ISSUE_EXAMPLE.lines![0]!, { ...ISSUE_EXAMPLE.lines![1]!, line_id: "l1" }] },
      /lines\[1\] \("l1"\): duplicate line_id/,
    ],
    [
      "zero units",
      { ...ISSUE_EXAMPLE, lines: [{ ...ISSUE_EXAMPLE.lines![0]!, quantity: 0 }] },
      /quantity must be a positive whole number, got 0/,
    ],
    ["negative units", { ...ISSUE_EXAMPLE, lines: [{ ...ISSUE_EXAMPLE.lines![0]!, quantity: -1 }] }, /got -1/],
    ["half a unit", { ...ISSUE_EXAMPLE, lines: [{ ...ISSUE_EXAMPLE.lines![0]!, quantity: 1.5 }] }, /got 1\.5/],
    [
      "a negative line",
      { ...ISSUE_EXAMPLE, lines: [{ ...ISSUE_EXAMPLE.lines![0]!, amount: "-1.00" }] },
      /lines\[0\] \("l1"\)\.amount: -1\.0 USD is negative/,
    ],
    ["lines that do not add up", { ...ISSUE_EXAMPLE, amount: "548.98" }, /add up to 548\.99 USD, not .* 548\.98 USD/],
    ["a category beside lines", { ...ISSUE_EXAMPLE, category: "electronics" }, /category belongs on each line/],
    [
      "shipping without lines",
      { ...BASE, currency: "EUR", category: "home", amount: 10, shipping: 1 },
      /shipping is given only with lines/,
    ],
    ["neither category nor lines", { ...BASE, currency: "EUR", amount: 10 }, /category is missing/],
    [
      "a zero one-line amount",
      { ...BASE, currency: "EUR", category: "home", amount: 0 },
      /amount: 0\.0 EUR is not positive/,
    ],
  ])("treats %s as garbled, naming the field", (_, order, problem) => {
    expect(problemOf(order as Order)).toMatch(problem);
    expect(() => validateOrder(order)).toThrow(OrderDataError);
  });

  it("accepts a stated total that the lines and shipping add up to exactly", () => {
    expect(problemOf({ ...ISSUE_EXAMPLE, amount: 548.99 })).toBeUndefined();
  });

  it("prices part of a line per unit, rounded down, and all of it exactly", () => {
    const line = viewOrder({
      ...BASE,
      currency: "EUR",
      lines: [{ line_id: "a", category: "clothing", quantity: 3, amount: "10.00" }],
    }).lines[0]!;
    expect(costOfUnits(line, 1)).toEqual(money(333, "EUR"));
    expect(costOfUnits(line, 2)).toEqual(money(666, "EUR"));
    expect(costOfUnits(line, 3)).toEqual(money(1000, "EUR"));
    expect(() => costOfUnits(line, 4)).toThrow(/4 units of 3/);
    expect(() => costOfUnits(line, 0)).toThrow(OrderDataError);
  });

  it("reads any well-formed basket as its lines, exactly, and no subset of units above its line (property)", () => {
    const currencies: [string, number][] = [
      ["JPY", 0],
      ["EUR", 2],
      ["USD", 2],
      ["KWD", 3],
    ];
    const basket = fc
      .record({
        c: fc.constantFrom(...currencies),
        lines: fc.array(
          fc.record({ quantity: fc.integer({ min: 1, max: 9 }), minor: fc.integer({ min: 0, max: 10_000_000 }) }),
          {
            minLength: 1,
            maxLength: 6,
          },
        ),
        shipping: fc.integer({ min: 0, max: 5_000 }),
        asNumber: fc.boolean(),
      })
      .filter((b) => b.lines.some((l) => l.minor > 0) || b.shipping > 0);
    fc.assert(
      fc.property(basket, fc.nat(), ({ c: [currency, decimals], lines, shipping, asNumber }, pick) => {
        const text = (minor: number) => formatMoney(money(minor, currency));
        const amount = (minor: number) => (asNumber ? minor / 10 ** decimals : text(minor));
        const order: Order = {
          ...BASE,
          currency,
          shipping: amount(shipping),
          lines: lines.map((l, i) => ({
            line_id: `l${i}`,
            category: "c",
            quantity: l.quantity,
            amount: amount(l.minor),
          })),
        };
        const view = viewOrder(order);
        expect(view.lines.map((l) => l.amount.minor)).toEqual(lines.map((l) => l.minor));
        expect(view.total.minor).toBe(lines.reduce((a, l) => a + l.minor, shipping));
        expect(view.lines.every((l) => l.amount.currency === currency)).toBe(true);
        const line = view.lines[pick % view.lines.length]!;
        const units = 1 + (pick % line.quantity);
        expect(costOfUnits(line, units).minor).toBeLessThanOrEqual(line.amount.minor);
        // One more minor unit than the currency has on any line is garbled.
        const finer = {
          ...order,
          lines: [{ ...order.lines![0]!, amount: `${text(lines[0]!.minor)}${decimals === 0 ? ".5" : "5"}` }],
        };
        expect(readOrder(finer).ok).toBe(false);
      }),
      { numRuns: 2_000 },
    );
  });
});
