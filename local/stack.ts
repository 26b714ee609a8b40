// The local stack: the production handlers of functions/ running on the emulators (dynalite,
// fauxqs, the local EventBridge bus) with the settings infra/ deploys. Only endpoints differ from
// AWS: the handlers read `Resource.*` (set here as SST_RESOURCE_* variables), talk through the real
// SDK clients, and are driven by one event-source poller per queue, like Lambda's mappings.
import { randomBytes } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { countOpenClaims, createTable, seedOrders } from "../adapters/aws/index.ts";
import type { ClaimsConfig } from "../core/claim/config.ts";
import { pipelineWaitsFor } from "../pipeline/deps.ts";
import type { PipelineDeps, PipelineWaits } from "../pipeline/deps.ts";
import type { Order } from "../core/integrity/index.ts";
import type { LlmPort } from "../core/llm/index.ts";
import type { Clock, IdSource } from "../pipeline/ports.ts";
import { createAuthorizerHandler, createReviewerAuthorizerHandler, singleReviewer } from "../functions/authorizer.ts";
import type { ReviewerCredential } from "../functions/http/bearer.ts";
import { createJwtAuthorizer } from "./auth/oidc.ts";
import type { OidcSettings } from "./auth/oidc.ts";
import type { AuthorizerFn } from "./auth/authorizer.ts";
import { createReviewApiHandler } from "../functions/review-api.ts";
import { createBatchHandler } from "../functions/batch.ts";
import { createIntakeApiHandler } from "../functions/intake-api.ts";
import { createAwsClients } from "../functions/composition/compose.ts";
import { loadConfig } from "../functions/composition/config-file.ts";
import type { AwsClients } from "../functions/composition/compose.ts";
import type { LogLevelName } from "../functions/observability/logger.ts";
import { linkedResources, restrictedReader, sstResources } from "../functions/composition/resources.ts";
import type { SqsHandler } from "../functions/consumers/sqs-consumer.ts";
import { createSweepHandler } from "../functions/sweep.ts";
import { createRefundExecutorHandler } from "../functions/refund-executor.ts";
import { createPaymentWebhookHandler } from "../functions/payment-webhook.ts";
import { redriveOpenClaims } from "../pipeline/timers.ts";
import { BUS_NAME, LINKS, PAYMENT_RULE, QUEUES, RULE_PATTERNS } from "../app/manifest.ts";
import type { FunctionKey, QueueRole, RuleName } from "../app/manifest.ts";
import { localClientConfig, startEmulators } from "./emulators.ts";
import { join } from "node:path";
import { memoryReport } from "./memory.ts";
import { directoryBytes, scheduleTableCompaction } from "./table-compaction.ts";
import { openPaymentDeliveries } from "./payment-deliveries.ts";
import type { TableCompaction } from "./table-compaction.ts";
import type { MemoryReport } from "./memory.ts";
import type { Emulators } from "./emulators.ts";
import type { BusEvent, LocalBus } from "./eventbridge/server.ts";
import { drainedAll } from "./poller/poller.ts";
import type { Poller } from "./poller/poller.ts";
import type { PollerError } from "./poller/errors.ts";
import { createOpenClaimsGate } from "./open-claims-gate.ts";
import {
  createQueueConsumers,
  depsComposer,
  invocationContext,
  loggerAt,
  ROLES,
  startQueuePollers,
} from "./consumers.ts";
import { setSstResourceEnv } from "./resources.ts";
import { lockStateDir } from "./state-lock.ts";
import { ensureOwnerOnlyDir } from "./owner-only.ts";
import type { StateLock } from "./state-lock.ts";
import { InvalidStackOptionError, RefundDeliveryError, StackStartError } from "./errors.ts";
import { createStackRuntime } from "./stack-runtime.ts";
import { asSqsEvent, createQueues, describeQueues, resendJournaled } from "./stack-queues.ts";
import type { StackQueue } from "./stack-queues.ts";
import { startHandlerThread } from "./handler-thread.ts";
import type { HandlerThread } from "./handler-thread.ts";
import { orderSourceSettingsFrom } from "../app/order-source.ts";
import { REVIEW_WEBHOOK_RULE, reviewWebhookTarget, reviewWebhookUrlFrom } from "./review-webhook.ts";
import { localOrderSourceSecrets } from "./order-source.ts";
import { localPayments } from "./payment-provider.ts";
import type { LocalPaymentOptions, LocalPayments } from "./payment-provider.ts";
import type { ClaimsRuntime } from "./runtime.ts";

