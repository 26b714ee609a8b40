// What an operator watches: CloudWatch alarms on every failure path — every dead-letter queue's depth, the age of
// the oldest message of every other queue (the work queues' and the ones downstream systems read), every
// function's errors and throttles, every HTTP route's RequestFailures (the shell turns a throw into a 500, which
// Lambda's Errors never sees) and the API's 5xx, every consumer's MessageFailures (failed batch items, which
// Lambda's Errors never sees either), the human-review backlog — all notifying one SNS topic whose subscriber (an
// email address or an https endpoint) is the deploy parameter CLAIMS_ALARM_ENDPOINT; and one dashboard of the
// custom metrics the functions emit (app/metrics-catalog.ts) beside the AWS ones.
import { METRICS_SERVICE, metricsNamespace } from "../app/metrics-catalog.ts";
import type { MetricName } from "../app/metrics-catalog.ts";
import { api } from "./api.ts";
import { ruleQueues } from "./bus.ts";
import { awsFunctionKeys, QUEUES, ROUTES } from "../app/manifest.ts";
import type { FunctionKey, RouteKey } from "../app/manifest.ts";
import { functionName } from "./lambda.ts";
import {
  agentStepsDlq,
  agentStepsQueue,
  crewEventsDlq,
  crewEventsQueue,
  extractionDlq,
  extractionQueue,
  proposalsDlq,
  proposalsQueue,
  timersDlq,
  timersQueue,
} from "./queues.ts";
import { paymentsRule } from "./payments.ts";
import { schedulesDlq } from "./schedules.ts";
import { settings } from "./settings.ts";
import { alarm, queueName } from "./alarm.ts";
import type { Queue } from "./alarm.ts";

export { alarmTopic } from "./alarm.ts";

const NAMESPACE = metricsNamespace($app.stage);
const FIVE_MINUTES = 300;

/** Every dead-letter queue: the five work queues', the three bus-rule targets' and the schedules'. */
const DEAD_LETTER_QUEUES: Record<string, Queue> = {
  CrewEventsDlq: crewEventsDlq,
  AgentStepsDlq: agentStepsDlq,
  ProposalsDlq: proposalsDlq,
  ExtractionDlq: extractionDlq,
  TimersDlq: timersDlq,
  VerdictsDlq: ruleQueues.verdicts.dlq,
  ReviewDlq: ruleQueues.escalations.dlq,
  RefundsDlq: ruleQueues.refunds.dlq,
  SchedulesDlq: schedulesDlq,
  // The refund executor's, with PAYMENT_PROVIDER: a refund the provider could not be asked to pay.
  ...(paymentsRule ? { PaymentsDlq: paymentsRule.dlq } : {}),
};

/** The functions deployed on this stage: the payment ones only with PAYMENT_PROVIDER (the webhook's only if it has one), no local-only one. */
const DEPLOYED_FUNCTIONS = awsFunctionKeys(settings.paymentProvider);

/** A message in any DLQ is a claim, a step or an event that needs a person: any message alarms. */
const dlqAlarms = Object.entries(DEAD_LETTER_QUEUES).map(([name, dlq]) =>
  alarm(`${name}Messages`, {
    description: `${name} holds messages: work that failed every retry (or events the bus could not deliver). Inspect them, fix the cause, redrive (infra/README.md#alarms).`,
    namespace: "AWS/SQS",
    metricName: "ApproximateNumberOfMessagesVisible",
    dimensions: { QueueName: queueName(dlq) },
    statistic: "Maximum",
    periodSeconds: FIVE_MINUTES,
    periods: 1,
    threshold: 1,
  }),
);

/**
 * How long the oldest message of each queue may wait (Maximum of ApproximateAgeOfOldestMessage, for 2 periods of
 * 5 minutes, or 1 for the downstream queues). A claim's next step waits in crew-events (FIFO: a stuck group also
 * holds back what follows it) and its decision in proposals, both normally read within seconds: 10 minutes means
 * the consumer is failing, throttled or disabled. The LLM queues may hold a message for an unreachable model up to
 * 15 minutes at a time (SQS's longest delay), the timers queue delays ticks up to 15 minutes and gathers them a
 * minute more, and the refund executor retries a provider outage: 30 minutes for those. The queues downstream
 * systems read (verdicts, review, refunds) page when a message has waited CLAIMS_ALARM_UNREAD_HOURS (24) unread:
 * SQS deletes it after 14 days, and a RefundExecuted nobody paid is a customer not refunded.
 */
