// The policy readers (docs/kernel.md "Orders with lines"): a line's return window by its category, the bounds of an
// order's currency, and whether shipping is refunded. The contract's flat amounts are EUR's; another currency has
// bounds only when `currencies` lists it (no FX anywhere money moves).
import type { ClaimsContract, CustomerLimits } from "../integrity/contracts.ts";
import { KernelInputError } from "../integrity/errors.ts";
import { parseMoney, subtract, type Money } from "./money.ts";
import type { OrderView } from "./order-view.ts";

/** The return window in days of a line of `category`: the number, or the category's entry, else `default`. */
export function returnWindowDays(contract: Pick<ClaimsContract, "return_window_days">, category: string): number {
  const w = contract.return_window_days;
  if (typeof w === "number") return w;
  return Object.hasOwn(w, category) ? w[category]! : w.default;
}

/** The return window in words: "14 days", or "14 days (electronics 30 days)" when categories have their own. */
export function describeReturnWindow(contract: Pick<ClaimsContract, "return_window_days">): string {
  const w = contract.return_window_days;
  if (typeof w === "number") return `${w} days`;
  const own = Object.entries(w).filter(([k]) => k !== "default");
  return `${w.default} days${own.length ? ` (${own.map(([k, d]) => `${k} ${d} days`).join(", ")})` : ""}`;
}

/** Every window the contract states (the number, or the default and each category's), for checks at the edge. */
export function returnWindowEntries(contract: Pick<ClaimsContract, "return_window_days">): [string, number][] {
  const w = contract.return_window_days;
  return typeof w === "number"
    ? [["return_window_days", w]]
    : Object.entries(w).map(([k, d]) => [`return_window_days.${k}`, d]);
}

/** The bounds an order in one currency is held to: the escalation limit and the customer limit, in that currency. */
export type CurrencyPolicy = {
  readonly currency: string;
  readonly limit: Money;
  readonly customerLimits: CustomerLimits | undefined;
  readonly secondApprovalAbove: Money | undefined;
};

/**
 * The bounds of `currency`: `currencies[currency]`, else the flat amounts for EUR; `undefined` when the policy has
 * none for it (the kernel escalates CURRENCY_NOT_IN_POLICY). A malformed amount is a wiring error and throws.
 */
export function currencyPolicy(contract: ClaimsContract, currency: string): CurrencyPolicy | undefined {
  const listed = contract.currencies?.[currency];
  if (!listed && currency !== "EUR") return undefined;
  const max = listed?.max_refund_without_escalation ?? contract.max_refund_without_escalation;
  const what = listed ? `currencies.${currency}` : "contract";
  return {
    currency,
    limit: amountIn(max, currency, `${what}.max_refund_without_escalation`),
    customerLimits: listed ? listed.customer_limits : contract.customer_limits,
    secondApprovalAbove:
      listed?.second_approval_above === undefined
        ? undefined
        : amountIn(listed.second_approval_above, currency, `${what}.second_approval_above`),
  };
}

/** Whether shipping is refunded with the last line of an order (`refund_shipping`, default never). */
export function refundsShipping(contract: Pick<ClaimsContract, "refund_shipping">): boolean {
  return contract.refund_shipping === "with_last_line";
}

function amountIn(value: number, currency: string, what: string): Money {
  const parsed = parseMoney(value, currency);
  if (!parsed.ok || parsed.money.minor <= 0)
    throw new KernelInputError(`${what}: ${parsed.ok ? "must be positive" : parsed.message}`);
  return parsed.money;
}

/** What an order can refund at most under the policy: its lines, plus shipping when `refund_shipping: with_last_line`. */
export function refundableOf(view: OrderView, contract: Pick<ClaimsContract, "refund_shipping">): Money {
  return refundsShipping(contract) ? view.total : subtract(view.total, view.shipping);
}
