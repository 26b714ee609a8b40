// Amounts as the public shapes carry them (docs/events.md, docs/http-api.md): `amount: { value: "12.34", currency:
// "USD" }`, the value a decimal string exact to the currency's minor unit, beside `amount_eur`, kept for compatibility
// only when the currency is EUR. Derived where an event or a view is built, from the recorded amount and the order's
// currency: the audit keeps what it always recorded, so audits recorded before this replay as they were.
import * as z from "zod";
import { isCurrencyCode, minorUnitsOf } from "../integrity/currency.ts";
import type { Order } from "../integrity/contracts.ts";
import { moneyJson, parseMoney, toMajor, type Money } from "./money.ts";

/** `{ value, currency }`: an amount exact to its ISO 4217 currency's minor unit (JPY "500", EUR "12.34", KWD "12.345"). */
export const AmountSchema = z
  .object({
    value: z.string().regex(/^-?\d+(\.\d+)?$/, 'value must be a decimal string such as "12.34"'),
    currency: z.string().refine(isCurrencyCode, "currency must be an ISO 4217 code such as EUR, USD or JPY"),
  })
  .strict()
  .refine((a) => !isCurrencyCode(a.currency) || (a.value.split(".")[1]?.length ?? 0) === minorUnitsOf(a.currency), {
    message: "value must carry exactly the currency's decimals (JPY none, EUR two, KWD three)",
    path: ["value"],
  });

/** An amount as events and views carry it. */
export type Amount = z.infer<typeof AmountSchema>;

/** What an event or view carries for `m`: `amount`, and `amount_eur` (a number) only when `m` is in EUR. */
export function amountFields(m: Money): { amount: Amount; amount_eur?: number } {
  return { amount: moneyJson(m), ...(m.currency === "EUR" ? { amount_eur: toMajor(m) } : {}) };
}

/**
 * The currency an order's amounts count: the order's when it names an ISO 4217 code, else the claim's when it does,
 * else EUR (an amount recorded before currencies, or about an order nobody could read, is EUR's).
 */
export function currencyFor(order: Pick<Order, "currency"> | undefined, claimCurrency?: string): string {
  if (isCurrencyCode(order?.currency)) return order.currency;
  const claimed = claimCurrency?.toUpperCase();
  return isCurrencyCode(claimed) ? claimed : "EUR";
}

/**
 * A recorded amount (a number in major units of `currency`: the `amount_eur` of records made before currencies, in
 * the order's currency since) as public fields: `amount` (null when there is no amount, or it is not exact in the
 * currency) and `amount_eur` only for EUR, as recorded.
 */
export function recordedAmountFields(
  amountEur: number | null,
  currency: string,
): { amount: Amount | null; amount_eur?: number | null } {
  const parsed = amountEur === null ? undefined : parseMoney(amountEur, currency);
  return {
    amount: parsed?.ok ? moneyJson(parsed.money) : null,
    ...(currency === "EUR" ? { amount_eur: amountEur } : {}),
  };
}

/** The reason code of a line that passed its own checks in a claim another of its lines failed (docs/kernel.md). */
export const OTHER_LINE_FAILED = "OTHER_LINE_FAILED";

/**
 * One line of a verdict (`lines[]` of `ClaimVerdict` and the claim's view): the line, the claim's verdict, the line's
 * own reason code, and the amount the claim asks of (an ACCEPT: refunds on) the line.
 */
export const VerdictLineSchema = z
  .object({
    line_id: z.string().min(1),
    verdict: z.enum(["ACCEPT", "ESCALATE", "REJECT"]),
    reason_code: z.string().min(1),
    amount: AmountSchema,
  })
  .strict();

/** A line of a verdict. */
export type VerdictLine = z.infer<typeof VerdictLineSchema>;

/**
 * A stored amount whose currency may not be known (a review opened before the order was read, or recorded before
 * currencies): `amount` and `amount_eur` (for EUR) when the currency is known; `amount_eur` as recorded when it is not.
 */
export function knownAmountFields(
  amountEur: number | undefined,
  currency: string | undefined,
): { amount?: Amount; amount_eur?: number } {
  if (amountEur === undefined) return {};
  if (currency === undefined) return { amount_eur: amountEur };
  const parsed = parseMoney(amountEur, currency);
  if (!parsed.ok) return currency === "EUR" ? { amount_eur: amountEur } : {};
  return amountFields(parsed.money);
}

/** `detail` without its recorded `amount_eur`: what a bus event starts from before it takes the public amount fields. */
export function withoutAmountEur<T extends { amount_eur?: unknown }>(detail: T): Omit<T, "amount_eur"> {
  const { amount_eur: _recorded, ...rest } = detail;
  return rest;
}