const OLDEST_MESSAGE_SECONDS = 600;
const HELD_MESSAGE_SECONDS = 1800;
const UNREAD_SECONDS = settings.alarms.unreadHours * 3600;
const QUEUE_AGES: Record<string, { queue: Queue; seconds: number; periods: number; why: string }> = {
  CrewEvents: {
    queue: crewEventsQueue,
    seconds: OLDEST_MESSAGE_SECONDS,
    periods: 2,
    why: "claims are not progressing",
  },
  Proposals: { queue: proposalsQueue, seconds: OLDEST_MESSAGE_SECONDS, periods: 2, why: "no claim is being decided" },
  AgentSteps: { queue: agentStepsQueue, seconds: HELD_MESSAGE_SECONDS, periods: 2, why: "agent steps are not run" },
  Extraction: {
    queue: extractionQueue,
    seconds: HELD_MESSAGE_SECONDS,
    periods: 2,
    why: "free-text claims are not read",
  },
  Timers: { queue: timersQueue, seconds: HELD_MESSAGE_SECONDS, periods: 2, why: "step deadlines are not forwarded" },
  Verdicts: { queue: ruleQueues.verdicts.queue, seconds: UNREAD_SECONDS, periods: 1, why: "nobody reads the verdicts" },
  Review: {
    queue: ruleQueues.escalations.queue,
    seconds: UNREAD_SECONDS,
    periods: 1,
    why: "nobody reads the review queue",
  },
  Refunds: {
    queue: ruleQueues.refunds.queue,
    seconds: UNREAD_SECONDS,
    periods: 1,
    why: "nobody reads RefundExecuted: authorised refunds are not being paid",
  },
  ...(paymentsRule
    ? {
        Payments: {
          queue: paymentsRule.queue,
          seconds: HELD_MESSAGE_SECONDS,
          periods: 2,
          why: "the refund executor is not paying authorised refunds",
        },
      }
    : {}),
};
const ageAlarms = Object.entries(QUEUE_AGES).map(([name, age]) =>
  alarm(`${name}OldestMessage`, {
    description: `The oldest message on ${name}Queue has waited ${age.seconds >= 3600 ? `${age.seconds / 3600} hours` : `${age.seconds / 60} minutes`} or more${age.periods > 1 ? ` for ${(age.periods * FIVE_MINUTES) / 60} minutes` : ""}: ${age.why}. Check its consumer's errors, throttles and MessageFailures (infra/README.md#alarms).`,
    namespace: "AWS/SQS",
    metricName: "ApproximateAgeOfOldestMessage",
    dimensions: { QueueName: queueName(age.queue) },
    statistic: "Maximum",
    periodSeconds: FIVE_MINUTES,
    periods: age.periods,
    threshold: age.seconds,
  }),
);

/**
 * Handlers return business outcomes and report failed messages as partial batch failures, so a Lambda error
 * (a throw, a timeout, a bad policy at cold start) is a bug or an outage: one alarms. So does any throttle.
 */
const functionAlarms = DEPLOYED_FUNCTIONS.flatMap((key) => [
  alarm(`${key}Errors`, {
    description: `Lambda ${functionName(key)} failed (threw, timed out or could not start) at least once in 5 minutes. Its log group has the cause.`,
    namespace: "AWS/Lambda",
    metricName: "Errors",
    dimensions: { FunctionName: functionName(key) },
    statistic: "Sum",
    periodSeconds: FIVE_MINUTES,
    periods: 1,
    threshold: 1,
  }),
  alarm(`${key}Throttles`, {
    description: `Lambda ${functionName(key)} was throttled in the last 5 minutes: the account's concurrency is exhausted.`,
    namespace: "AWS/Lambda",
    metricName: "Throttles",
    dimensions: { FunctionName: functionName(key) },
    statistic: "Sum",
    periodSeconds: FIVE_MINUTES,
    periods: 1,
    threshold: 1,
  }),
]);

/** An alarm id from a route key: `POST /claims/{id}/review` → `PostClaimsIdReview`. */
export function routeAlarmId(key: RouteKey): string {
  return key
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== "")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1).toLowerCase())
    .join("");
}

/**
 * The HTTP shell answers a route that threw with a 500 and counts a RequestFailures of that route: the function
 * succeeded, so Lambda's Errors stays 0. Every route a deployed function serves alarms on one (GET /health is
 * answered by the shell itself).
 */
const DEPLOYED_ROUTES = (Object.entries(ROUTES) as [RouteKey, (typeof ROUTES)[RouteKey]][])
  .filter(([key, route]) => key !== "GET /health" && (DEPLOYED_FUNCTIONS as string[]).includes(route.fn))
  .map(([key]) => key);
