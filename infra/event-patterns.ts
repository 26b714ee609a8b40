// EventBridge rule patterns: the one definition used by infra/ (SST bus subscriptions) and the local bus.
// The event contract itself (source, detail-types) lives in core/claims/bus-events.ts.
import { DETAIL_TYPES, KERNEL_SOURCE } from "../core/claims/events.ts";

export { DETAIL_TYPES, KERNEL_SOURCE };

/** The bus name. */
export const BUS_NAME = "claims";

/** The rules on the `claims` bus, by name. Each pattern is plain EventBridge pattern JSON. */
export const RULE_PATTERNS = {
  /** Every verdict, for analytics and downstream consumers. */
  verdicts: { source: [KERNEL_SOURCE], "detail-type": [DETAIL_TYPES.verdict] },
  /** Verdicts a human must look at: ESCALATE, plus claims that need review. */
  escalations: {
    source: [KERNEL_SOURCE],
    $or: [
      { "detail-type": [DETAIL_TYPES.verdict], detail: { verdict: ["ESCALATE"] } },
      { "detail-type": [DETAIL_TYPES.review] },
    ],
  },
  /** Executed refunds, for the refund executor. */
  refunds: { source: [KERNEL_SOURCE], "detail-type": [DETAIL_TYPES.refund] },
} as const;

/** Name of a rule on the bus. */
export type RuleName = keyof typeof RULE_PATTERNS;
