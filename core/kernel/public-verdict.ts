// The `ClaimVerdict` event as the bus carries it (docs/events.md), derived from the verdict record when the event is
// built: the amount in the order's currency (`amount`; `amount_eur` kept only for EUR) and, on an order with lines,
// the verdict per line. The record and the audit keep what they always held, so recorded audits replay as they were.
import type { ClaimVerdictDetail, ClaimVerdictEvent } from "./events.ts";
import { currencyFor, recordedAmountFields } from "./public-amount.ts";
import { verdictLines, type VerdictLinesInput } from "./verdict-lines.ts";

/** What the event adds to the record is derived from: the order, the claim and the policy that decided. */
export type PublicVerdictInput = Omit<VerdictLinesInput, "verdict" | "amountEur" | "claim"> & {
  readonly claim: (VerdictLinesInput["claim"] & { readonly currency?: string | undefined }) | undefined;
};

/** The `ClaimVerdict` detail of `record`: its amount in the order's currency and, on an order with lines, its lines. */
export function claimVerdictEvent(record: ClaimVerdictDetail, input: PublicVerdictInput): ClaimVerdictEvent {
  const { amount_eur, ...rest } = record;
  const currency = currencyFor(input.order, input.claim?.currency);
  const lines = verdictLines({ ...input, verdict: record, amountEur: amount_eur });
  return { ...rest, ...recordedAmountFields(amount_eur, currency), ...(lines ? { lines } : {}) };
}
