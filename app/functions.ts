// Every function of the app: handler, sizing, its links with the exact IAM actions on each, and which functions
// read the policy or the orders. infra/lambda.ts deploys them; local/ runs the same handlers.
import { ACTIONS, IDEMPOTENCY_PK_PREFIX, LINKS, type IamAction, type LinkName, type ScopedGrant } from "./links.ts";
import { DEFAULT_ORDER_SOURCE, ORDER_READERS, orderSourceLinks } from "./order-source.ts";
import type { OrderSourceKind } from "./order-source.ts";
import { paymentProvider, providerLinksOf } from "./payment-provider.ts";
import type { PaymentProviderName } from "./payment-provider.ts";

/** One function of the app: handler, memory, timeout, console description and its links with their IAM actions. */
interface FunctionFact {
  readonly handler: string;
  readonly memory: `${number} MB`;
  readonly timeoutSeconds: number;
  readonly description: string;
  /** Exactly the links its handler reads (`Resource.<Name>`), each with the IAM actions it may use on it. */
  readonly access: Readonly<Partial<Record<LinkName, readonly IamAction[]>>>;
  /** Actions it may use only on some items of a linked table (`dynamodb:LeadingKeys`). */
  readonly scoped?: readonly ScopedGrant[];
  /**
   * Concurrency reserved for it (and capped at that) when the deploy reserves concurrency (CLAIMS_RESERVED_CONCURRENCY,
   * app/capacity.ts): only the functions on a user's request path, so a queue backlog or a redrive can never take
   * the account's concurrency from them.
   */
  readonly reservedConcurrency?: number;
}

const Q = LINKS.queues;

/**
 * The intake API's reserved concurrency, and its authorizer's: every intake request whose token is not in the
 * authorizer's 5-minute cache invokes the authorizer once, so the authorizer may need as many instances as the
 * API (a smaller cap would answer a burst of new tokens with 500s from API Gateway).
 */
const INTAKE_RESERVED_CONCURRENCY = 20;
const { tableRead, tableWrite, intakeWrite, queueSend, busPublish, secret, personalData } = ACTIONS;
/** The stage's KMS key, for every function that writes the table or the queues: each seals what it writes (docs/customer-data.md). */
const KEY = LINKS.personalDataKey;

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
      [LINKS.table]: intakeWrite,
      [KEY]: personalData,
      [Q.extraction]: queueSend,
      [Q.crewEvents]: queueSend,
      [LINKS.apiToken]: secret,
    },
    // Releasing an idempotency key it took (an unrelated claim holds the id): those items only.
    scoped: [{ link: LINKS.table, actions: ["dynamodb:DeleteItem"], leadingKeys: [`${IDEMPOTENCY_PK_PREFIX}*`] }],
    // Internet-facing: its own share of the account, which a backlog elsewhere cannot take.
    reservedConcurrency: INTAKE_RESERVED_CONCURRENCY,
  },
  authorizer: {
    handler: "functions/authorizer.handler",
    // Compares one header with a secret; on the request path when the 5-minute cache misses, so no 128 MB cold start.
    memory: "256 MB",
    timeoutSeconds: 5,
    description: "HTTP API authorizer: bearer token against the ApiToken secret (intake routes)",
    access: { [LINKS.apiToken]: secret },
    // Every uncached request waits on it: as many instances as the API it guards (answers are cached 5 minutes).
    reservedConcurrency: INTAKE_RESERVED_CONCURRENCY,
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
      [KEY]: personalData,
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
      [KEY]: personalData,
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
      [KEY]: personalData,
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
      [KEY]: personalData,
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
    access: { [LINKS.table]: tableWrite, [KEY]: personalData, [LINKS.bus]: busPublish },
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
    // ExtractionQueue: a stalled free-text claim is restarted through extraction. ProposalsQueue: a claim whose crew
    // completed but which no verdict finished has its proposal sent to the kernel again. Bus: a STALLED claim's review
    // events, and a review decision it finishes (repairReviews) announces ReviewDecided / RefundExecuted.
    access: {
      [LINKS.table]: tableWrite,
      [KEY]: personalData,
      [Q.crewEvents]: queueSend,
      [Q.extraction]: queueSend,
      [Q.proposals]: queueSend,
      [LINKS.bus]: busPublish,
    },
  },
  batch: {
    handler: "functions/batch.handler",
    // Parses the scenario YAML and submits every claim through the intake path: more CPU, runs once a day.
    memory: "512 MB",
    timeoutSeconds: 300,
    description: "Scheduled scenario batch under one simulation_id",
    access: { [LINKS.table]: tableWrite, [KEY]: personalData, [Q.extraction]: queueSend, [Q.crewEvents]: queueSend },
  },
  refundExecutor: {
    handler: "functions/refund-executor.handler",
    // One provider call per RefundExecuted (a few hundred ms at Stripe) between a few DynamoDB writes.
    memory: "256 MB",
    // The SDK's 20 s request timeout and its retries fit; the queue's visibility timeout is 6x this.
    timeoutSeconds: 30,
    description: "Pays authorised refunds through the payment provider (PAYMENT_PROVIDER) and records the settlement",
    // Table: the order's payment_ref and the settlement. Bus: RefundSettled / RefundFailed. The provider's secrets
    // it reads (its API key) come by link with the provider (linksOf).
    access: { [LINKS.table]: tableWrite, [KEY]: personalData, [LINKS.bus]: busPublish },
  },
  paymentWebhook: {
    handler: "functions/payment-webhook.handler",
    memory: "256 MB",
    timeoutSeconds: 10,
    description: "The payment provider's webhook route: verifies its signature, records its refund updates",
    // The provider's signing secret comes by link with the provider (linksOf).
    access: { [LINKS.table]: tableWrite, [KEY]: personalData, [LINKS.bus]: busPublish },
  },
} as const satisfies Record<string, FunctionFact>;

