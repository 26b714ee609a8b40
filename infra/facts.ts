// Deploy facts, defined once and free of SST: the bus and its rule patterns, the resource links, every
// function with its sizing, its links and the exact IAM actions it may use on each, every queue with its
// consumer and event-source settings, and the HTTP routes. infra/ builds the SST components from these;
// functions/ reads its links by these names; local/ builds the embedded stack (queues, pollers, rules, HTTP
// front) from the same values. Nothing here may touch `sst`, `$app` or `aws` (lint-guarded): it runs in
// Lambda and locally too.
import { DETAIL_TYPES, KERNEL_SOURCE } from "../core/kernel/events.ts";
import { EventSourceSettingError } from "./errors.ts";
import { ORDER_READERS } from "./order-source.ts";
import type { OrderSourceKind } from "./order-source.ts";

/** The bus name in production (other stages get a suffix, infra/settings.ts). */
export const BUS_NAME = "claims";

/** The rules on the `claims` bus, by name. Each pattern is plain EventBridge pattern JSON. */
export const RULE_PATTERNS = {
  /** Every verdict, for analytics and downstream consumers. */
  verdicts: { source: [KERNEL_SOURCE], "detail-type": [DETAIL_TYPES.verdict] },
  /** What the human review queue follows: reviews requested and decided, ESCALATE verdicts and claims that need review. */
  escalations: {
    source: [KERNEL_SOURCE],
    $or: [
      { "detail-type": [DETAIL_TYPES.verdict], detail: { verdict: ["ESCALATE"] } },
      { "detail-type": [DETAIL_TYPES.review, DETAIL_TYPES.reviewRequested, DETAIL_TYPES.reviewDecided] },
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

/** The SST link names (`Resource.<Name>`) of the app's resources. */
export const LINKS = {
  table: "Table",
  bus: "Bus",
  llmApiKey: "LlmApiKey",
  apiToken: "ApiToken",
  reviewerToken: "ReviewerToken",
  /** The shop's order API token: a secret that exists, and is linked to ORDER_READERS, only when ORDER_SOURCE=http. */
  orderApiToken: "OrderApiToken",
  /** The payment provider's API key (Stripe secret key), for the refund executor. */
  stripeApiKey: "StripeApiKey",
  /** The signing secret of the Stripe webhook endpoint (its own credential, neither token opens it). */
  stripeWebhookSecret: "StripeWebhookSecret",
  queues: {
    crewEvents: "CrewEventsQueue",
    agentSteps: "AgentStepsQueue",
    proposals: "ProposalsQueue",
    extraction: "ExtractionQueue",
    timers: "TimersQueue",
  },
} as const;

/** A work queue by its role. */
export type QueueRole = keyof typeof LINKS.queues;

/** A link name. */
export type LinkName =
  | typeof LINKS.table
  | typeof LINKS.bus
  | typeof LINKS.llmApiKey
  | typeof LINKS.apiToken
  | typeof LINKS.reviewerToken
  | typeof LINKS.orderApiToken
  | typeof LINKS.stripeApiKey
  | typeof LINKS.stripeWebhookSecret
  | (typeof LINKS.queues)[QueueRole];

/**
 * The IAM actions a function may use on a linked resource: never a wildcard. A secret needs none (its value
 * travels in the function's encrypted package). `Table` covers the table and its index `gsi1`, where only
 * `Query` is ever granted.
 */
export const ACTIONS = {
  /** Reads of the table (and Query on gsi1). */
  tableRead: ["dynamodb:GetItem", "dynamodb:Query"],
  /** What the adapters write with: conditional puts and updates, the idempotency key's release, session chunks. */
  tableWrite: [
    "dynamodb:GetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
  ],
  /** SendMessage covers SendMessageBatch. Receiving is the event-source mapping's, granted with the subscription. */
  queueSend: ["sqs:SendMessage"],
  /** DescribeEventBus: the publisher checks once per container that the bus exists (a PutEvents to a missing bus succeeds). */
  busPublish: ["events:PutEvents", "events:DescribeEventBus"],
  secret: [],
  /** Every function: writing its own log group (infra/lambda.ts), never creating one. */
  ownLogs: ["logs:CreateLogStream", "logs:PutLogEvents"],
} as const;

/** An IAM action of the app. */
export type IamAction = (typeof ACTIONS)[keyof typeof ACTIONS][number];

/** One function of the app: handler, memory, timeout, console description and its links with their IAM actions. */
interface FunctionFact {
  readonly handler: string;
  readonly memory: `${number} MB`;
  readonly timeoutSeconds: number;
  readonly description: string;
  /** Exactly the links its handler reads (`Resource.<Name>`), each with the IAM actions it may use on it. */
  readonly access: Readonly<Partial<Record<LinkName, readonly IamAction[]>>>;
  /**
   * Concurrency reserved for it (and capped at that): only the functions on a user's request path, so a queue
   * backlog or a redrive can never take the account's concurrency from them.
   */
  readonly reservedConcurrency?: number;
}

const Q = LINKS.queues;
const { tableRead, tableWrite, queueSend, busPublish, secret } = ACTIONS;

/**
 * The longest LLM call a deployed function allows, retries and backoff included (the policy's
 * `llm_defaults.timeout_ms` bounds one whole call; the deploy refuses a policy whose call would not fit).
 */
export const LLM_CALL_BUDGET_SECONDS = 30;
/** What an LLM-calling handler does besides its one call (loading the claim, saving, sending): seconds to spare. */
const LLM_HANDLER_MARGIN_SECONDS = 15;
/** The timeout of a function that makes one LLM call per invocation. */
export const LLM_FUNCTION_TIMEOUT_SECONDS = LLM_CALL_BUDGET_SECONDS + LLM_HANDLER_MARGIN_SECONDS;

/**
 * Every Lambda function of the app. Prices behind the memory choices (arm64, on-demand): Lambda bills
 * GB-seconds *including time spent waiting on I/O*; the LLM-calling functions wait seconds per call, so
 * their memory is the largest Lambda cost line and is kept low; functions that answer users get more
 * memory for faster cold starts. A link grants IAM access to that resource and nothing more.
 */
export const FUNCTIONS = {
  intakeApi: {
    handler: "functions/intake-api.handler",
    // Answers users: 512 MB (about 1/3 vCPU) keeps cold starts (zod, SDK clients) and the HTML report quick.
    memory: "512 MB",
    // It answers 202 at once; only GET /reports reads the audit. Well inside the HTTP API's 30 s integration limit.
    timeoutSeconds: 15,
    description: "HTTP API: submit claims, read claims and reports",
    // ApiToken: the report routes check the intake token themselves (tokenPage below).
    access: {
      [LINKS.table]: tableWrite,
      [Q.extraction]: queueSend,
      [Q.crewEvents]: queueSend,
      [LINKS.apiToken]: secret,
    },
    // Internet-facing: its own share of the account, which a backlog elsewhere cannot take.
    reservedConcurrency: 20,
  },
  authorizer: {
    handler: "functions/authorizer.handler",
    // Compares one header with a secret; on the request path when the 5-minute cache misses, so no 128 MB cold start.
    memory: "256 MB",
    timeoutSeconds: 5,
    description: "HTTP API authorizer: bearer token against the ApiToken secret (intake routes)",
    access: { [LINKS.apiToken]: secret },
    // Every uncached request waits on it: a few instances always available (answers are cached 5 minutes).
    reservedConcurrency: 5,
  },
  reviewApi: {
    handler: "functions/review-api.handler",
    // Answers reviewers: lists reviews, decides one (an approval reserves the refund and publishes it).
    memory: "512 MB",
    timeoutSeconds: 15,
    description: "HTTP API for reviewers: list and decide human reviews",
    // Bus: ReviewDecided and RefundExecuted; the queues: a RESUBMIT starts the corrected claim.
    access: {
      [LINKS.table]: tableWrite,
      [LINKS.bus]: busPublish,
      [Q.extraction]: queueSend,
      [Q.crewEvents]: queueSend,
    },
  },
  // Locally only (LOCAL_ONLY_FUNCTIONS): on AWS the review routes use API Gateway's JWT authorizer (infra/reviewers.ts).
  reviewerAuthorizer: {
    handler: "functions/authorizer.reviewerHandler",
    memory: "256 MB",
    timeoutSeconds: 5,
    description: "HTTP API authorizer: bearer token against the ReviewerToken secret (review routes)",
    access: { [LINKS.reviewerToken]: secret },
    reservedConcurrency: 2,
  },
  intakeExtract: {
    handler: "functions/intake-extract.handler",
    // Waits on one LLM call: memory does not shorten the wait, it only multiplies the GB-seconds billed for it.
    memory: "256 MB",
    // One LLM call (its retries inside its budget) and the writes around it.
    timeoutSeconds: LLM_FUNCTION_TIMEOUT_SECONDS,
    description: "Extracts a structured claim from free text with the LLM",
    // Bus: a failed extraction ends the claim in NEEDS_REVIEW and publishes ClaimNeedsReview. ExtractionQueue: an
    // extraction waiting for an unreachable model goes back to its queue, delayed (docs/llm.md).
    access: {
      [LINKS.table]: tableWrite,
      [Q.crewEvents]: queueSend,
      [Q.extraction]: queueSend,
      [LINKS.llmApiKey]: secret,
      [LINKS.bus]: busPublish,
    },
  },
  orchestrator: {
    handler: "functions/orchestrator.handler",
    // A pure crew step on a JSON snapshot between a few DynamoDB/SQS calls: CPU bursts are short.
    memory: "256 MB",
    // Up to 10 events per batch, each a load + step + conditional save + publish: well under a second each.
    timeoutSeconds: 30,
    description: "Crew orchestrator: delivers crew events and ticks to the session snapshot",
    access: {
      [LINKS.table]: tableWrite,
      [Q.agentSteps]: queueSend,
      [Q.proposals]: queueSend,
      [Q.timers]: queueSend,
      [LINKS.bus]: busPublish,
    },
  },
  worker: {
    handler: "functions/worker.handler",
    // Same reasoning as intakeExtract: one agent step is one LLM call.
    memory: "256 MB",
    timeoutSeconds: LLM_FUNCTION_TIMEOUT_SECONDS,
    description: "Runs one agent step through the LLM",
    // AgentStepsQueue: a step waiting for an unreachable model goes back to its queue, delayed (docs/llm.md).
    access: {
      [LINKS.table]: tableWrite,
      [Q.crewEvents]: queueSend,
      [Q.agentSteps]: queueSend,
      [LINKS.llmApiKey]: secret,
    },
  },
  kernel: {
    handler: "functions/kernel.handler",
    // Deterministic validation plus conditional writes and one EventBridge put per proposal.
    memory: "256 MB",
    timeoutSeconds: 30,
    description: "Decision kernel: validates proposals, records verdicts, executes refunds once",
    access: { [LINKS.table]: tableWrite, [LINKS.bus]: busPublish },
  },
  timer: {
    handler: "functions/timer.handler",
    // Forwards due ticks into the crew-events queue: no parsing beyond a small JSON body, latency irrelevant.
    memory: "128 MB",
    timeoutSeconds: 10,
    description: "Forwards delayed step-deadline ticks into the crew-events queue",
    // TimersQueue: a deadline beyond SQS's 15-minute delay is re-armed on the timers queue. Table: a due timer
    // of a claim already settled (final, nothing left in its session) is dropped instead of forwarded: it only reads.
    access: { [LINKS.table]: tableRead, [Q.crewEvents]: queueSend, [Q.timers]: queueSend },
  },
  sweep: {
    handler: "functions/sweep.handler",
    // Pages through the open claims on gsi1 and ticks the overdue ones; it stops paging SWEEP_RESERVE_SECONDS before
    // this timeout and leaves the rest to the next run (5 minutes later).
    memory: "256 MB",
    timeoutSeconds: 60,
    description:
      "Every 5 minutes: ticks RUNNING claims past their deadline, ends stalled ones in review, repairs review decisions",
    // ExtractionQueue: a stalled free-text claim is restarted through extraction. Bus: a STALLED claim's review
    // events, and a review decision it finishes (repairReviews) announces ReviewDecided / RefundExecuted.
    access: {
      [LINKS.table]: tableWrite,
      [Q.crewEvents]: queueSend,
      [Q.extraction]: queueSend,
      [LINKS.bus]: busPublish,
    },
  },
  batch: {
    handler: "functions/batch.handler",
    // Parses the scenario YAML and submits every claim through the intake path: more CPU, runs once a day.
    memory: "512 MB",
    timeoutSeconds: 300,
    description: "Scheduled scenario batch under one simulation_id",
    access: { [LINKS.table]: tableWrite, [Q.extraction]: queueSend, [Q.crewEvents]: queueSend },
  },
  refundExecutor: {
    handler: "functions/refund-executor.handler",
    // One provider call per RefundExecuted (a few hundred ms at Stripe) between a few DynamoDB writes.
    memory: "256 MB",
    // The SDK's 20 s request timeout and its retries fit; the queue's visibility timeout is 6x this.
    timeoutSeconds: 30,
    description: "Pays authorised refunds through the payment provider (PAYMENT_PROVIDER) and records the settlement",
    // Table: the order's payment_ref and the settlement. Bus: RefundSettled / RefundFailed.
    access: { [LINKS.table]: tableWrite, [LINKS.bus]: busPublish, [LINKS.stripeApiKey]: secret },
  },
  paymentWebhook: {
    handler: "functions/payment-webhook.handler",
    memory: "256 MB",
    timeoutSeconds: 10,
    description: "POST /webhooks/stripe: verifies Stripe's signature, records refund.updated / refund.failed",
    access: { [LINKS.table]: tableWrite, [LINKS.bus]: busPublish, [LINKS.stripeWebhookSecret]: secret },
  },
} as const satisfies Record<string, FunctionFact>;

/**
 * The functions the embedded local stack runs but AWS does not: on AWS the review routes are checked by API
 * Gateway's JWT authorizer against an OpenID Connect issuer (infra/reviewers.ts), not by a function, so neither
 * this function nor its ReviewerToken secret is deployed.
 */
export const LOCAL_ONLY_FUNCTIONS = ["reviewerAuthorizer"] as const satisfies readonly FunctionKey[];

/** The functions deployed on AWS: every function but the local-only ones (the payment ones only with PAYMENT_PROVIDER). */
export function awsFunctionKeys(paymentProvider: boolean): FunctionKey[] {
  return (Object.keys(FUNCTIONS) as FunctionKey[]).filter(
    (key) =>
      !(LOCAL_ONLY_FUNCTIONS as readonly FunctionKey[]).includes(key) &&
      (paymentProvider || !(PAYMENT_FUNCTIONS as readonly FunctionKey[]).includes(key)),
  );
}

/** The functions deployed only when PAYMENT_PROVIDER is set at deploy. */
export const PAYMENT_FUNCTIONS = ["refundExecutor", "paymentWebhook"] as const satisfies readonly FunctionKey[];

/** The refund executor's queue (fed by PAYMENT_RULE): batches of 10; a provider outage is retried, then the DLQ. */
export const PAYMENTS_QUEUE = { batchSize: 10, maxReceives: 5, maxConcurrency: 5 } as const;

/** A function of the app by its key. */
export type FunctionKey = keyof typeof FUNCTIONS;

/**
 * The links of `key`: the `Resource.<Name>` its handler may read. With the shop's order API as the order source,
 * the functions that read orders (ORDER_READERS, infra/order-source.ts) are linked to its token too.
 */
export function linksOf(key: FunctionKey, orderSource: OrderSourceKind = "table"): LinkName[] {
  const links = Object.keys(FUNCTIONS[key].access) as LinkName[];
  const readsOrders = (ORDER_READERS as readonly FunctionKey[]).includes(key);
  return orderSource === "http" && readsOrders ? [...links, LINKS.orderApiToken] : links;
}

/** How long before its timeout the sweep stops paging: time to finish the claim at hand and report. */
export const SWEEP_RESERVE_SECONDS = 15;

/**
 * The functions that read the refund policy (the agent's contract, the claims bounds, the LLM defaults): the
 * deploy ships the pre-parsed policy (claims-policy.json, infra/policy.ts) with exactly these.
 */
// sweep: it completes interrupted review decisions, and an approval runs the reject checks again with the agent's contract.
export const POLICY_FUNCTIONS = [
  "intakeExtract",
  "orchestrator",
  "worker",
  "kernel",
  "reviewApi",
  "batch",
  "sweep",
] as const satisfies readonly FunctionKey[];

/** AWS guidance for SQS event sources: the queue's visibility timeout is at least 6x the function timeout. */
const VISIBILITY_FACTOR = 6;

/** One consumed queue: its link, the function that consumes it, FIFO-ness, batch size and receives before its DLQ. */
interface QueueFact {
  readonly link: LinkName;
  readonly consumer: FunctionKey;
  readonly fifo: boolean;
  readonly batchSize: number;
  /**
   * How many receives a message gets before it moves to its DLQ (SQS `maxReceiveCount`). A receive that
   * ends in a reported batch-item failure or a crash counts; successful siblings in a batch do not.
   */
  readonly maxReceives: number;
  /** LLM consumers cap their event-source concurrency at LLM_MAX_CONCURRENCY (the provider's rate limit). */
  readonly llm: boolean;
  /**
   * The event-source mapping's maximum concurrency (2–1000) for the others: how many batches may run at once,
   * so a backlog or a redrive cannot take the account's concurrency from the API and its authorizers.
   */
  readonly maxConcurrency: number;
  /**
   * How long the event source gathers records before it invokes (SQS `MaximumBatchingWindowInSeconds`, 0–300;
   * default 0: it invokes with what one receive returns). Only standard queues have one, and only a queue with a
   * window may take batches above 10 (up to 10,000): Lambda's limits, checked by `eventSourceBatch`.
   */
  readonly batchingWindowSeconds?: number;
}

/** The work queues, each with its consumer and event-source settings. */
export const QUEUES = {
  // Crew events and ticks for the orchestrator: FIFO with the claim id as message group, so one claim's events
  // are serial. Racing orchestrators lose a version-conditioned save and retry by redelivery, so allow a few
  // receives; but a poison event blocks its claim's group until it leaves, so not many. FIFO batches are at most 10.
  crewEvents: {
    link: Q.crewEvents,
    consumer: "orchestrator",
    fifo: true,
    batchSize: 10,
    maxReceives: 5,
    llm: false,
    maxConcurrency: 20,
  },
  // agent.step.requested for the worker. Every receive is a paid LLM call, and the crew engine already turns
  // failed steps into events; SQS retries cover crashes and throttling, and a throttled receive counts too, so
  // 5 receives (AWS's advice for Lambda consumers) keep a burst of throttling from dead-lettering work. One
  // message per invocation, so the timeout bounds exactly one LLM call.
  agentSteps: {
    link: Q.agentSteps,
    consumer: "worker",
    fifo: false,
    batchSize: 1,
    maxReceives: 5,
    llm: true,
    maxConcurrency: 10,
  },
  // Refund proposals for the kernel: deterministic and idempotent (conditional writes), so retries are cheap
  // and safe; full batches of 10 and no batching window (latency).
  proposals: {
    link: Q.proposals,
    consumer: "kernel",
    fifo: false,
    batchSize: 10,
    maxReceives: 5,
    llm: false,
    maxConcurrency: 10,
  },
  // Free-text claims waiting for LLM extraction: one LLM call per receive (429/5xx retried inside it); 5 receives
  // as for the agent steps.
  extraction: {
    link: Q.extraction,
    consumer: "intakeExtract",
    fifo: false,
    batchSize: 1,
    maxReceives: 5,
    llm: true,
    maxConcurrency: 10,
  },
  // Step-deadline ticks: a standard queue because FIFO queues ignore per-message DelaySeconds. A cheap
  // forwarder; a tick that still goes missing is caught by the 5-minute sweep. Almost every timer fires after
  // its claim is final and is dropped, so what it costs is the event source's receive, delete and invocation:
  // a deadline of minutes does not need second-level promptness, so the event source gathers timers for up to
  // TIMER_BATCHING_WINDOW_SECONDS and hands the function up to 100 at once. A tick is then at most that
  // window late (docs/architecture.md); 100 small records take the function well under its timeout, and it
  // leaves those it has no time for to a redelivery (functions/timer.ts).
  timers: {
    link: Q.timers,
    consumer: "timer",
    fifo: false,
    batchSize: 100,
    batchingWindowSeconds: 60,
    maxReceives: 5,
    llm: false,
    maxConcurrency: 5,
  },
} as const satisfies Record<QueueRole, QueueFact>;

/** Lambda's limits for an SQS event source: batches of 1–10, or up to 10,000 with a window of 1–300 s (standard queues only). */
const SQS_EVENT_SOURCE = { maxBatch: 10, maxBatchWithWindow: 10_000, maxWindowSeconds: 300 } as const;

/**
 * A queue's event-source batching, checked against Lambda's limits: records per invocation and the batching
 * window in seconds (0: none). What infra/ deploys and the local poller plays, from the one fact.
 */
export function eventSourceBatch(role: QueueRole): { size: number; windowSeconds: number } {
  return eventSourceBatchOf(role, QUEUES[role]);
}

/** `eventSourceBatch` of any queue fact (`role` names it in the error). */
export function eventSourceBatchOf(
  role: string,
  fact: Pick<QueueFact, "fifo" | "batchSize" | "batchingWindowSeconds">,
): { size: number; windowSeconds: number } {
  const windowSeconds = fact.batchingWindowSeconds ?? 0;
  const { maxBatch, maxBatchWithWindow, maxWindowSeconds } = SQS_EVENT_SOURCE;
  if (!Number.isInteger(windowSeconds) || windowSeconds < 0 || windowSeconds > maxWindowSeconds)
    throw new EventSourceSettingError(
      role,
      `a batching window is 0–${maxWindowSeconds} whole seconds, got ${windowSeconds}`,
    );
  if (fact.fifo && windowSeconds > 0) throw new EventSourceSettingError(role, "a FIFO queue has no batching window");
  const max = windowSeconds > 0 ? maxBatchWithWindow : maxBatch;
  if (!Number.isInteger(fact.batchSize) || fact.batchSize < 1 || fact.batchSize > max)
    throw new EventSourceSettingError(
      role,
      `a batch is 1–${max} records${windowSeconds > 0 ? "" : " without a batching window"}, got ${fact.batchSize}`,
    );
  return { size: fact.batchSize, windowSeconds };
}

/** The longest a due timer may wait in the event source before the timer function sees it (its batching window). */
export const TIMER_BATCHING_WINDOW_SECONDS = eventSourceBatch("timers").windowSeconds;

/**
 * Logging of every function on AWS (JSON format). Lambda's own INFO lines are kept: `platform.report` is the only
 * record of Init Duration and Max Memory Used, which memory sizing needs (~375 bytes per invocation; the
 * handlers' own lines cost more). The handlers' success lines ("message handled", "request handled") are
 * sampled (functions/lib/logger.ts); warnings and errors are always written. bench/cost.ts prices the logs
 * from these.
 */
export const LOGGING = { systemLogLevel: "INFO", successSampleRate: 0.01 } as const;

/** Receives before the DLQ on the queues that rules feed for systems outside this app: a generous default they can tighten. */
export const DOWNSTREAM_MAX_RECEIVES = 5;

/**
 * How long every queue keeps a message (the SQS maximum, 14 days; the default is 4): a downstream consumer that
 * is down for a week loses no RefundExecuted, and a dead letter waits for a person.
 */
export const RETENTION_SECONDS = 14 * 24 * 60 * 60;

/**
 * The visibility timeout of a queue in seconds: VISIBILITY_FACTOR × its consumer's timeout, plus its batching
 * window (a record received at the window's start stays in flight while the rest of its batch is gathered).
 */
export function visibilityTimeoutSeconds(role: QueueRole): number {
  return VISIBILITY_FACTOR * FUNCTIONS[QUEUES[role].consumer].timeoutSeconds + eventSourceBatch(role).windowSeconds;
}

/**
 * Who may call a route: the intake token (submitting and reading claims), a reviewer's credential (deciding
 * reviews: locally a reviewer token, on AWS a JWT of the reviewers' OpenID Connect issuer), or nobody checks
 * (health). They are separate credentials: neither opens the other's routes.
 */
export type RouteAuth = "intake" | "reviewer" | "none";

/** The authorizer function that checks each kind of token. */
export const AUTHORIZERS = { intake: "authorizer", reviewer: "reviewerAuthorizer" } as const satisfies Record<
  Exclude<RouteAuth, "none">,
  FunctionKey
>;

/** One HTTP route, the function that serves it and who may call it. */
export interface RouteFact {
  readonly method: "GET" | "POST";
  readonly path: `/${string}`;
  readonly auth: RouteAuth;
  readonly fn: "intakeApi" | "reviewApi" | "paymentWebhook";
  /**
   * API Gateway lets the route through and its function checks the token itself (functions/lib/intake-routes.ts
   * withIntakeToken): a browser without a token gets the page that asks for it; any other request without one, 401.
   */
  readonly tokenPage?: true;
}

/**
 * The route with a throttle of its own, below the per-route default: each accepted claim starts LLM calls and
 * writes, so submissions get the tightest limit (CLAIMS_API_SUBMIT_RATE_LIMIT).
 */
export const SUBMIT_ROUTE = "POST /claims" as const;

/** The HTTP API's routes, keyed by API Gateway route key. */
export const ROUTES = {
  "POST /claims": { method: "POST", path: "/claims", auth: "intake", fn: "intakeApi" },
  "GET /claims/{id}": { method: "GET", path: "/claims/{id}", auth: "intake", fn: "intakeApi" },
  "GET /claims": { method: "GET", path: "/claims", auth: "intake", fn: "intakeApi" },
  "GET /reports/{simulation_id}": {
    method: "GET",
    path: "/reports/{simulation_id}",
    auth: "intake",
    fn: "intakeApi",
    tokenPage: true,
  },
  // The live view of claims sent without a simulation_id.
  "GET /reports": { method: "GET", path: "/reports", auth: "intake", fn: "intakeApi", tokenPage: true },
  "GET /reviews": { method: "GET", path: "/reviews", auth: "reviewer", fn: "reviewApi" },
  "POST /claims/{id}/review": { method: "POST", path: "/claims/{id}/review", auth: "reviewer", fn: "reviewApi" },
  // The reviewers' page: constant HTML that holds no secret (it asks for the reviewer token and keeps it in the tab).
  "GET /review": { method: "GET", path: "/review", auth: "none", fn: "reviewApi" },
  // Open, for load balancers and uptime checks; it reveals nothing.
  "GET /health": { method: "GET", path: "/health", auth: "none", fn: "intakeApi" },
  // Stripe's webhooks: no bearer token; the function verifies Stripe's signature with the StripeWebhookSecret.
  "POST /webhooks/stripe": { method: "POST", path: "/webhooks/stripe", auth: "none", fn: "paymentWebhook" },
  // Open: the OpenAPI 3.1 description of these routes (functions/openapi.json), generated from the handlers' schemas.
  "GET /openapi.json": { method: "GET", path: "/openapi.json", auth: "none", fn: "intakeApi" },
} as const satisfies Record<string, RouteFact>;

/** An API Gateway route key of the app. */
export type RouteKey = keyof typeof ROUTES;