const requestAlarms = DEPLOYED_ROUTES.map((key) =>
  alarm(`${routeAlarmId(key)}RequestFailures`, {
    description: `${key} answered 500 at least once in 5 minutes (its handler threw: the function's log group has "request failed" with the cause).`,
    namespace: NAMESPACE,
    metricName: "RequestFailures" satisfies MetricName,
    dimensions: { service: METRICS_SERVICE, Route: key },
    statistic: "Sum",
    periodSeconds: FIVE_MINUTES,
    periods: 1,
    threshold: 1,
  }),
);

/**
 * What callers saw, whoever answered it: API Gateway's own 5xx (an authorizer that failed or was throttled, an
 * integration that timed out, a function that crashed) as well as the shell's 500s.
 */
const apiAlarm = alarm("Api5xx", {
  description:
    "The HTTP API answered 5xx at least 5 times in 5 minutes (a route's handler threw, an authorizer failed or was throttled, or an integration timed out): see the RequestFailures, Errors and Throttles alarms and the API's access log.",
  namespace: "AWS/ApiGateway",
  metricName: "5xx",
  dimensions: { ApiId: api.nodes.api.id },
  statistic: "Sum",
  periodSeconds: FIVE_MINUTES,
  periods: 1,
  threshold: 5,
});

/** Every consumer of a queue deployed on this stage: the work queues' and, with PAYMENT_PROVIDER, the refund executor. */
const DEPLOYED_CONSUMERS: FunctionKey[] = [
  ...Object.values(QUEUES).map((q) => q.consumer),
  ...(paymentsRule ? (["refundExecutor"] as const) : []),
];

/**
 * A consumer reports a message it could not handle as a batch-item failure (the function succeeds, so Lambda's
 * Errors stays 0) and counts a MessageFailures: any one alarms at once, instead of after 5 receives in the DLQ
 * (up to 23 minutes on the LLM queues). Planned retries are not counted (functions/consumers/sqs-consumer.ts).
 */
const messageAlarms = DEPLOYED_CONSUMERS.map((key) =>
  alarm(`${key}MessageFailures`, {
    description: `Consumer ${functionName(key)} failed at least one message in 5 minutes (invalid, or its handling threw): SQS retries it, then its DLQ. Its log group has "message failed" or "invalid message" with the cause.`,
    namespace: NAMESPACE,
    metricName: "MessageFailures" satisfies MetricName,
    dimensions: { service: METRICS_SERVICE, Consumer: key },
    statistic: "Sum",
    periodSeconds: FIVE_MINUTES,
    periods: 1,
    threshold: 1,
  }),
);

/** The human-review backlog (live claims only; the sweep reports it every 5 minutes). */
const reviewAlarms = [
  alarm("ReviewBacklog", {
    description: `${settings.alarms.reviewBacklog} or more live claims have waited for a reviewer for 15 minutes (CLAIMS_ALARM_REVIEW_BACKLOG). Reviewers: GET /reviews or \`claims review list\`.`,
    namespace: NAMESPACE,
    metricName: "PendingReviews" satisfies MetricName,
    dimensions: { service: METRICS_SERVICE, Flow: "live" },
    statistic: "Maximum",
    periodSeconds: FIVE_MINUTES,
    periods: 3,
    threshold: settings.alarms.reviewBacklog,
  }),
  alarm("ReviewWaiting", {
    description: `A live claim has waited ${settings.alarms.reviewAgeHours} hours or more for a reviewer (CLAIMS_ALARM_REVIEW_AGE_HOURS).`,
    namespace: NAMESPACE,
    metricName: "OldestPendingReviewAge" satisfies MetricName,
    dimensions: { service: METRICS_SERVICE, Flow: "live" },
    statistic: "Maximum",
    periodSeconds: FIVE_MINUTES,
    periods: 1,
    threshold: settings.alarms.reviewAgeHours * 3600,
  }),
  alarm("ReviewsOverdue", {
    description:
      "A live review is past its due time (the policy's review_due_days / review_due_hours): take it at the review desk (GET /review) and decide it.",
    namespace: NAMESPACE,
    metricName: "OverdueReviews" satisfies MetricName,
    dimensions: { service: METRICS_SERVICE, Flow: "live" },
    statistic: "Maximum",
    periodSeconds: FIVE_MINUTES,
    periods: 1,
    threshold: 1,
  }),
];

