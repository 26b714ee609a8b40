// What a reviewer decides on beside the claim (docs/reviews.md#what-a-reviewer-sees): the order as the shop's data
// says (or why it could not be read), what was refunded on it so far, its other claims, the customer's window.
import type { Order } from "../integrity/contracts.ts";
import { isCurrencyCode } from "../integrity/currency.ts";
import { formatMoney, money, moneyJson, parseMoney, toMajor } from "./money.ts";
import { readOrder } from "./order-view.ts";

/** What `reviewFacts` reads: the order, its ledger entry, and the other claims the order's ledger knows. */
export interface ReviewFactsInput {
  order?: Order;
  /** The currency of the order's amounts when the order could not be read (the review's); absent: not known. */
  currency?: string | undefined;
  ledger?: { refunded_cents: number; automatic_cents?: number | undefined; claims: Record<string, number> };
  others: {
    claim_id: string;
    status: string;
    verdict?: string | undefined;
    reason_code?: string | undefined;
    amount_eur?: number | undefined;
  }[];
  /** The order's customer's automatic refunds in the limit window, in the order's currency (only when customer limits bind the order). */
  customerWindow?: { refunds: number; refunded_cents: number };
  /** Why the order could not be read for this listing (then it shows as `order: null`). */
  orderUnread?: { code: string; reason: string };
}

/**
 * The facts a reviewer decides on beside the claim (docs/reviews.md): the order (amount, currency, purchase date,
 * category, customer; `order: null` and `order_unread: { code, reason }` when it could not be read), what was
 * refunded on it so far (automatic / approved by people), and the other claims on it with their outcomes (the
 * amount each reserved, else the amount it asked). Every amount is `{ value, currency }` in the order's currency
 * when it is known, with its `_eur` twin kept beside it only for an EUR order (or one whose currency is not known,
 * as before currencies): a USD or JPY amount never carries an EUR name.
 */
export function reviewFacts(input: ReviewFactsInput): Record<string, unknown> {
  const { order, ledger } = input;
  const automatic = ledger?.automatic_cents ?? 0;
  const approved = Math.max(0, (ledger?.refunded_cents ?? 0) - automatic);
  const currency = factsCurrency(order, input.currency);
  const eurNames = currency === undefined || currency === "EUR";
  const minor = (units: number) => (currency ? { amount: moneyJson(money(units, currency)) } : {});
  return {
    ...(order
      ? {
          order: orderFacts(order),
        }
      : input.orderUnread
        ? { order: null, order_unread: { code: input.orderUnread.code, reason: input.orderUnread.reason } }
        : {}),
    refunded: {
      ...(eurNames ? { automatic_eur: automatic / 100, approved_eur: approved / 100 } : {}),
      ...(currency
        ? { automatic: moneyJson(money(automatic, currency)), approved: moneyJson(money(approved, currency)) }
        : {}),
    },
    other_claims: input.others.map((c) => {
      const reserved = ledger?.claims[c.claim_id];
      const asked = c.amount_eur === undefined || !currency ? undefined : parseMoney(c.amount_eur, currency);
      return {
        claim_id: c.claim_id,
        status: c.status,
        ...(c.verdict ? { verdict: c.verdict } : {}),
        ...(c.reason_code ? { reason_code: c.reason_code } : {}),
        ...(reserved !== undefined ? minor(reserved) : asked?.ok ? { amount: moneyJson(asked.money) } : {}),
        ...(eurNames ? { amount_eur: reserved !== undefined ? reserved / 100 : (c.amount_eur ?? 0) } : {}),
      };
    }),
    ...(input.customerWindow
      ? {
          customer_window: {
            refunds: input.customerWindow.refunds,
            ...(eurNames ? { refunded_eur: input.customerWindow.refunded_cents / 100 } : {}),
            ...(currency ? { refunded: moneyJson(money(input.customerWindow.refunded_cents, currency)) } : {}),
          },
        }
      : {}),
  };
}

/** The currency the facts' amounts count: the order's (when it names an ISO 4217 code), else the review's. */
function factsCurrency(order: Order | undefined, reviewCurrency: string | undefined): string | undefined {
  if (order && isCurrencyCode(order.currency)) return order.currency;
  return isCurrencyCode(reviewCurrency) ? reviewCurrency : undefined;
}

/**
 * The order as a reviewer sees it. A one-line EUR order shows as it always did (`amount_eur`, `category`); an order in
 * another currency or with lines adds `amount: { value, currency }` (and `amount_eur` only when EUR, kept for
 * compatibility) and its `lines`, each with its own amount (and its `title`, when the shop gives one).
 */
function orderFacts(order: Order): Record<string, unknown> {
  const reading = readOrder(order);
  const customer = order.customer_id ? { customer_id: order.customer_id } : {};
  if (!reading.ok)
    return {
      order_id: order.order_id,
      currency: order.currency,
      purchase_date: order.purchase_date,
      garbled: reading.problem,
      ...customer,
    };
  const { view } = reading;
  const categories = [...new Set(view.lines.map((l) => l.category))].join(", ");
  if (view.oneLine && view.currency === "EUR")
    return {
      order_id: order.order_id,
      amount_eur: toMajor(view.total),
      currency: order.currency,
      purchase_date: order.purchase_date,
      category: categories,
      ...customer,
    };
  return {
    order_id: order.order_id,
    amount: moneyJson(view.total),
    ...(view.currency === "EUR" ? { amount_eur: toMajor(view.total) } : {}),
    currency: view.currency,
    purchase_date: order.purchase_date,
    category: categories,
    ...customer,
    ...(view.shipping.minor > 0 ? { shipping: formatMoney(view.shipping) } : {}),
    lines: view.lines.map((l) => ({
      line_id: l.line_id,
      ...(l.title === undefined ? {} : { title: l.title }),
      ...(l.sku === undefined ? {} : { sku: l.sku }),
      category: l.category,
      quantity: l.quantity,
      amount: moneyJson(l.amount),
    })),
  };
}
