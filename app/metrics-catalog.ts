// Every custom metric the functions emit (CloudWatch Embedded Metric Format, through Powertools Metrics),
// defined once: name, unit, dimension sets and what it counts. functions/observability/metrics.ts emits them,
// infra/monitoring.ts graphs and alarms on them, and the EMF test checks them. Plain data: no Powertools,
// no SST: infra/ builds the alarms and the dashboard from it, and functions/ imports it as it imports app/manifest.ts.
import type { FunctionKey } from "./manifest.ts";

/** The `service` dimension of every metric (Powertools adds it to each dimension set). */
export const METRICS_SERVICE = "claims-crew";

/** The CloudWatch namespace of a stage's metrics: stages sharing an account never mix. */
export function metricsNamespace(stage: string): string {
  return `ClaimsCrew/${stage}`;
}

/** The namespace outside Lambda (local runs that opt in with POWERTOOLS_METRICS_DISABLED=false). */
export const LOCAL_METRICS_NAMESPACE = metricsNamespace("local");

/** EMF units used here. */
export type MetricUnitName = "Count" | "Milliseconds" | "Seconds" | "None";

/** One metric: its unit, the dimension sets it is published under (besides `service`), who emits it and when. */
interface MetricFact {
  readonly unit: MetricUnitName;
  readonly dimensions: readonly (readonly string[])[];
  readonly emittedBy: readonly FunctionKey[];
  readonly description: string;
}

/** Functions that can end a claim (they write its final status). */
const FINALISERS = ["orchestrator", "intakeExtract", "kernel", "sweep"] as const satisfies readonly FunctionKey[];

/**
 * The custom metrics. `Flow` is `live` or `simulation` (a claim with a simulation_id: its refunds go to a
 * ledger of their own), so simulated money never shows in the live figures. Counts that follow a state change
 * are taken where the change is a conditional write that succeeded (a claim created, a claim made final, a
 * reservation made, a review decided), so a redelivered message never counts twice.
 */
