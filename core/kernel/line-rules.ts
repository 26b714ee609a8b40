// The kernel's rules that judge one line of an order (docs/kernel.md "Orders with lines"): its category is refundable
// (4), this agent may refund it (4), and it is within its return window (5). Defined once: the checks run them on the
// claim's lines, and the verdict's `lines[]` (core/kernel/verdict-lines.ts) says which line failed which.
import type { ClaimsContract, ResponsibilityContract } from "../integrity/contracts.ts";
import { DAY_MS } from "../integrity/time.ts";
import type { OrderLineView } from "./order-view.ts";
import { returnWindowDays } from "./policy.ts";

/** What a line rule reads beside the line: the policy, the agent's categories, and how long after the purchase the claim came. */
export type LineRuleContext = {
  readonly contract: Pick<ClaimsContract, "allowed_refund_categories" | "return_window_days">;
  readonly responsibility: Pick<ResponsibilityContract, "authorized_categories">;
  readonly elapsedMs: number;
};

/** Each per-line rule by the reason code it fails with: true when the line passes it. */
export const LINE_RULES = {
  CATEGORY_NOT_ALLOWED: (c: LineRuleContext, line: Pick<OrderLineView, "category">) =>
    c.contract.allowed_refund_categories.includes(line.category),
  CATEGORY_NOT_AUTHORISED: (c: LineRuleContext, line: Pick<OrderLineView, "category">) =>
    c.responsibility.authorized_categories.length === 0 ||
    c.responsibility.authorized_categories.includes(line.category),
  OUTSIDE_RETURN_WINDOW: (c: LineRuleContext, line: Pick<OrderLineView, "category">) =>
    c.elapsedMs <= returnWindowDays(c.contract, line.category) * DAY_MS,
} as const;

/** A reason code a line rule fails with. */
export type LineRuleCode = keyof typeof LINE_RULES;

/** True for a reason code decided by one line (category, authorisation, window) rather than by the claim as a whole. */
export function isLineRuleCode(code: string): code is LineRuleCode {
  return Object.hasOwn(LINE_RULES, code);
}