/**
 * The functions the embedded local stack runs but AWS does not: on AWS the review routes are checked by API
 * Gateway's JWT authorizer against an OpenID Connect issuer (infra/reviewers.ts), not by a function, so neither
 * this function nor its ReviewerToken secret is deployed.
 */
export const LOCAL_ONLY_FUNCTIONS = ["reviewerAuthorizer"] as const satisfies readonly FunctionKey[];

/**
 * The functions deployed on AWS with `provider` (PAYMENT_PROVIDER at deploy; undefined: unset): every function but
 * the local-only ones; the refund executor only with a provider, the webhook function only with one that has a
 * webhook (app/payment-providers/).
 */
export function awsFunctionKeys(provider: PaymentProviderName | undefined): FunctionKey[] {
  return (Object.keys(FUNCTIONS) as FunctionKey[]).filter(
    (key) =>
      !(LOCAL_ONLY_FUNCTIONS as readonly FunctionKey[]).includes(key) &&
      (key === "refundExecutor" ? provider !== undefined : true) &&
      (key === "paymentWebhook" ? provider !== undefined && "webhook" in paymentProvider(provider) : true),
  );
}

/** The functions deployed only with a payment provider (PAYMENT_PROVIDER at deploy; the webhook's only if it has one). */
export const PAYMENT_FUNCTIONS = ["refundExecutor", "paymentWebhook"] as const satisfies readonly FunctionKey[];

/** The refund executor's queue (fed by PAYMENT_RULE): batches of 10; a provider outage is retried, then the DLQ. */
export const PAYMENTS_QUEUE = { batchSize: 10, maxReceives: 5, maxConcurrency: 5 } as const;

/** A function of the app by its key. */
export type FunctionKey = keyof typeof FUNCTIONS;

/** What a deployment (or a local stack) is configured with, as far as links go. */
export interface LinkedChoices {
  /** ORDER_SOURCE (default: the table). */
  readonly orderSource?: OrderSourceKind;
  /** PAYMENT_PROVIDER (undefined: none). */
  readonly paymentProvider?: PaymentProviderName | undefined;
}

/** The SST app's name (sst.config.ts): the prefix of every fixed resource name. */
export const APP_NAME = "claims-crew";

/** The Lambda name of `key` in `stage`: `claims-crew-<stage>-<key>` (alarms, the dashboard and the checks name it). */
export function deployedFunctionName(stage: string, key: FunctionKey): string {
  return `${APP_NAME}-${stage}-${key}`;
}

/**
 * The links of `key`: the `Resource.<Name>` its handler may read. The functions that read orders (ORDER_READERS,
 * app/order-source.ts) are linked to the order source's secrets too (the shop's order API: its token), and the
 * payment functions to the payment provider's secrets each reads (app/payment-providers/: Stripe's API key for the
 * executor, its signing secret for the webhook).
 */
export function linksOf(key: FunctionKey, choices: LinkedChoices = {}): LinkName[] {
  const links = Object.keys(FUNCTIONS[key].access) as LinkName[];
  const readsOrders = (ORDER_READERS as readonly FunctionKey[]).includes(key);
  return [
    ...links,
    ...(readsOrders ? orderSourceLinks(choices.orderSource ?? DEFAULT_ORDER_SOURCE) : []),
    ...providerLinksOf(key, choices.paymentProvider),
  ];
}

/** How long before its timeout the sweep stops paging: time to finish the claim at hand and report. */
export const SWEEP_RESERVE_SECONDS = 15;

/**
 * The functions that read the refund policy (the agent's contract, the claims bounds, the LLM defaults): the
 * deploy ships the pre-parsed policy (claims-policy.json, infra/policy.ts) with exactly these.
 */
// sweep: it completes interrupted review decisions, and an approval runs the reject checks again with the agent's contract.
// timer, refundExecutor, paymentWebhook: a review they open (a stalled claim, a failed refund) is announced with
// when it is due under the policy (ReviewOpened, docs/reviews.md#the-desk).
export const POLICY_FUNCTIONS = [
  "intakeExtract",
  "orchestrator",
  "worker",
  "kernel",
  "reviewApi",
  "batch",
  "sweep",
  "timer",
  "refundExecutor",
  "paymentWebhook",
] as const satisfies readonly FunctionKey[];

/**
 * Logging of every function on AWS (JSON format). Lambda's own lines at WARN: no `platform.start` and
 * `platform.report` per invocation (~375 bytes, $0.60 per million structured claims; issue 37). `platform.report` is
 * the only record of Init Duration and Max Memory Used: a stage deployed with CLAIMS_LAMBDA_SYSTEM_LOG_LEVEL=INFO
 * (infra/settings.ts) writes them again for memory sizing (infra/README.md, "Logs and retention"). The handlers' success lines
 * ("message handled", "request handled") are sampled (functions/observability/logger.ts); warnings and errors are
 * always written. bench/cost.ts prices the logs from these.
 */
export const LOGGING = { systemLogLevel: "WARN", successSampleRate: 0.01 } as const;
