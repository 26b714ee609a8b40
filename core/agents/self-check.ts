// The agent-side self-check (docs/kernel.md): before a proposal crosses the wall, the agent checks its own contract.
import type { ResponsibilityContract } from "../integrity/contracts.ts";
import { parseThousandths } from "../kernel/money.ts";
import type { Claim } from "../claim/claim.ts";
import type { RefundProposalOutput } from "../claim/proposal-output.ts";

/** One failed self-check. */
export type SelfCheckFailure = { check: "policy_kind" | "confidence" | "order_id" | "amount"; message: string };

/** The self-check result: pass, or `CLAIMS_SELF_CHECK_FAILED` with every failure (not just the first). */
type SelfCheckResult = { ok: true } | { ok: false; code: "CLAIMS_SELF_CHECK_FAILED"; failures: SelfCheckFailure[] };

/** The parts of the claim a proposal must answer. */
export type SelfCheckClaim = Pick<Claim, "order_id" | "amount_eur">;

/**
 * Checks a Decision Maker output against the agent's own contract and against the claim it answers
 * (docs/kernel.md): the policy kind is in `allowed_policy_types`; the confidence is at least
 * `escalate_on_uncertainty` (equal passes); the order id is the claim's; the amount is whole cents,
 * not more than claimed, and positive when the claimed amount is (a claim that is itself zero or
 * negative may be proposed as claimed: the kernel rejects it as INVALID_AMOUNT, as the seed does).
 * A failure is a model failure, not a customer outcome: one repair round, then NEEDS_REVIEW.
 */
export function selfCheck(
  output: RefundProposalOutput,
  responsibility: ResponsibilityContract,
  claim: SelfCheckClaim,
): SelfCheckResult {
  const failures: SelfCheckFailure[] = [];
  if (!responsibility.allowed_policy_types.includes(output.action)) {
    failures.push({
      check: "policy_kind",
      message: `Policy kind '${output.action}' not in allowed_policy_types [${responsibility.allowed_policy_types.join(", ")}]`,
    });
  }
  if (!(typeof output.confidence === "number" && output.confidence >= responsibility.escalate_on_uncertainty)) {
    failures.push({
      check: "confidence",
      message: `Confidence ${String(output.confidence)} below escalate_on_uncertainty (${responsibility.escalate_on_uncertainty})`,
    });
  }
  failures.push(...alignmentFailures(output, claim));
  return failures.length === 0 ? { ok: true } : { ok: false, code: "CLAIMS_SELF_CHECK_FAILED", failures };
}

function alignmentFailures(output: RefundProposalOutput, claim: SelfCheckClaim): SelfCheckFailure[] {
  const failures: SelfCheckFailure[] = [];
  if (output.order_id.trim() !== claim.order_id.trim()) {
    failures.push({
      check: "order_id",
      message: `Order id ${JSON.stringify(output.order_id)} is not the claim's order id ${JSON.stringify(claim.order_id)}`,
    });
  }
  // Both amounts count the order's currency, which only the kernel knows: compared in thousandths (KWD has three
  // decimals); the kernel checks the amount is exact in the order's currency.
  const proposed = parseThousandths(output.amount_eur);
  const claimed = parseThousandths(claim.amount_eur);
  if (!proposed.ok) {
    failures.push({
      check: "amount",
      message: `Amount ${String(output.amount_eur)} is not a euro amount: ${proposed.message}`,
    });
  } else if (claimed.ok) {
    if (proposed.units > claimed.units) {
      failures.push({
        check: "amount",
        message: `Amount ${output.amount_eur} EUR is more than the ${claim.amount_eur} EUR claimed`,
      });
    } else if (claimed.units > 0 && proposed.units <= 0) {
      failures.push({
        check: "amount",
        message: `Amount ${output.amount_eur} EUR is not positive although the claim is for ${claim.amount_eur} EUR`,
      });
    }
  }
  return failures;
}

/** The reason recorded when a Decision Maker's proposal fails the self-check in its own step and gets its repair round. */
export function selfCheckRepairReason(failures: readonly SelfCheckFailure[]): string {
  return `Self-check failed: ${failures.map((f) => f.message).join("; ")}; the Decision Maker got one repair round`;
}
