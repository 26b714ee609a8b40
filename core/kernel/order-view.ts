// The order view: one reading of an authoritative order as lines in its currency (docs/orders.md "Orders with lines").
// Today's one-line form (`category`, `amount`) reads as one line "1"; the lines form as its lines plus shipping. An
// order whose lines do not add up, repeat a line id, count zero or negative units, carry more decimals than the
// currency has, or name a currency ISO 4217 does not know is garbled: the reader returns the problem, never a guess.
import { isCurrencyCode } from "../integrity/currency.ts";
import type { Order } from "../integrity/contracts.ts";
import { OrderDataError } from "../integrity/errors.ts";
import { add, describeMoney, MAX_MINOR, money, parseMoney, sum, toMajor, zero, type Money } from "./money.ts";

/** The id of the one line of an order in today's one-line form. */
export const ONE_LINE_ID = "1";

/** One line of an order: its category, the units bought and what was paid for all of them. */
export type OrderLineView = {
  readonly line_id: string;
  readonly sku?: string;
  /** The shop's name for the item, when it gives one: free-text items are matched by it (core/kernel/item-lines.ts). */
  readonly title?: string;
  readonly category: string;
  readonly quantity: number;
  readonly amount: Money;
};

/** An order read as lines: every amount a `Money` in the order's one currency. */
export type OrderView = {
  readonly order_id: string;
  readonly currency: string;
  readonly lines: readonly OrderLineView[];
  /** What was paid for shipping (zero when none). */
  readonly shipping: Money;
  /** The lines plus shipping: the most the order can refund. */
  readonly total: Money;
  /** True for today's one-line form (`category`, `amount`, no `lines`). */
  readonly oneLine: boolean;
};

/** The reading of an order: its view, or what makes it garbled. */
export type OrderReading =
  | { readonly ok: true; readonly view: OrderView }
  | { readonly ok: false; readonly problem: string };

/** Reads an order (already schema-parsed) as lines; a garbled order gives the problem, naming the field. */
export function readOrder(order: Order): OrderReading {
  const { currency } = order;
  if (!isCurrencyCode(currency))
    return bad(
      `currency ${JSON.stringify(String(currency).slice(0, 12))} is not an ISO 4217 currency code (e.g. EUR, USD, JPY)`,
    );
  const amountOf = (value: unknown, what: string): Money | string => {
    const parsed = parseMoney(value, currency, { strings: true });
    if (!parsed.ok) return `${what}: ${parsed.message}`;
    if (parsed.money.minor < 0) return `${what}: ${describeMoney(parsed.money)} is negative`;
    return parsed.money;
  };
  if (order.lines === undefined) {
    if (order.category === undefined) return bad("category is missing (or give lines)");
    if (order.shipping !== undefined) return bad("shipping is given only with lines");
    const amount = amountOf(order.amount, "amount");
    if (typeof amount === "string") return bad(amount);
    if (amount.minor <= 0) return bad(`amount: ${describeMoney(amount)} is not positive`);
    const line = { line_id: ONE_LINE_ID, category: order.category, quantity: 1, amount };
    return {
      ok: true,
      view: {
        order_id: order.order_id,
        currency,
        lines: [line],
        shipping: zero(currency),
        total: amount,
        oneLine: true,
      },
    };
  }
  if (order.category !== undefined) return bad("category belongs on each line when the order has lines");
  const seen = new Set<string>();
  const lines: OrderLineView[] = [];
  for (const [i, line] of order.lines.entries()) {
    const where = `lines[${i}] (${JSON.stringify(line.line_id)})`;
    if (seen.has(line.line_id)) return bad(`${where}: duplicate line_id`);
    seen.add(line.line_id);
    if (!Number.isSafeInteger(line.quantity) || line.quantity <= 0)
      return bad(`${where}: quantity must be a positive whole number, got ${String(line.quantity)}`);
    const amount = amountOf(line.amount, `${where}.amount`);
    if (typeof amount === "string") return bad(amount);
    lines.push({
      line_id: line.line_id,
      ...(line.sku === undefined ? {} : { sku: line.sku }),
      ...(line.title === undefined ? {} : { title: line.title }),
      category: line.category,
      quantity: line.quantity,
      amount,
    });
  }
  const shipping = order.shipping === undefined ? zero(currency) : amountOf(order.shipping, "shipping");
  if (typeof shipping === "string") return bad(shipping);
  if (lines.reduce((n, l) => n + l.amount.minor, shipping.minor) > MAX_MINOR)
    return bad(`the lines add up to more than the supported maximum`);
  const total = add(
    sum(
      currency,
      lines.map((l) => l.amount),
    ),
    shipping,
  );
  if (total.minor <= 0) return bad("the lines and shipping add up to nothing");
  if (order.amount !== undefined) {
    const stated = amountOf(order.amount, "amount");
    if (typeof stated === "string") return bad(stated);
    if (stated.minor !== total.minor)
      return bad(
        `the lines and shipping add up to ${describeMoney(total)}, not the order's amount ${describeMoney(stated)}`,
      );
  }
  return { ok: true, view: { order_id: order.order_id, currency, lines, shipping, total, oneLine: false } };
}

/** The order as lines; throws `OrderDataError` naming the problem when the order is garbled. */
export function viewOrder(order: Order): OrderView {
  const reading = readOrder(order);
  if (!reading.ok) throw new OrderDataError(`order ${order.order_id}: ${reading.problem}`);
  return reading.view;
}

/** The line of `view` with id `lineId`, or undefined. */
export function lineOf(view: OrderView, lineId: string): OrderLineView | undefined {
  return view.lines.find((l) => l.line_id === lineId);
}

/**
 * What `units` of a line cost: its paid amount per unit × units, rounded down to the minor unit (never above what
 * was paid; every unit of the line costs exactly its amount). Throws `OrderDataError` for units outside 1…quantity.
 */
export function costOfUnits(line: OrderLineView, units: number): Money {
  if (!Number.isSafeInteger(units) || units <= 0 || units > line.quantity)
    throw new OrderDataError(`line ${line.line_id}: ${String(units)} units of ${line.quantity}`);
  if (units === line.quantity) return line.amount;
  return money(Math.floor((line.amount.minor * units) / line.quantity), line.amount.currency);
}

function bad(problem: string): OrderReading {
  return { ok: false, problem };
}

/** The most `order` can refund (its lines plus shipping); throws `OrderDataError` when the order is garbled. */
export function orderTotal(order: Order): Money {
  return viewOrder(order).total;
}

/** The order's total in major units as a JSON number (12.34), for the EUR-era readers that count in numbers. */
export function orderTotalMajor(order: Order): number;
/** No order, no total. */
export function orderTotalMajor(order: Order | undefined): number | undefined;
export function orderTotalMajor(order: Order | undefined): number | undefined {
  return order === undefined ? undefined : toMajor(orderTotal(order));
}

/** The categories of the order's lines, each once, in line order: "electronics" or "electronics, clothing". */
export function orderCategories(order: Order): string {
  return [...new Set(viewOrder(order).lines.map((l) => l.category))].join(", ");
}
