// The approvals of a review as its views show them (docs/reviews.md): each approval's amount in the review's
// currency, `{ value, currency }`, with `amount_eur` kept beside it only in EUR (or when the currency is not known).
import { knownAmountFields, type Amount } from "./public-amount.ts";

/** One approval as the review's views show it. */
export type ApprovalView = { reviewer: string; amount?: Amount; amount_eur?: number; at: string };

/**
 * The approvals a review holds (a decided approval lists every approver) and what a pending one awaits. Each amount is
 * `{ value, currency }` in the review's currency, its `amount_eur` kept only in EUR (or when the currency is not known).
 */
export function approvalFields(r: {
  status: string;
  currency?: string | undefined;
  awaiting?: "SECOND_APPROVAL" | undefined;
  approvals?: readonly { reviewer: string; amount_eur: number; at: string }[] | undefined;
}): { approvals: ApprovalView[]; awaiting?: "SECOND_APPROVAL" } {
  return {
    approvals: (r.approvals ?? []).map((a) => ({
      reviewer: a.reviewer,
      ...knownAmountFields(a.amount_eur, r.currency),
      at: a.at,
    })),
    ...(r.status === "PENDING" && r.awaiting ? { awaiting: r.awaiting } : {}),
  };
}
