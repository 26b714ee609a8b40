// What an ACCEPT gives (docs/returns.md#outcomes): money back to the original payment (REFUND, the default and
// today's behaviour), store credit with the policy's bonus (STORE_CREDIT), or an exchange with no money moving
// (EXCHANGE). The claim may ask; the policy says what it allows; REFUND is always allowed, so an ask outside the
// policy falls back to REFUND, never to something the customer did not ask for. Pure.
import type { Claim } from "../claim/claim.ts";
import type { ClaimsContract, OutcomePolicyFields, Order } from "../integrity/contracts.ts";
import { claimLines, namedLines } from "./claim-lines.ts";
import { money, moneyJson, type Money } from "./money.ts";
import { readOrder } from "./order-view.ts";
import type { StoreCredit } from "./events.ts";

/** An outcome an ACCEPT takes. */
export type OutcomeKind = "REFUND" | "STORE_CREDIT" | "EXCHANGE";

/** The outcome one claim's ACCEPT takes, resolved: for store credit its bonus (in the refund's minor units). */
export type ResolvedOutcome =
  | { readonly outcome: "REFUND"; readonly asked?: OutcomeKind }
  | { readonly outcome: "STORE_CREDIT"; readonly bonusPct: number; readonly bonus: Money }
  | { readonly outcome: "EXCHANGE" };

/** The outcome policy of a line of `category`, every field resolved (the category's own fields over the default's). */
export function outcomePolicyFor(
  contract: Pick<ClaimsContract, "outcomes">,
  category: string,
): { outcome: OutcomeKind; allows: readonly OutcomeKind[]; bonusPct: number } {
  const policy = contract.outcomes;
  const own: OutcomePolicyFields =
    policy?.categories && Object.hasOwn(policy.categories, category) ? policy.categories[category]! : {};
  const merged = { ...policy, ...own };
  const outcome = merged.outcome ?? "REFUND";
  const allows = [...new Set<OutcomeKind>(["REFUND", outcome, ...(merged.allows ?? [])])];
  return { outcome, allows, bonusPct: merged.store_credit_bonus_pct ?? 0 };
}

/** The bonus of store credit on `base`: `pct` percent of it, rounded down to the currency's minor unit. */
export function creditBonus(base: Money, pct: number): Money {
  return money(Math.floor((base.minor * pct) / 100), base.currency);
}

/**
 * The outcome of an ACCEPT refunding `base` (the order's minor units and currency) on lines of `categories`, for a
 * claim asking `asked` (absent: the policy's). Lines of several categories must agree: an outcome every one of their
 * policies allows (the claim's ask, else their common default), with the smallest bonus; otherwise REFUND.
 */
export function resolveOutcome(
  contract: Pick<ClaimsContract, "outcomes">,
  categories: readonly string[],
  asked: OutcomeKind | undefined,
  base: Money,
): ResolvedOutcome {
  if (!contract.outcomes && asked === undefined) return { outcome: "REFUND" };
  const policies = (categories.length > 0 ? categories : [""]).map((c) => outcomePolicyFor(contract, c));
  const defaults = new Set(policies.map((p) => p.outcome));
  const wanted = asked ?? (defaults.size === 1 ? [...defaults][0]! : "REFUND");
  if (!policies.every((p) => p.allows.includes(wanted))) return { outcome: "REFUND", ...(asked ? { asked } : {}) };
  if (wanted === "STORE_CREDIT") {
    const bonusPct = Math.min(...policies.map((p) => p.bonusPct));
    return { outcome: "STORE_CREDIT", bonusPct, bonus: creditBonus(base, bonusPct) };
  }
  return wanted === "EXCHANGE" ? { outcome: "EXCHANGE" } : { outcome: "REFUND" };
}

/** The categories of the lines a claim is about on `order` (the claim's own category when the order does not read). */
export function claimCategories(order: Order, claim: Pick<Claim, "category" | "lines">): string[] {
  const reading = readOrder(order);
  if (!reading.ok) return [claim.category];
  const named = namedLines(reading.view, claim);
  const lines = named?.ok ? named.lines.map((n) => n.line) : claimLines(reading.view, claim);
  return [...new Set(lines.map((l) => l.category))];
}

/** The outcome of a claim's ACCEPT refunding `amountMinor` in the order's currency (`currency`). */
export function outcomeOfClaim(
  contract: Pick<ClaimsContract, "outcomes">,
  order: Order,
  claim: Pick<Claim, "category" | "lines" | "outcome">,
  amountMinor: number,
  currency: string,
): ResolvedOutcome {
  if (!contract.outcomes && claim.outcome === undefined) return { outcome: "REFUND" };
  return resolveOutcome(contract, claimCategories(order, claim), claim.outcome, money(amountMinor, currency));
}

/** The store credit of an event (`credit`), copied as it is; none on a refund's. */
export function creditFieldsOf(detail: { readonly credit?: StoreCredit | undefined }): { credit?: StoreCredit } {
  return detail.credit ? { credit: { bonus: { ...detail.credit.bonus }, bonus_pct: detail.credit.bonus_pct } } : {};
}

/** The store credit an ACCEPT's refund events carry for `resolved` (none unless it is store credit). */
export function creditFields(resolved: ResolvedOutcome): { credit?: StoreCredit } {
  return resolved.outcome === "STORE_CREDIT"
    ? { credit: { bonus: moneyJson(resolved.bonus), bonus_pct: resolved.bonusPct } }
    : {};
}

/** The lines an exchange replaces: the ones the claim names with their units, else the claim's lines with all theirs. */
export function exchangeLines(
  order: Order,
  claim: Pick<Claim, "category" | "lines">,
): { line_id: string; quantity: number }[] {
  const reading = readOrder(order);
  if (!reading.ok) return [];
  const named = namedLines(reading.view, claim);
  return named?.ok
    ? named.lines.map((n) => ({ line_id: n.line.line_id, quantity: n.units }))
    : claimLines(reading.view, claim).map((l) => ({ line_id: l.line_id, quantity: l.quantity }));
}
