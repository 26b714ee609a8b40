// The currency of a review's amounts: each amount read in the minor units of the order's currency, and four eyes
// bound per currency — a bound in one currency is never compared with an amount in another (docs/reviews.md).
import type { ClaimsContract, Order } from "../integrity/index.ts";
import { parseCents, parseMoney } from "./money.ts";
import { currencyPolicy } from "./policy.ts";
import { currencyFor } from "./public-amount.ts";

/** The four-eyes rules a review's currency needs (a subset of `DecisionRules`). */
export interface FourEyesRules {
  readonly secondApprovalAboveEur?: number | undefined;
  readonly secondApprovalAboveMinor?: Readonly<Record<string, number>> | undefined;
}

/** An amount in major units of `currency` as its minor units (the shape `parseCents` answers). */
export function minorIn(
  value: unknown,
  currency: string,
): { ok: true; cents: number } | { ok: false; message: string } {
  const parsed = parseMoney(value, currency);
  return parsed.ok ? { ok: true, cents: parsed.money.minor } : { ok: false, message: parsed.message };
}

/**
 * The four-eyes bound for an approval in `currency`, in its minor units: EUR's `second_approval_above_eur`, another
 * currency's own bound; 0 (every approval) when the policy has four eyes but none for that currency; undefined
 * without four eyes.
 */
export function fourEyesBound(rules: FourEyesRules, currency: string): number | undefined {
  const others = rules.secondApprovalAboveMinor ?? {};
  const fourEyes = rules.secondApprovalAboveEur !== undefined || Object.keys(others).length > 0;
  if (!fourEyes) return undefined;
  if (currency === "EUR") {
    const eur = rules.secondApprovalAboveEur === undefined ? undefined : parseCents(rules.secondApprovalAboveEur);
    return eur?.ok ? eur.cents : (others.EUR ?? 0);
  }
  return others[currency] ?? 0;
}

/** Each listed currency's four-eyes bound (`claims_bounds.currencies.<C>.second_approval_above`), in its minor units. */
export function secondApprovalBounds(contract: ClaimsContract): Record<string, number> {
  return Object.fromEntries(
    Object.keys(contract.currencies ?? {}).flatMap((currency) => {
      const bound = currencyPolicy(contract, currency)?.secondApprovalAbove;
      return bound ? [[currency, bound.minor]] : [];
    }),
  );
}

/** The review with the currency its amounts count, read from the order when it did not know it yet. */
export function inOrderCurrency<R extends { currency?: string | undefined }>(review: R, order: Order): R {
  return review.currency === undefined ? { ...review, currency: currencyFor(order) } : review;
}