/** The refund-due alarm (docs/returns.md#the-refund-due-alarm): the sweep reports it every 5 minutes. */
const refundDueAlarm = alarm("RefundsDue", {
  description:
    'A live refund is not settled refund_due_days − 4 days after the return was received (or the decision, when no return is asked): its legal deadline is near. `claims reconcile`, or the sweep\'s log line "refunds near their legal deadline", names each claim, its due date and the days left (docs/returns.md).',
  namespace: NAMESPACE,
  metricName: "RefundsDueSoon" satisfies MetricName,
  dimensions: { service: METRICS_SERVICE, Flow: "live" },
  statistic: "Maximum",
  periodSeconds: FIVE_MINUTES,
  periods: 1,
  threshold: 1,
});

/** Every alarm of the app. */
export const alarms = [
  ...dlqAlarms,
  ...ageAlarms,
  ...functionAlarms,
  ...requestAlarms,
  apiAlarm,
  ...messageAlarms,
  ...reviewAlarms,
  refundDueAlarm,
];

// --- The dashboard ---------------------------------------------------------------------------------------

const region = aws.getRegionOutput().apply((r: { region: string }) => r.region);

/** A metric of ours, live flow unless `dims` says otherwise: [namespace, name, dim, value, …, options]. */
const ours = (name: MetricName, dims: Record<string, string>, options: Record<string, unknown> = {}) => [
  NAMESPACE,
  name,
  "service",
  METRICS_SERVICE,
  ...Object.entries(dims).flat(),
  options,
];

/** A CloudWatch SEARCH over one of our metrics' dimension sets (dashboards only: alarms cannot search). */
const search = (id: string, name: MetricName, dims: readonly string[], filter: string, stat: string) => [
  {
    id,
    expression: `SEARCH('{${NAMESPACE},service,${dims.join(",")}} MetricName="${name}" ${filter}', '${stat}', ${FIVE_MINUTES})`,
    label: "",
  },
];

function widget(title: string, x: number, y: number, metrics: unknown[], options: Record<string, unknown> = {}) {
  return {
    type: "metric",
    x,
    y,
    width: 8,
    height: 6,
    properties: { title, region, view: "timeSeries", stat: "Sum", period: FIVE_MINUTES, metrics, ...options },
  };
}

const VERDICTS = ["ACCEPT", "ESCALATE", "REJECT"] as const;
const LLM_TASKS = ["extract_claim", "analyze_claim", "decide_refund", "decide_claim", "fix_step"] as const;

