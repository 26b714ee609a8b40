// EventBridge rule patterns: the one definition used by infra/ (SST bus subscriptions) and the local bus.

/** The bus name and the source every kernel event carries. */
export const BUS_NAME = "claims";
/** Source of every event the kernel publishes. */
export const KERNEL_SOURCE = "claims.kernel";

/** detail-type of each event the kernel publishes (SPEC §7.3). */
export const DETAIL_TYPES = {
  verdict: "ClaimVerdict",
  refund: "RefundExecuted",
  review: "ClaimNeedsReview",
} as const;

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