/** The table the local stack creates (in memory, or kept under the state directory). */
export const LOCAL_TABLE_NAME = "claims-local";

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
  /** How long `runtime.settle` waits for one claim before ending it in NEEDS_REVIEW (default: `waits.claimMs`). */
  readonly settleTimeoutMs?: number;
  /** Run the sweep handler every this many ms, as the 5-minute schedule does on AWS (default 300 000; 0 = never). */
  readonly sweepEveryMs?: number;
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
type LocalHandlers = {
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
  /** Resolves when every queue but the timers' is empty, no handler runs, and the bus has delivered everything. */
  drained(timeoutMs?: number): Promise<void>;
  /** The process's memory report: RSS, each thread's heap, what the stack keeps by count (docs/local-stack.md). */
  memory(): Promise<MemoryReport>;
  /** Stops the sweep, the pollers (after their batches), then the bus and the emulators; safe to call twice. */
  stop(): Promise<void>;
}

/** Starts the emulators, the table with the config's orders, the five queues with DLQs, the bus rules and the pollers. */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const received = Object.fromEntries(Object.keys(RULE_PATTERNS).map((r) => [r, [] as BusEvent[]])) as Record<
    RuleName,
    BusEvent[]
  >;
  // Local runs are on Node 20 by design (docs/local-stack.md; Lambda runs 22): the SDK's Node 22 notice is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  let stateLock: StateLock | undefined;
  if (options.stateDir !== undefined) {
    // The kept store and the run's credentials are owner-only (an existing directory is tightened).
    if (options.dataDir !== undefined) ensureOwnerOnlyDir(options.dataDir);
    ensureOwnerOnlyDir(options.stateDir);
    stateLock = lockStateDir(options.stateDir, "claims serve");
  }
  const emulators = await startEmulators({
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
  }).catch((error: unknown) => {
    stateLock?.release();
    throw error;
  });
  stateLock?.update({ dynamodb: emulators.dynamodbEndpoint });
  const clients = createAwsClients({
    dynamodb: localClientConfig(emulators.dynamodbEndpoint),
    sqs: localClientConfig(emulators.sqsEndpoint),
    events: localClientConfig(emulators.eventsEndpoint),
  });
  const pollers: Partial<Record<QueueRole, Poller>> = {};
  let handlerThread: HandlerThread | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let compaction: TableCompaction | undefined;
  // The refund executor's deliveries, journaled with a state directory (local/payment-deliveries.ts).
  const deliveries =
    options.stateDir !== undefined && options.payments?.executor !== false
      ? openPaymentDeliveries(join(options.stateDir, "payments.jsonl"))
      : undefined;
  let redeliverPayments: () => Promise<void> = async () => undefined;
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      clearInterval(sweepTimer);
      compaction?.stop();
      await Promise.all(Object.values(pollers).map((p) => p.stop()));
      // The handler thread's refund executor finishes the bus's deliveries before the thread ends.
      if (handlerThread) await emulators.bus.settled();
      await handlerThread?.stop();
      await emulators.stop();
      deliveries?.close();
      for (const client of [clients.dynamo, clients.sqs, clients.events]) client.destroy();
      stateLock?.release();
    })());

  try {
    if (
      options.handlerThread &&
      (options.wrapHandler || options.wrapDeps || options.wrapRefundDelivery || options.ids || options.onPollerError)
    )
      throw new InvalidStackOptionError(
        "handlerThread runs the consumers in a worker thread: wrapHandler, wrapDeps, wrapRefundDelivery, ids and onPollerError (functions) cannot go there",
      );
    const config = loadConfig(options.configPath, options.clock.now());
    const reviewWebhookUrl =
      options.reviewWebhookUrl === undefined
        ? reviewWebhookUrlFrom(process.env)
        : options.reviewWebhookUrl || undefined;
    // ORDER_SOURCE=http: the shop's order API, its token from ORDER_API_TOKEN or ORDER_API_TOKEN_FILE (docs/orders.md).
    const orderSource = orderSourceSettingsFrom(process.env).source;
    const orderSourceSecrets = localOrderSourceSecrets(orderSource, process.env);
    const waits =
      options.waits ??
      pipelineWaitsFor(config.llm.timeout_ms, options.queues?.extraction?.maxReceives ?? QUEUES.extraction.maxReceives);
    const raw = new DynamoDBClient(localClientConfig(emulators.dynamodbEndpoint));
    await createTable(raw, LOCAL_TABLE_NAME);
    raw.destroy();
    await seedOrders(clients.dynamo, LOCAL_TABLE_NAME, options.orders ?? config.orders);
    // The LLM consumers' queues hide a message for as long as one invocation may take, derived from the LLM budget.
    const llmQueues = {
      agentSteps: { visibilityTimeoutS: Math.ceil(waits.workerVisibilityMs / 1000), ...options.queues?.agentSteps },
      extraction: { visibilityTimeoutS: Math.ceil(waits.extractionVisibilityMs / 1000), ...options.queues?.extraction },
    };
    const queues = await createQueues(clients.sqs, { ...options.queues, ...llmQueues });
    const resent = emulators.queueJournal ? await resendJournaled(clients.sqs, emulators.queueJournal, queues) : 0;
    const payments = localPayments(options.payments, process.env);
    const apiToken = options.apiToken ?? randomBytes(24).toString("base64url");
    const reviewerToken = options.reviewerToken ?? randomBytes(24).toString("base64url");
    setSstResourceEnv({
      [LINKS.table]: { name: LOCAL_TABLE_NAME },
      [LINKS.bus]: { name: BUS_NAME, arn: `arn:aws:events:us-east-1:000000000000:event-bus/${BUS_NAME}` },
      [LINKS.apiToken]: { value: apiToken },
      [LINKS.reviewerToken]: { value: reviewerToken },
      ...Object.fromEntries(Object.entries(orderSourceSecrets).map(([link, value]) => [link, { value }])),
      [LINKS.llmApiKey]: { value: process.env.LLM_API_KEY || "local-no-key" },
      ...Object.fromEntries(Object.entries(payments.secrets).map(([link, value]) => [link, { value }])),
      ...Object.fromEntries(ROLES.map((role) => [LINKS.queues[role], { url: queues[role].url }])),
    });
    // Each handler reads only the links infra/ gives its function (as `Resource` does on AWS); `deps` sees every
    // link, for the runtime's reads and tests.
    const depsFor = depsComposer({
      clients,
      clock: options.clock,
      llm: options.llm,
      config,
      waits,
      llmOutageHoldMs: options.llmOutageHoldMs,
      payments: { provider: payments.provider, env: payments.env },
      orderSource,
      ids: options.ids,
    });
    const deps = depsFor();
    // The registry handshake must succeed before anything runs.
    void deps.registry.agents;

    const level =
      options.logLevel ?? (process.env.CLAIMS_LOG_LEVEL?.toUpperCase() as LogLevelName | undefined) ?? "WARN";
    const log = loggerAt(level);
    const of = (fn: FunctionKey) => {
      const fnDeps = options.wrapDeps ? options.wrapDeps(fn, depsFor(fn)) : depsFor(fn);
      return () => fnDeps;
    };
    const consumers = createQueueConsumers(of, log, queues);
    const authorizerLinks = linkedResources(restrictedReader(sstResources, "authorizer"));
    const reviewerAuthorizerLinks = linkedResources(restrictedReader(sstResources, "reviewerAuthorizer"));
    const intakeDeps = of("intakeApi");
    const intakeLinks = linkedResources(restrictedReader(sstResources, "intakeApi"));
    const gate =
      options.maxOpenClaims === undefined
        ? undefined
        : createOpenClaimsGate({
            maxOpen: options.maxOpenClaims,
            countOpen: () => countOpenClaims({ client: clients.dynamo, tableName: LOCAL_TABLE_NAME }),
            now: () => Date.now(),
          });
    const handlers: LocalHandlers = {
      ...consumers,
      intakeApi: createIntakeApiHandler(intakeDeps, {
        ...log("intakeApi"),
        ...(gate ? { admit: gate.admit } : {}),
        intakeToken: () => intakeLinks.secret(LINKS.apiToken),
      }),
      authorizer: createAuthorizerHandler(() => authorizerLinks.secret(LINKS.apiToken), log("authorizer")),
      reviewApi: createReviewApiHandler(of("reviewApi"), log("reviewApi")),
      reviewerAuthorizer: options.reviewerOidc
        ? createJwtAuthorizer(options.reviewerOidc)
        : createReviewerAuthorizerHandler(
            async () =>
              (typeof options.reviewers === "function" ? options.reviewers() : options.reviewers) ??
              singleReviewer(await reviewerAuthorizerLinks.secret(LINKS.reviewerToken)),
            log("reviewerAuthorizer"),
          ),
      sweep: createSweepHandler(of("sweep"), log("sweep")),
      refundExecutor: createRefundExecutorHandler(of("refundExecutor"), log("refundExecutor")),
      paymentWebhook: payments.webhook
        ? createPaymentWebhookHandler(of("paymentWebhook"), log("paymentWebhook"))
        : undefined,
      batch: createBatchHandler(of("batch"), {
        ...log("batch"),
        stack: "local",
        env: { ...process.env, CLAIMS_CONFIG_PATH: options.configPath },
      }),
    };

    for (const rule of Object.keys(RULE_PATTERNS) as RuleName[]) {
      emulators.bus.addTarget(
        rule,
        (event) => {
          if (options.recordBusEvents ?? true) received[rule].push(event);
          options.onBusEvent?.(rule, event);
        },
        { id: `local-${rule}` },
      );
    }
    // CLAIMS_REVIEW_WEBHOOK_URL: every ReviewOpened POSTed there, locally (docs/reviews.md#the-desk).
    if (reviewWebhookUrl) {
      emulators.bus.putRule(REVIEW_WEBHOOK_RULE.name, REVIEW_WEBHOOK_RULE.pattern, BUS_NAME);
      emulators.bus.addTarget(REVIEW_WEBHOOK_RULE.name, reviewWebhookTarget(reviewWebhookUrl), {
        id: "local-review-webhook",
      });
    }
    // The payments rule delivers RefundExecuted (not a simulation's) to the refund executor, as its queue does on
    // AWS: a failed message is a failed delivery, retried by the bus and then dead-lettered (the local DLQ).
    // One delivery attempt of a RefundExecuted to the refund executor (as an SQS batch of one); journaled done once it
    // took it. The bus retries a failed attempt, then the sweep and the next start deliver what is still due.
    const deliverRefund = async (event: BusEvent): Promise<void> => {
      const attempt = async () => {
        const delivery = () =>
          handlerThread
            ? handlerThread.refund(asSqsEvent(event))
            : handlers.refundExecutor(asSqsEvent(event), invocationContext("refundExecutor"));
        const out = options.wrapRefundDelivery ? await options.wrapRefundDelivery(delivery) : await delivery();
        if (out.batchItemFailures.length > 0)
          throw new RefundDeliveryError(`the refund executor did not settle ${String(event.id)}; the bus retries it`);
        deliveries?.done(event.id);
      };
      await (deliveries ? deliveries.track(event.id, attempt) : attempt());
    };
    redeliverPayments = async () => {
      for (const event of deliveries?.redeliverable(performance.now()) ?? [])
        await deliverRefund(event).catch(() => undefined);
    };
    if (options.payments?.executor !== false) {
      emulators.bus.putRule(PAYMENT_RULE.name, PAYMENT_RULE.pattern, BUS_NAME);
      emulators.bus.addTarget(
        PAYMENT_RULE.name,
        deliverRefund,
        // With a state directory the delivery is journaled before PutEvents answers: durable like the executor's queue.
        { id: "local-refund-executor", ...(deliveries ? { onMatched: (event) => deliveries!.due(event) } : {}) },
      );
    }
    const wrap = options.wrapHandler;
    // The stack's own consumers above stay unused with a handler thread: its consumers are the thread's.
    if (options.handlerThread) {
      handlerThread = await startHandlerThread({
        configPath: options.configPath,
        ...("set" in options.clock ? { frozenAtMs: options.clock.now() } : {}),
        waits,
        ...(options.llmOutageHoldMs ? { llmOutageHoldMs: options.llmOutageHoldMs } : {}),
        logLevel: level,
        queues,
        endpoints: {
          dynamodb: emulators.dynamodbEndpoint,
          sqs: emulators.sqsEndpoint,
          events: emulators.eventsEndpoint,
        },
        payments: { provider: payments.provider, env: payments.env },
        orderSource,
        pollerConcurrency: options.pollerConcurrency ?? 2,
      });
      Object.assign(pollers, handlerThread.pollers);
    } else
      await startQueuePollers({
        sqs: clients.sqs,
        sqsEndpoint: emulators.sqsEndpoint,
        queues,
        handlers: wrap
          ? (Object.fromEntries(ROLES.map((r) => [r, wrap(r, consumers[r])])) as typeof consumers)
          : consumers,
        waits,
        concurrency: options.pollerConcurrency ?? 2,
        onError: options.onPollerError,
        into: pollers,
        batchingWindowMs: Object.fromEntries(
          ROLES.flatMap((r) => {
            const windowMs = options.queues?.[r]?.batchingWindowMs;
            return windowMs === undefined ? [] : [[r, windowMs]];
          }),
        ) as Partial<Record<QueueRole, number>>,
      });
    const started = pollers as Record<QueueRole, Poller>;
    // A restart: every claim that is not final is nudged once, whatever the journal held (the sweep's job, done now).
    const redriven =
      options.stateDir === undefined ? { restarted: 0, ticked: 0 } : await redriveOpenClaims(deps, { pageSize: 100 });
    // Refunds whose delivery to the executor a stop cut off (journaled due, never done) are delivered again now.
    const refundsDue = deliveries?.redeliverable(performance.now()).length ?? 0;
    if (refundsDue > 0) void redeliverPayments();
    const sweepEveryMs = options.sweepEveryMs ?? 300_000;
    if (sweepEveryMs > 0) {
      sweepTimer = setInterval(() => {
        void handlers.sweep().catch((e: unknown) => console.error(`[sweep] ${(e as Error).message}`));
        void redeliverPayments();
      }, sweepEveryMs);
      sweepTimer.unref();
    }
    if (options.stateDir !== undefined)
      compaction = scheduleTableCompaction({
        dir: join(options.stateDir, "dynamodb"),
        compact: () => emulators.compactTable(),
        everyMs: options.compactCheckEveryMs ?? 60_000,
      });
    const drained = async (timeoutMs = 60_000) => {
      const roles = ROLES.filter((r) => r !== "timers");
      if (handlerThread) await handlerThread.drained(roles, timeoutMs);
      else
        await drainedAll(
          roles.map((r) => started[r]),
          { timeoutMs },
        );
      await emulators.bus.settled();
    };
    const diagnose = async () => {
      await handlerThread?.refresh();
      return describeQueues(clients.sqs, queues, started);
    };
    const runtime = createStackRuntime({
      deps,
      intake: intakeDeps(),
      drained,
      stop,
      diagnose,
      settleTimeoutMs: options.settleTimeoutMs ?? waits.claimMs,
    });
    const recovered = { messages: resent, ...redriven, refunds: refundsDue };
    return {
      runtime,
      deps,
      config,
      handlers,
      pollers: started,
      queues,
      bus: { local: emulators.bus, received },
      emulators,
      clients,
      payments,
      apiToken,
      reviewerToken,
      stateLock,
      handlerThread,
      recovered,
      drained,
      async memory() {
        const [emulatorThreads, handlers] = await Promise.all([
          emulators.memory(),
          handlerThread?.memory().catch(() => undefined),
        ]);
        return memoryReport(
          { ...emulatorThreads, ...(handlerThread ? { handlers } : {}) },
          {
            ...(emulators.queueJournal ? { journal_live: emulators.queueJournal.liveCount() } : {}),
            bus_received: Object.values(received).reduce((n, list) => n + list.length, 0),
            bus_dead_letters: emulators.bus.deadLetters().length,
            ...(deliveries ? { refunds_due: deliveries.dueCount() } : {}),
            ...(compaction
              ? {
                  table_compactions: compaction.stats().compactions,
                  table_mb: Math.round(directoryBytes(join(options.stateDir!, "dynamodb")) / 1e5) / 10,
                }
              : {}),
          },
        );
      },
      stop,
    };
  } catch (error) {
    await stop().catch(() => undefined);
    throw new StackStartError(`the local stack did not start: ${(error as Error).message}`, error);
  }
}