const widgets = [
  widget("Claims (live): received, decided, needing review", 0, 0, [
    ours("ClaimsReceived", { Flow: "live" }, { label: "received" }),
    ...VERDICTS.map((Verdict) => ours("ClaimsDecided", { Flow: "live", Verdict }, { label: Verdict })),
    ours("ClaimsNeedsReview", { Flow: "live" }, { label: "NEEDS_REVIEW" }),
    ours("ShadowDisagreements", { Flow: "live" }, { label: "shadow policy disagrees" }),
  ]),
  widget("Refunds authorised (live): EUR, and how many (right)", 8, 0, [
    ours("RefundedAmountEur", { Flow: "live", AuthorisedBy: "kernel" }, { label: "EUR by the kernel" }),
    ours("RefundedAmountEur", { Flow: "live", AuthorisedBy: "reviewer" }, { label: "EUR by reviewers" }),
    ours(
      "RefundsExecuted",
      { Flow: "live", AuthorisedBy: "kernel" },
      { label: "refunds by the kernel", yAxis: "right" },
    ),
    ours(
      "RefundsExecuted",
      { Flow: "live", AuthorisedBy: "reviewer" },
      { label: "refunds by reviewers", yAxis: "right" },
    ),
  ]),
  widget(
    "Decision latency (live, received → final)",
    16,
    0,
    ["p50", "p90", "p99"].map((stat) => ours("DecisionLatency", { Flow: "live" }, { stat, label: stat })),
    { stat: "p50" },
  ),
  widget("Verdicts by reason code (live)", 0, 6, [
    search("decided", "ClaimsDecided", ["Flow", "Verdict", "ReasonCode"], 'Flow="live"', "Sum"),
  ]),
  widget("NEEDS_REVIEW by reason code (live)", 8, 6, [
    search("needs", "ClaimsNeedsReview", ["Flow", "ReasonCode"], 'Flow="live"', "Sum"),
  ]),
  widget("Reviews (live): opened, decided, pending", 16, 6, [
    ours("ReviewsOpened", { Flow: "live", Origin: "ESCALATE" }, { label: "opened: ESCALATE" }),
    ours("ReviewsOpened", { Flow: "live", Origin: "NEEDS_REVIEW" }, { label: "opened: NEEDS_REVIEW" }),
    ...["APPROVED", "DENIED", "RESUBMITTED"].map((Decision) =>
      ours("ReviewsDecided", { Flow: "live", Decision }, { label: `decided: ${Decision}` }),
    ),
    ours("PendingReviews", { Flow: "live" }, { stat: "Maximum", label: "pending" }),
    ours("OverdueReviews", { Flow: "live" }, { stat: "Maximum", label: "overdue" }),
    ours("RefundsDueSoon", { Flow: "live" }, { stat: "Maximum", label: "refunds due soon" }),
    ours("OldestPendingReviewAge", { Flow: "live" }, { stat: "Maximum", label: "oldest pending (s)", yAxis: "right" }),
  ]),
  widget(
    "LLM call latency p90 (ms)",
    0,
    12,
    LLM_TASKS.map((Task) => ours("LlmCallLatency", { Task }, { stat: "p90", label: Task })),
    { stat: "p90" },
  ),
  widget(
    "LLM tokens",
    8,
    12,
    LLM_TASKS.flatMap((Task) => [
      ours("LlmPromptTokens", { Task }, { label: `${Task} prompt` }),
      ours("LlmCompletionTokens", { Task }, { label: `${Task} completion` }),
      ours("LlmCallCostUsd", { Task }, { label: `${Task} cost (USD)`, yAxis: "right" }),
    ]),
  ),
  widget("LLM calls and failures", 16, 12, [
    ...LLM_TASKS.map((Task) => ours("LlmCalls", { Task }, { label: `${Task} calls` })),
    search("llmfail", "LlmCallFailures", ["Task", "Code"], "", "Sum"),
  ]),
  widget(
    "Dead-letter queues (messages)",
    0,
    18,
    Object.entries(DEAD_LETTER_QUEUES).map(([name, dlq]) => [
      "AWS/SQS",
      "ApproximateNumberOfMessagesVisible",
      "QueueName",
      queueName(dlq),
      { label: name },
    ]),
    { stat: "Maximum" },
  ),
  widget(
    "Oldest message (s)",
    8,
    18,
    Object.entries(QUEUE_AGES).map(([name, age]) => [
      "AWS/SQS",
      "ApproximateAgeOfOldestMessage",
      "QueueName",
      queueName(age.queue),
      { label: name },
    ]),
    { stat: "Maximum" },
  ),
  widget(
    "Functions: errors, throttles, cold starts",
    16,
    18,
    DEPLOYED_FUNCTIONS.flatMap((key) => [
      ...(DEPLOYED_CONSUMERS.includes(key)
        ? [ours("MessageFailures", { Consumer: key }, { label: `${key} failed messages` })]
        : []),
      ["AWS/Lambda", "Errors", "FunctionName", functionName(key), { label: `${key} errors` }],
      ["AWS/Lambda", "Throttles", "FunctionName", functionName(key), { label: `${key} throttles` }],
      ours("ColdStart", { function_name: functionName(key) }, { label: `${key} cold starts` }),
    ]),
  ),
  widget("HTTP API: requests that failed, by route, and 5xx", 0, 24, [
    search("reqfail", "RequestFailures", ["Route"], "", "Sum"),
    ["AWS/ApiGateway", "5xx", "ApiId", api.nodes.api.id, { label: "API 5xx" }],
  ]),
  // One line per currency and authoriser: amounts of two currencies are never summed (no FX).
  widget("Refunds authorised (live) per currency, in its major units", 8, 24, [
    search("refundcur", "RefundedAmount", ["Flow", "AuthorisedBy", "Currency"], 'Flow="live"', "Sum"),
  ]),
  {
    type: "alarm",
    x: 0,
    y: 30,
    width: 24,
    height: 6,
    properties: { title: "Alarms", alarms: alarms.map((a) => a.arn) },
  },
];

/** The dashboard `claims-crew-<stage>`. */
export const dashboard = new aws.cloudwatch.Dashboard(
  "Dashboard",
  {
    dashboardName: `${$app.name}-${$app.stage}`,
    dashboardBody: $jsonStringify({ widgets }),
  },
  { deleteBeforeReplace: true },
);

/** The dashboard in the CloudWatch console. */
export const dashboardUrl = $interpolate`https://${region}.console.aws.amazon.com/cloudwatch/home?region=${region}#dashboards/dashboard/${$app.name}-${$app.stage}`;
