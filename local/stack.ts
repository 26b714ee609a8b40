// The local stack: the production handlers of functions/ running on the emulators (dynalite,
// fauxqs, the local EventBridge bus) with the settings infra/ deploys. Only endpoints differ from
// AWS: the handlers read `Resource.*` (set here as SST_RESOURCE_* variables), talk through the real
// SDK clients, and are driven by one event-source poller per queue, like Lambda's mappings.
import { randomBytes } from "node:crypto";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { countOpenClaims, createTable, seedOrders } from "../adapters/aws/index.ts";
import { pipelineWaitsFor, stepTimersFromEnv } from "../pipeline/deps.ts";
import { createAuthorizerHandler, createReviewerAuthorizerHandler, singleReviewer } from "../functions/authorizer.ts";
import { createJwtAuthorizer } from "./auth/oidc.ts";
import { createReviewApiHandler } from "../functions/review-api.ts";
import { createBatchHandler } from "../functions/batch.ts";
import { createIntakeApiHandler } from "../functions/intake-api.ts";
import { createLocalAwsClients } from "./local-clients.ts";
import { loadConfig } from "../functions/composition/config-file.ts";
import type { LogLevelName } from "../functions/observability/logger.ts";
import { linkedResources, restrictedReader, sstResources } from "../functions/composition/resources.ts";
import { createSweepHandler } from "../functions/sweep.ts";
import type { RefundDueLine } from "../core/kernel/refund-due.ts";
import { refundsDueNow } from "../pipeline/refund-due.ts";
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
import type { BusEvent } from "./eventbridge/server.ts";
import { drainedAll } from "./poller/poller.ts";
import type { Poller } from "./poller/poller.ts";
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
import { keysDir } from "../adapters/vault/key-files.ts";
import { servedLocalVault } from "./key-store.ts";
import { openingSqsHandler } from "../adapters/vault/sealed-table.ts";
import { ensureOwnerOnlyDir } from "./owner-only.ts";
import type { StateLock } from "./state-lock.ts";
import { InvalidStackOptionError, RefundDeliveryError, StackStartError } from "./errors.ts";
import { createStackRuntime } from "./stack-runtime.ts";
import { asSqsEvent, createQueues, describeQueues, resendJournaled } from "./stack-queues.ts";
import { startHandlerThread } from "./handler-thread.ts";
import type { HandlerThread } from "./handler-thread.ts";
import { orderSourceSettingsFrom } from "../app/order-source.ts";
import { REVIEW_WEBHOOK_RULE, reviewWebhookTarget, reviewWebhookUrlFrom } from "./review-webhook.ts";
import { localOrderSourceSecrets } from "./order-source.ts";
import { localPayments } from "./payment-provider.ts";
import type { LocalHandlers, LocalStack, LocalStackOptions } from "./stack-options.ts";
export type { LocalStack, LocalStackOptions } from "./stack-options.ts";

/** The table the local stack creates (in memory, or kept under the state directory). */
export const LOCAL_TABLE_NAME = "claims-local";

/** Starts the emulators, the table with the config's orders, the five queues with DLQs, the bus rules and the pollers. */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const received = Object.fromEntries(Object.keys(RULE_PATTERNS).map((r) => [r, [] as BusEvent[]])) as Record<
    RuleName,
    BusEvent[]
  >;
  // Local runs are on Node 20 by design (docs/local-stack.md; Lambda runs 22): the SDK's Node 22 notice is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  // Who arms a claim's first step timer: a bad CLAIMS_STEP_TIMERS stops the start, before anything runs.
  const stepTimers = options.stepTimers ?? stepTimersFromEnv(process.env);
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
  // A kept store holds the customer's words only sealed, under key files in <dataDir>/keys (docs/customer-data.md).
  const personalDataKeys =
    options.stateDir !== undefined && options.dataDir !== undefined ? keysDir(options.dataDir) : undefined;
  const vault =
    options.personalDataVault?.(emulators) ??
    (personalDataKeys === undefined ? undefined : servedLocalVault(personalDataKeys));
  const clients = createLocalAwsClients({
    ...(vault === undefined ? {} : { personalData: vault }),
    dynamodb: localClientConfig(emulators.dynamodbEndpoint),
    sqs: localClientConfig(emulators.sqsEndpoint),
    events: localClientConfig(emulators.eventsEndpoint),
  });
  const pollers: Partial<Record<QueueRole, Poller>> = {};
  let handlerThread: HandlerThread | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let dueSoon: RefundDueLine[] = [];
  // Each sweep's refunds near their legal deadline are kept for GET /health (docs/returns.md#the-refund-due-alarm).
  const sweepKeepingRefundsDue =
    (sweep: ReturnType<typeof createSweepHandler>): ReturnType<typeof createSweepHandler> =>
    async () => {
      const result = await sweep();
      dueSoon = result.refundsDue;
      return result;
    };
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
      stepTimers,
      payments: { provider: payments.provider, env: payments.env },
      orderSource,
      ids: options.ids,
    });
    const deps = depsFor();
    // The registry handshake must succeed before anything runs.
    void deps.registry.agents;

    const level =
      options.logLevel ?? (process.env.CLAIMS_LOG_LEVEL?.toUpperCase() as LogLevelName | undefined) ?? "WARN";
    const log = loggerAt(level, options.logFormat);
    const of = (fn: FunctionKey) => {
      const fnDeps = options.wrapDeps ? options.wrapDeps(fn, depsFor(fn)) : depsFor(fn);
      return () => fnDeps;
    };
    const consumers = createQueueConsumers(of, log, queues, vault);
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
      sweep: sweepKeepingRefundsDue(createSweepHandler(of("sweep"), log("sweep"))),
      refundExecutor: openingSqsHandler(
        createRefundExecutorHandler(of("refundExecutor"), log("refundExecutor")),
        vault,
      ),
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
        ...(personalDataKeys === undefined ? {} : { personalDataKeys }),
        ...("set" in options.clock ? { frozenAtMs: options.clock.now() } : {}),
        waits,
        ...(options.llmOutageHoldMs ? { llmOutageHoldMs: options.llmOutageHoldMs } : {}),
        stepTimers,
        logLevel: level,
        ...(options.logFormat ? { logFormat: options.logFormat } : {}),
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
    // The refund-due alarm's lines for GET /health: read at the start, then by each sweep (docs/returns.md).
    dueSoon = await refundsDueNow(deps, options.clock.now());
    const sweepEveryMs = options.sweepEveryMs ?? 300_000;
    if (sweepEveryMs > 0) {
      sweepTimer = setInterval(() => {
        void handlers.sweep().catch((e: unknown) => console.error(`[sweep] ${(e as Error).message}`));
        void redeliverPayments();
        if (options.onSweep)
          void options.onSweep().catch((e: unknown) => console.error(`[sweep] retention: ${(e as Error).message}`));
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
      refundsDueSoon: () => dueSoon,
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
