// The local stack's options and what a running stack offers (local/stack.ts starts it).
import type { ClaimsConfig } from "../core/claim/config.ts";
import type { PipelineDeps, PipelineWaits, StepTimerMode } from "../pipeline/deps.ts";
import type { Order } from "../core/integrity/index.ts";
import type { LlmPort } from "../core/llm/index.ts";
import type { Clock, IdSource, PersonalDataVault } from "../pipeline/ports.ts";
import type { createAuthorizerHandler } from "../functions/authorizer.ts";
import type { ReviewerCredential } from "../functions/http/bearer.ts";
import type { OidcSettings } from "./auth/oidc.ts";
import type { AuthorizerFn } from "./auth/authorizer.ts";
import type { createReviewApiHandler } from "../functions/review-api.ts";
import type { createBatchHandler } from "../functions/batch.ts";
import type { createIntakeApiHandler } from "../functions/intake-api.ts";
import type { AwsClients } from "../functions/composition/compose.ts";
import type { LogLevelName } from "../functions/observability/logger.ts";
import type { LogFormat } from "./consumers.ts";
import type { SqsHandler } from "../functions/consumers/sqs-consumer.ts";
import type { createSweepHandler } from "../functions/sweep.ts";
import type { createPaymentWebhookHandler } from "../functions/payment-webhook.ts";
import type { FunctionKey, QueueRole, RuleName } from "../app/manifest.ts";
import type { MemoryReport } from "./memory.ts";
import type { Emulators } from "./emulators.ts";
import type { BusEvent, LocalBus } from "./eventbridge/server.ts";
import type { Poller } from "./poller/poller.ts";
import type { PollerError } from "./poller/errors.ts";
import type { StateLock } from "./state-lock.ts";
import type { StackQueue } from "./stack-queues.ts";
import type { HandlerThread } from "./handler-thread.ts";
import type { LocalPaymentOptions, LocalPayments } from "./payment-provider.ts";
import type { ClaimsRuntime } from "./runtime.ts";
import type { RefundDueLine } from "../core/kernel/refund-due.ts";