export const METRICS = {
  ClaimsReceived: {
    unit: "Count",
    dimensions: [["Flow"], ["Flow", "Input"]],
    emittedBy: ["intakeApi", "reviewApi", "batch"],
    description: "claims stored by intake (Input: claim | claim_text); a repeated Idempotency-Key is not counted again",
  },
  ClaimsDecided: {
    unit: "Count",
    dimensions: [
      ["Flow", "Verdict"],
      ["Flow", "Verdict", "ReasonCode"],
    ],
    emittedBy: ["kernel"],
    description: "claims the kernel decided (ACCEPT | ESCALATE | REJECT) with the reason code of the final verdict",
  },
  ShadowDisagreements: {
    unit: "Count",
    dimensions: [["Flow"]],
    emittedBy: ["kernel"],
    description:
      "kernel decisions the config's shadow policy decided too, once per stored verdict (by the delivery that marks it published): 1 when its verdict or reason code differs from the live one, 0 when it agrees (Sum: disagreements; SampleCount: shadow decisions)",
  },
  ClaimsNeedsReview: {
    unit: "Count",
    dimensions: [["Flow"], ["Flow", "ReasonCode"]],
    emittedBy: FINALISERS,
    description:
      "claims that ended NEEDS_REVIEW (crew failed, self-check, extraction, order data, stalled), by reason code",
  },
  DecisionLatency: {
    unit: "Milliseconds",
    dimensions: [["Flow"], ["Flow", "Outcome"]],
    emittedBy: FINALISERS,
    description: "from the claim's receipt to its final status (Outcome: ACCEPT | ESCALATE | REJECT | NEEDS_REVIEW)",
  },
  ReviewsOpened: {
    unit: "Count",
    dimensions: [["Flow", "Origin"]],
    emittedBy: FINALISERS,
    description:
      "human reviews opened (Origin: ESCALATE | NEEDS_REVIEW), counted when the claim that opens one becomes final",
  },
  ReviewsDecided: {
    unit: "Count",
    dimensions: [["Flow", "Decision"]],
    emittedBy: ["reviewApi"],
    description: "human reviews decided (Decision: APPROVED | DENIED | RESUBMITTED)",
  },
  RefundsExecuted: {
    unit: "Count",
    dimensions: [["Flow", "AuthorisedBy"]],
    emittedBy: ["kernel", "reviewApi"],
    description: "refunds reserved on the ledger (AuthorisedBy: kernel | reviewer): what RefundExecuted announces",
  },
  RefundedAmountEur: {
    unit: "None",
    dimensions: [["Flow", "AuthorisedBy"]],
    emittedBy: ["kernel", "reviewApi"],
    description:
      "EUR reserved by the refunds of EUR orders (Sum: the euros authorised; other currencies are never added in)",
  },
  RefundedAmount: {
    unit: "None",
    dimensions: [["Flow", "AuthorisedBy", "Currency"]],
    emittedBy: ["kernel", "reviewApi"],
    description:
      "the amount reserved by those refunds in major units of their currency (Currency: the order's ISO 4217 code; Sum per currency, never across)",
  },
  PendingReviews: {
    unit: "Count",
    dimensions: [["Flow"]],
    emittedBy: ["sweep"],
    description: "reviews waiting for a person, every 5 minutes (counted up to 1,000)",
  },
  OldestPendingReviewAge: {
    unit: "Seconds",
    dimensions: [["Flow"]],
    emittedBy: ["sweep"],
    description: "how long the oldest pending review has waited, every 5 minutes (0 when none)",
  },
  OverdueReviews: {
    unit: "Count",
    dimensions: [["Flow"]],
    emittedBy: ["sweep"],
    description:
      "pending reviews past their due_at (requested_at + the policy's review_due_days / review_due_hours), every 5 minutes (counted up to 1,000)",
  },
  RefundsDueSoon: {
    unit: "Count",
    dimensions: [["Flow"]],
    emittedBy: ["sweep"],
    description:
      "live refunds not settled refund_due_days − 4 days after their clock started (the return received, or the decision when no return is asked; docs/returns.md#the-refund-due-alarm), every 5 minutes",
  },
  LlmCalls: {
    unit: "Count",
    dimensions: [["Task"]],
    emittedBy: ["worker", "intakeExtract"],
    description:
      "LLM calls (Task: extract_claim | analyze_claim | decide_refund | fix_step), retries inside a call included",
  },
  LlmCallFailures: {
    unit: "Count",
    dimensions: [["Task"], ["Task", "Code"]],
    emittedBy: ["worker", "intakeExtract"],
    description:
      "LLM calls that failed (0 or 1 per call under [Task], so Average is the failure rate; by LLM_* code under [Task, Code])",
  },
  LlmCallLatency: {
    unit: "Milliseconds",
    dimensions: [["Task"]],
    emittedBy: ["worker", "intakeExtract"],
    description: "duration of one LLM call including its retries",
  },
  LlmPromptTokens: {
    unit: "Count",
    dimensions: [["Task"]],
    emittedBy: ["worker", "intakeExtract"],
    description: "prompt tokens of a call (the endpoint's count, or chars/4 when it gives none)",
  },
  LlmCompletionTokens: {
    unit: "Count",
    dimensions: [["Task"]],
    emittedBy: ["worker", "intakeExtract"],
    description: "completion tokens of a call",
  },
  LlmCallCostUsd: {
    unit: "None",
    dimensions: [["Task"]],
    emittedBy: ["worker", "intakeExtract"],
    description:
      "model cost of a call in USD, its tokens priced with the built-in model price table (docs/llm.md); absent for a model the table does not name",
  },
  RequestFailures: {
    unit: "Count",
    dimensions: [["Route"]],
    emittedBy: ["intakeApi", "reviewApi", "paymentWebhook"],
    description:
      "requests the HTTP shell answered 500 because its route threw (functions/http/http.ts): Lambda's Errors stays 0 for them, so each route's RequestFailures alarms (Route: the API Gateway route key)",
  },
  MessageFailures: {
    unit: "Count",
    dimensions: [["Consumer"]],
    emittedBy: ["intakeExtract", "orchestrator", "worker", "kernel", "timer", "refundExecutor"],
    description:
      "queue messages a consumer reported failed because they were invalid or their handling threw (functions/consumers/sqs-consumer.ts; Consumer: the function key): SQS retries them up to 5 receives before the DLQ, so each consumer's MessageFailures alarms at once. A planned retry (waiting for the model or the order source, a lost version race, no time left in a batch) is not a failure",
  },
  ColdStart: {
    unit: "Count",
    dimensions: [["function_name"]],
    emittedBy: [
      "intakeApi",
      "authorizer",
      "reviewApi",
      "reviewerAuthorizer",
      "intakeExtract",
      "orchestrator",
      "worker",
      "kernel",
      "timer",
      "sweep",
      "batch",
    ],
    description:
      "a new Lambda instance served its first invocation (Powertools; function_name is the Lambda function's name)",
  },
} as const satisfies Record<string, MetricFact>;

/** A metric's name. */
export type MetricName = keyof typeof METRICS;
