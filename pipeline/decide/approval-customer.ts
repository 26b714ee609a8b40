// Four eyes per customer (docs/reviews.md#four-eyes): when `claims_bounds.customer_limits` applies to the order's
// customer, what the approving reviewer alone approved for that customer across their orders in the window counts
// beside what they approved alone on the order, and every approved refund is recorded on the customer's window
// (with who approved it) before the order's ledger — conditional on the window's approved count the check read.
import { approvedAloneInWindow, customerLimitsCents } from "../../core/kernel/customer-window.ts";
import type { CustomerWindow } from "../../core/kernel/customer-window.ts";
import type { DecisionRules, ReviewRecord } from "../../core/kernel/review.ts";
import type { Order } from "../../core/integrity/index.ts";
import type { CustomerReserveRequest } from "../ports.ts";
import type { ApprovalPolicy as ReviewPolicy } from "./review-decision.ts";

/** The customer whose window an approval on `order` is recorded on, or `undefined` (no customer limits, no customer). */
export function approvalCustomer(policy: ReviewPolicy, order: Order): string | undefined {
  return policy.agent.contract.customer_limits ? order.customer_id : undefined;
}

/**
 * The customer whose window a reviewer's approval of `review` is checked on for four eyes, or `undefined`: only a
 * first approval (a second reviewer joining is four eyes already) under `second_approval_above_eur`.
 */
export function fourEyesCustomer(
  policy: ReviewPolicy,
  order: Order,
  review: ReviewRecord,
  rules: DecisionRules,
): string | undefined {
  if (rules.secondApprovalAboveEur === undefined || (review.approvals ?? []).length > 0) return undefined;
  return approvalCustomer(policy, order);
}

/** The rules with what the reviewer alone approved for the customer in the window at `now`, and the window's approved count. */
export function customerAlone(
  policy: ReviewPolicy,
  window: CustomerWindow | undefined,
  rules: DecisionRules,
  now: number,
  claimId: string,
): { rules: DecisionRules; approvals: number } {
  const { windowMs } = customerLimitsCents(policy.agent.contract.customer_limits!);
  const cents = approvedAloneInWindow(window, rules.reviewer, now, windowMs, claimId);
  return { rules: { ...rules, customerAloneCents: cents }, approvals: window?.approvals ?? 0 };
}

/**
 * The approved refund's reservation on the customer's window: at the instant its decision was claimed (a repair
 * records the same), approved by the review's first approver (if any) and the reviewer carrying it out;
 * conditional on `approvals` when the decision read it in this request.
 */
export function customerReservation(
  policy: ReviewPolicy,
  a: {
    customerId: string;
    review: ReviewRecord;
    orderId: string;
    cents: number;
    now: number;
    approvals: number | undefined;
    scope: string | undefined;
  },
): CustomerReserveRequest {
  const intent = a.review.intent!;
  const approvers = [...(a.review.approvals ?? []).map((x) => x.reviewer), intent.reviewer ?? "reviewer"];
  return {
    customerId: a.customerId,
    reservation: {
      claim_id: a.review.claim_id,
      order_id: a.orderId,
      cents: a.cents,
      at: intent.decided_at ?? new Date(a.now).toISOString(),
      approved_by: [...new Set(approvers)],
    },
    limits: policy.agent.contract.customer_limits!,
    scope: a.scope,
    ...(a.approvals !== undefined ? { approvals: a.approvals } : {}),
  };
}
