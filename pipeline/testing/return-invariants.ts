// The money invariants' returns side (pipeline/testing/money-invariants.ts, docs/returns.md). Its own table of which
// return events reach a policy's pay_on, kept apart from core/kernel/returns.ts so the check does not share the
// decider's mistakes.
import { parseCents } from "../../core/kernel/index.ts";
import type { MoneyFacts, PublishedEvent } from "./money-invariants.ts";

const cents = (eur: unknown) => {
  const c = parseCents(eur);
  return c.ok ? c.cents : Number.NaN;
};

/**
 * The returns' side (docs/returns.md): a return-required ACCEPT's refund is the one its ReturnRequested reserved
 * (same execution and amount), executed at most once; given the recorded return events, only after one reached the
 * policy's pay_on and never on a failed inspection.
 */
export function returnViolations(
  authorised: readonly PublishedEvent[],
  returns: ReadonlyMap<string, PublishedEvent>,
  recorded: MoneyFacts["returnEvents"],
): string[] {
  const violations: string[] = [];
  const reaches: Record<string, readonly string[]> = {
    in_transit: ["in_transit", "delivered", "inspected_ok"],
    delivered: ["delivered", "inspected_ok"],
    inspected: ["inspected_ok"],
  };
  for (const [verdictId, asked] of returns) {
    const paid = authorised.filter((r) => r.detail.verdict_id === verdictId && r.detail.approved_by === undefined);
    const claimId = String(asked.detail.claim_id);
    for (const r of paid) {
      if (
        r.detail.execution_id !== asked.detail.execution_id ||
        cents(r.detail.amount_eur) !== cents(asked.detail.amount_eur)
      )
        violations.push(
          `claim ${claimId}: RefundExecuted ${String(r.detail.execution_id)} is not the refund its ReturnRequested reserved`,
        );
      const events = recorded?.(claimId);
      if (!events) continue;
      if (!events.some((e) => reaches[String(asked.detail.pay_on)]?.includes(e.event)))
        violations.push(`claim ${claimId} was paid before its return reached ${String(asked.detail.pay_on)}`);
      if (events.some((e) => e.event === "inspected_failed"))
        violations.push(`claim ${claimId} was paid although its return failed inspection`);
    }
  }
  return violations;
}
