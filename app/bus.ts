// The bus and its rule patterns (plain EventBridge pattern JSON), SST-free: infra/bus.ts deploys them, the local
// bus matches them.
import { DETAIL_TYPES, KERNEL_SOURCE } from "../core/kernel/events.ts";

/** The bus name in production (other stages get a suffix, infra/settings.ts). */
export const BUS_NAME = "claims";

/** The rules on the `claims` bus, by name. Each pattern is plain EventBridge pattern JSON. */
export const RULE_PATTERNS = {
  /** Every verdict, for analytics and downstream consumers. */
  verdicts: { source: [KERNEL_SOURCE], "detail-type": [DETAIL_TYPES.verdict] },
  /**
   * What the human review queue follows: reviews requested, opened (for notifications) and decided, ESCALATE
   * verdicts and claims that need review.
   */
  escalations: {
    source: [KERNEL_SOURCE],
    $or: [
      { "detail-type": [DETAIL_TYPES.verdict], detail: { verdict: ["ESCALATE"] } },
      {
        "detail-type": [
          DETAIL_TYPES.review,
          DETAIL_TYPES.reviewRequested,
          DETAIL_TYPES.reviewOpened,
          DETAIL_TYPES.reviewDecided,
        ],
      },
    ],
  },
  /** Executed refunds, for the refund executor. */
  refunds: { source: [KERNEL_SOURCE], "detail-type": [DETAIL_TYPES.refund] },
} as const;

/** Name of a rule on the bus. */
export type RuleName = keyof typeof RULE_PATTERNS;

/**
 * The refund executor's rule (deployed only with PAYMENT_PROVIDER): authorised refunds that are not a
 * simulation's, which never reach a payment provider.
 */
export const PAYMENT_RULE = {
  name: "payments",
  pattern: {
    source: [KERNEL_SOURCE],
    "detail-type": [DETAIL_TYPES.refund],
    detail: { simulation_id: [{ exists: false }] },
  },
} as const;

/** The bus of a stage: `claims` in production; other stages get a suffix so stages can share an account. */
export function stageBusName(stage: string): string {
  return stage === "production" ? BUS_NAME : `${BUS_NAME}-${stage}`;
}

/**
 * The physical name of one of the app's rules on a stage's bus (`claims-crew-<stage>-<rule>`): fixed, so a
 * teardown tells the app's rules from the ones consumers added (which must go first: a bus with rules cannot be
 * deleted).
 */
export function stageRuleName(stage: string, rule: string): string {
  return `claims-crew-${stage}-${rule}`;
}

/** The names of every rule the app may put on a stage's bus (the payments rule only exists with PAYMENT_PROVIDER). */
export function appRuleNames(stage: string): string[] {
  return [...Object.keys(RULE_PATTERNS), PAYMENT_RULE.name].map((rule) => stageRuleName(stage, rule));
}