/** Options of `startLocalStack`. */
export interface LocalStackOptions {
  readonly configPath: string;
  readonly clock: Clock;
  readonly llm: LlmPort;
  /** `events.jsonl` goes here; without it nothing is written. */
  readonly dataDir?: string;
  /**
   * Keep the table (LevelDB) and the queues' messages (a journal) here, so that a restart — `kill -9` included —
   * loses nothing; on start the journaled messages are sent again and every open claim is nudged once.
   * Without it the stack is in memory (`claims batch`).
   */
  readonly stateDir?: string;
  /**
   * The vault that seals the customer's words, over the started emulators: default the key files of `dataDir` with
   * `stateDir`, else none. A test of the AWS composition passes the KMS data keys in the stack's table.
   */
  readonly personalDataVault?: (emulators: Emulators) => PersonalDataVault;
  /** Intake answers 429 with Retry-After while this many claims are open (RECEIVED or RUNNING); default: no bound. */
  readonly maxOpenClaims?: number;
  /** Keep every delivered bus event in `bus.received` (default true; a long-running `claims serve` turns it off). */
  readonly recordBusEvents?: boolean;
  /** Bearer token of the HTTP API (Resource.ApiToken); generated when absent. */
  readonly apiToken?: string;
  /** The reviewers' token (default: random); the intake token cannot decide reviews, and the reverse. */
  readonly reviewerToken?: string;
  /**
   * Named reviewers (the reviewers file: a list, or the list as it is now — `watchReviewers`, so a change takes
   * effect without a restart); when absent, `reviewerToken` is the one reviewer `reviewer`.
   */
  readonly reviewers?: readonly ReviewerCredential[] | (() => readonly ReviewerCredential[]);
  /** Reviewers from an OpenID Connect issuer instead: their JWTs verified as API Gateway's JWT authorizer does. */
  readonly reviewerOidc?: OidcSettings;
  /** Where every ReviewOpened is POSTed (default CLAIMS_REVIEW_WEBHOOK_URL; "" for none). */
  readonly reviewWebhookUrl?: string;
  /** Orders to seed (default: the config file's, dates resolved against `clock`). */
  readonly orders?: readonly Order[];
  readonly ids?: IdSource;
  /** Level of the handlers' Powertools logs, on stderr for WARN and above (default CLAIMS_LOG_LEVEL, else WARN). */
  readonly logLevel?: LogLevelName;
  /** How the handlers' logs are written: Powertools' JSON (default, as on AWS) or lines of text (`claims serve`'s console). */
  readonly logFormat?: LogFormat;
  /**
   * Per-queue overrides (tests use short visibility timeouts to see redrive quickly, and a batching window of 0
   * to see a timer handled at once; without a window a batch is at most 10, as on Lambda).
   */
  readonly queues?: Partial<
    Record<
      QueueRole,
      { readonly visibilityTimeoutS?: number; readonly maxReceives?: number; readonly batchingWindowMs?: number }
    >
  >;
  /** Receive loops per queue (default 2). */
  readonly pollerConcurrency?: number;
  /**
   * Every wait that depends on the model: crew step deadlines, the LLM consumers' invocation and
   * visibility timeouts, and how long `runtime.settle` waits for a claim (default: derived from the
   * config file's `llm_defaults.timeout_ms`; the CLI passes the effective LLM settings').
   */
  readonly waits?: PipelineWaits;
  /**
   * How long a claim that needs an unreachable model waits for it (the outage hold, docs/llm.md); default 0: no hold,
   * such claims end NEEDS_REVIEW LLM_UNREACHABLE at once (`claims batch`). `claims serve` passes CLAIMS_LLM_OUTAGE_HOLD_S.
   */
  readonly llmOutageHoldMs?: number;
  /**
   * Who arms a claim's first step-deadline timer (docs/architecture.md#timers-and-the-sweep): `lazy`, the sweep (which
   * the stack runs every `sweepEveryMs`), or `eager`, the crew's start. Default: CLAIMS_STEP_TIMERS, else `lazy`.
   */
  readonly stepTimers?: StepTimerMode;
  /** How long `runtime.settle` waits for one claim before ending it in NEEDS_REVIEW (default: `waits.claimMs`). */
  readonly settleTimeoutMs?: number;
  /** Run the sweep handler every this many ms, as the 5-minute schedule does on AWS (default 300 000; 0 = never). */
  readonly sweepEveryMs?: number;
  /** Run with every sweep besides the handler's: the retention policy over the data directory (docs/customer-data.md). */
  readonly onSweep?: () => Promise<unknown>;
  /**
   * With `stateDir`: how often the kept table's size is checked, to compact it while running when it has grown well
   * past its size after the last compaction (local/table-compaction.ts; default 60000, 0 = never).
   */
  readonly compactCheckEveryMs?: number;
  /** Called for every event a bus rule delivers (progress lines of `claims serve`). */
  readonly onBusEvent?: (rule: RuleName, event: BusEvent) => void;
  /** Wraps a queue consumer (tests inject crashes here). */
  readonly wrapHandler?: (role: QueueRole, handler: SqsHandler) => SqsHandler;
  /**
   * Runs each bus delivery to the refund executor (tests: as an invocation of its own, like the executor's queue
   * consumer on AWS, instead of inside the invocation whose PutEvents dispatched it).
   */
  readonly wrapRefundDelivery?: <T>(delivery: () => Promise<T>) => Promise<T>;
  /** Wraps the dependencies each function's handler gets (tests inject faults into its ports); the stack's own `deps` stay unwrapped. */
  readonly wrapDeps?: (fn: FunctionKey, deps: PipelineDeps) => PipelineDeps;
  /**
   * The refund executor's payment provider and its declared variables (local/payment-provider.ts; default:
   * PAYMENT_PROVIDER and the provider's variables — Stripe's STRIPE_API_KEY, STRIPE_API_BASE, STRIPE_WEBHOOK_SECRET —
   * from the environment; the provider defaults to `simulated`). The provider's webhook route answers only with its
   * signing secret.
   */
  readonly payments?: LocalPaymentOptions;
  /** Receives what the pollers report (failed handlers, SQS errors); default: a line on stderr. */
  readonly onPollerError?: (role: QueueRole, error: PollerError) => void;
  /**
   * Run the queue consumers and their pollers in a worker thread of their own (`claims serve`; handler-thread.ts),
   * with the model built there from the environment (serve-llm.ts) rather than `llm`. Not with the test hooks
   * (`wrapHandler`, `wrapDeps`, `ids`, `onPollerError`): functions cannot cross threads. A frozen clock is passed as
   * its instant (the thread's copy does not follow a later `set`).
   */
  readonly handlerThread?: boolean;
}

