// Outcomes in the chaos flows (docs/returns.md#outcomes, docs/testing.md): some flows' policies give store credit
// (with a bonus) instead of a refund, or an exchange for one category, so credit meets the provider's faults, crashes
// and redeliveries. Drawn from an rng of its own, so a flow without an outcome policy is the same flow it was before.
import type { ClaimsContract } from "../core/integrity/index.ts";
import type { Rng } from "./rng.ts";

/** A flow's outcome policy: the agent's `claims_bounds.outcomes` (none: every ACCEPT refunds). */
export type OutcomesPlan = NonNullable<ClaimsContract["outcomes"]>;

const CATEGORIES = ["electronics", "clothing", "home", "gift_cards"] as const;

/**
 * Whether a flow's policy gives other outcomes than a refund, and which: one flow in four. Store credit by default
 * (a bonus of 0, 10 or 25 %) with a category that refunds or exchanges at times, or refunds by default with one
 * category that exchanges (or gives credit).
 */
export function planOutcomes(rng: Rng): OutcomesPlan | undefined {
  if (!rng.chance(1 / 4)) return undefined;
  const category = rng.pick(CATEGORIES);
  const bonus = rng.pick([0, 10, 25]);
  if (rng.chance(0.6)) {
    const policy: OutcomesPlan = { outcome: "STORE_CREDIT", store_credit_bonus_pct: bonus };
    const other = rng.pick(["none", "refund", "exchange"] as const);
    if (other === "refund") policy.categories = { [category]: { outcome: "REFUND" } };
    if (other === "exchange") policy.categories = { [category]: { outcome: "EXCHANGE" } };
    return policy;
  }
  const policy: OutcomesPlan = { outcome: "REFUND" };
  policy.categories = rng.chance(0.5)
    ? { [category]: { outcome: "EXCHANGE" } }
    : { [category]: { outcome: "STORE_CREDIT", store_credit_bonus_pct: bonus } };
  return policy;
}

/** What the flow's outcomes did: store credits issued (provider payouts as credit), exchanges asked. */
export interface OutcomeCounts {
  credits: number;
  exchanges: number;
}

/** The counts of a flow without outcomes. */
export const emptyOutcomeCounts = (): OutcomeCounts => ({ credits: 0, exchanges: 0 });
