// The event contract on the `claims` bus (SPEC §7.3): source and detail-types, defined once in core.

/** Source of every event the kernel publishes. */
export const KERNEL_SOURCE = "claims.kernel";

/** detail-type of each event the kernel publishes. */
export const DETAIL_TYPES = {
  verdict: "ClaimVerdict",
  refund: "RefundExecuted",
  review: "ClaimNeedsReview",
} as const;