/** The handlers as wired locally (the same factories as the deployed `handler` exports). */
export type LocalHandlers = {
  readonly intakeApi: ReturnType<typeof createIntakeApiHandler>;
  readonly reviewApi: ReturnType<typeof createReviewApiHandler>;
  readonly authorizer: ReturnType<typeof createAuthorizerHandler>;
  readonly reviewerAuthorizer: AuthorizerFn;
  readonly sweep: ReturnType<typeof createSweepHandler>;
  readonly batch: ReturnType<typeof createBatchHandler>;
  /** The refund executor, which the bus's payments rule delivers RefundExecuted to (as an SQS batch of one). */
  readonly refundExecutor: SqsHandler;
  /** The configured provider's webhook route (Stripe's POST /webhooks/stripe); undefined without one or without its signing secret. */
  readonly paymentWebhook: ReturnType<typeof createPaymentWebhookHandler> | undefined;
} & Readonly<Record<QueueRole, SqsHandler>>;

/** A running local stack. */
export interface LocalStack {
  readonly runtime: ClaimsRuntime;
  readonly deps: PipelineDeps;
  readonly config: ClaimsConfig;
  readonly handlers: LocalHandlers;
  readonly pollers: Readonly<Record<QueueRole, Poller>>;
  readonly queues: Readonly<Record<QueueRole, StackQueue>>;
  readonly bus: { readonly local: LocalBus; readonly received: Readonly<Record<RuleName, BusEvent[]>> };
  readonly emulators: Emulators;
  readonly clients: AwsClients;
  /** The payment provider it runs with (PAYMENT_PROVIDER, its secrets and settings, whether its webhook answers). */
  readonly payments: LocalPayments;
  readonly apiToken: string;
  readonly reviewerToken: string;
  /** The lock on the state directory (with `stateDir`): tell it the API's URL once it listens. */
  readonly stateLock: StateLock | undefined;
  /** The consumers' thread (`handlerThread`), undefined when they run on the stack's own thread. */
  readonly handlerThread: HandlerThread | undefined;
  /** What the start recovered from the state directory: journaled messages sent again, open claims nudged. */
  readonly recovered: {
    readonly messages: number;
    readonly restarted: number;
    readonly ticked: number;
    /** Refund deliveries to the executor a stop cut off, delivered again (with a state directory). */
    readonly refunds: number;
  };
  /**
   * The live refunds not settled `refund_due_days − 4` days after their clock started, as the start and then the
   * last sweep read them (docs/returns.md#the-refund-due-alarm): `GET /health` shows them as a warning.
   */
  refundsDueSoon(): readonly RefundDueLine[];
  /** Resolves when every queue but the timers' is empty, no handler runs, and the bus has delivered everything. */
  drained(timeoutMs?: number): Promise<void>;
  /** The process's memory report: RSS, each thread's heap, what the stack keeps by count (docs/local-stack.md). */
  memory(): Promise<MemoryReport>;
  /** Stops the sweep, the pollers (after their batches), then the bus and the emulators; safe to call twice. */
  stop(): Promise<void>;
}
