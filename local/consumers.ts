// The queue consumers of the local stack and their pollers, as one piece that runs where the stack puts it: on the
// stack's own thread (`claims batch`, tests with hooks) or in the handler thread of `claims serve`
// (handler-thread.ts). Both compose each function's dependencies here, from its own links as infra/ gives them,
// so the two places run the same handlers with the same settings.
import { consoleLogger } from "./console-logger.ts";
import { randomBytes } from "node:crypto";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { Context } from "aws-lambda";
import type { ClaimsConfig } from "../core/claim/config.ts";
import type { LlmPort } from "../core/llm/index.ts";
import { DEFAULT_PIPELINE_SETTINGS } from "../pipeline/deps.ts";
import type { PipelineDeps, PipelineWaits, StepTimerMode } from "../pipeline/deps.ts";
import type { Clock, IdSource } from "../pipeline/ports.ts";
import { composeDeps } from "../functions/composition/compose.ts";
import type { AwsClients } from "../functions/composition/compose.ts";
import { createLogger } from "../functions/observability/logger.ts";
import type { LogLevelName } from "../functions/observability/logger.ts";
import { linkedResources, restrictedReader, sstResources } from "../functions/composition/resources.ts";
import type { SqsHandler } from "../functions/consumers/sqs-consumer.ts";
import { createIntakeExtractHandler } from "../functions/intake-extract.ts";
import { createKernelHandler } from "../functions/kernel.ts";
import { createOrchestratorHandler } from "../functions/orchestrator.ts";
import { createTimerHandler } from "../functions/timer.ts";
import { createWorkerHandler } from "../functions/worker.ts";
import { eventSourceBatch, FUNCTIONS, QUEUES } from "../app/manifest.ts";
import type { FunctionKey, QueueRole } from "../app/manifest.ts";
import type { OrderSourceKind } from "../app/order-source.ts";
import type { PaymentProviderName } from "../app/payment-provider.ts";
import { startPoller } from "./poller/poller.ts";
import type { Poller } from "./poller/poller.ts";
import { openingSqsHandler } from "../adapters/vault/sealed-table.ts";
import type { PersonalDataVault } from "../pipeline/ports.ts";
import type { PollerError } from "./poller/errors.ts";
import { inProcessPollerTransport } from "./sqs-emulator.ts";
import { lambdaContext } from "./poller/sqs-event.ts";

/** Every queue role, in app/manifest.ts order. */
export const ROLES = Object.keys(QUEUES) as QueueRole[];

/** A queue of the stack as its consumer sees it: its URL and the receives before its DLQ. */
export type ConsumerQueue = { readonly url: string; readonly maxReceives: number };

/** What a function's dependencies are composed from (plain values but the clients, clock, model and ids). */
export interface DepsRecipe {
  readonly clients: AwsClients;
  readonly clock: Clock;
  readonly llm: LlmPort;
  readonly config: ClaimsConfig;
  readonly waits: PipelineWaits;
  readonly llmOutageHoldMs?: number | undefined;
  /** Who arms a claim's first step-deadline timer (absent: CLAIMS_STEP_TIMERS, else `lazy`). */
  readonly stepTimers?: StepTimerMode | undefined;
  /** The payment provider (local/payment-provider.ts) and the variables its handlers get (PAYMENT_PROVIDER, its settings). */
  readonly payments: { readonly provider: PaymentProviderName; readonly env: Readonly<Record<string, string>> };
  readonly orderSource: OrderSourceKind;
  readonly ids?: IdSource | undefined;
}

/**
 * The dependencies of function `fn`, reading only the links infra/ gives it (as `Resource` does on AWS); without
 * `fn`, every link (the stack's own reads and tests).
 */
export function depsComposer(r: DepsRecipe): (fn?: FunctionKey) => PipelineDeps {
  return (fn) =>
    composeDeps({
      clients: r.clients,
      clock: r.clock,
      llm: r.llm,
      policy: r.config,
      settings: {
        ...DEFAULT_PIPELINE_SETTINGS,
        timeouts: r.waits.timeouts,
        ...(r.llmOutageHoldMs ? { llmOutageHoldMs: r.llmOutageHoldMs } : {}),
        ...(r.stepTimers ? { stepTimers: r.stepTimers } : {}),
      },
      env: { ...process.env, ...r.payments.env },
      ...(r.ids ? { ids: r.ids } : {}),
      ...(fn
        ? {
            resources: linkedResources(
              restrictedReader(sstResources, fn, { orderSource: r.orderSource, paymentProvider: r.payments.provider }),
            ),
          }
        : {}),
    });
}

/** How the handlers' logs are written on the local stack: Powertools' JSON, or lines of text (local/console-logger.ts). */
export type LogFormat = "json" | "text";

/** A logger per function at `level`: Powertools' JSON (as on AWS), or lines of text for a console. */
export const loggerAt =
  (level: LogLevelName, format: LogFormat = "json") =>
  (name: string) => ({
    logger: (format === "text"
      ? consoleLogger(`claims-${name}`, level)
      : createLogger(`claims-${name}`, level)) as ReturnType<typeof createLogger>,
  });

/**
 * The five queue consumers (the deployed handlers' factories), each with its function's dependencies from `of`;
 * with a vault, each opens the sealed bodies it is handed (adapters/vault/sealed-table.ts openingSqsHandler).
 */
export function createQueueConsumers(
  of: (fn: FunctionKey) => () => PipelineDeps,
  log: (name: string) => { logger: ReturnType<typeof createLogger> },
  queues: Readonly<Record<QueueRole, ConsumerQueue>>,
  vault?: PersonalDataVault,
): Record<QueueRole, SqsHandler> {
  const opening = (handler: SqsHandler): SqsHandler => openingSqsHandler(handler, vault);
  return {
    crewEvents: opening(createOrchestratorHandler(of("orchestrator"), log("orchestrator"))),
    agentSteps: opening(createWorkerHandler(of("worker"), log("worker"))),
    proposals: opening(
      createKernelHandler(of("kernel"), { ...log("kernel"), maxReceives: queues.proposals.maxReceives }),
    ),
    extraction: opening(
      createIntakeExtractHandler(of("intakeExtract"), {
        ...log("intakeExtract"),
        maxReceives: queues.extraction.maxReceives,
      }),
    ),
    timers: opening(createTimerHandler(of("timer"), log("timer"))),
  };
}

/**
 * Starts one poller per queue, as Lambda's event source mappings (batch sizes and timeouts from app/manifest.ts; an
 * LLM consumer may run as long as its model calls need), filling `into` as they start so a failed start can stop
 * those already running.
 */
export async function startQueuePollers(input: {
  readonly sqs: SQSClient;
  readonly sqsEndpoint: string;
  readonly queues: Readonly<Record<QueueRole, ConsumerQueue>>;
  readonly handlers: Readonly<Record<QueueRole, SqsHandler>>;
  readonly waits: PipelineWaits;
  readonly concurrency: number;
  readonly onError?: ((role: QueueRole, error: PollerError) => void) | undefined;
  readonly into: Partial<Record<QueueRole, Poller>>;
  /** A queue's batching window other than the deployed one (e.g. 0 for a test that wants a timer handled at once). */
  readonly batchingWindowMs?: Partial<Record<QueueRole, number>>;
}): Promise<Record<QueueRole, Poller>> {
  const invocationMs: Partial<Record<QueueRole, number>> = {
    agentSteps: input.waits.workerMs,
    extraction: input.waits.extractionMs,
  };
  for (const role of ROLES) {
    const s = QUEUES[role];
    const timeoutMs = invocationMs[role] ?? FUNCTIONS[s.consumer].timeoutSeconds * 1000;
    // The event source's batching as deployed (app/manifest.ts: the timers gather for a minute, up to 100).
    const batch = eventSourceBatch(role);
    const windowMs = input.batchingWindowMs?.[role] ?? batch.windowSeconds * 1000;
    const transport = inProcessPollerTransport(input.sqsEndpoint);
    const onError = input.onError;
    input.into[role] = await startPoller({
      sqs: input.sqs,
      ...(transport ? { transport } : {}),
      queueUrl: input.queues[role].url,
      handler: input.handlers[role],
      // Without a window Lambda caps a batch at 10.
      batchSize: windowMs >= 1000 ? batch.size : Math.min(batch.size, 10),
      ...(windowMs > 0 ? { maxBatchingWindowMs: windowMs } : {}),
      functionName: s.consumer,
      ...(timeoutMs <= 900_000 ? { timeoutMs } : {}),
      // A windowed queue gathers as many batches at once as Lambda may invoke (its maximum concurrency, 5 for
      // the timers), so timers spread over them as over Lambda's pollers: the fill measured is not flattered.
      concurrency: windowMs > 0 ? Math.max(input.concurrency, s.maxConcurrency) : input.concurrency,
      ...(onError ? { onError: (error: PollerError) => onError(role, error) } : {}),
    });
  }
  return input.into as Record<QueueRole, Poller>;
}

/** A Lambda context for the in-process invocation of `fn`. */
export function invocationContext(fn: FunctionKey): Context {
  const timeoutMs = FUNCTIONS[fn].timeoutSeconds * 1000;
  return lambdaContext({
    functionName: fn,
    region: "us-east-1",
    account: "000000000000",
    requestId: randomBytes(16).toString("hex"),
    deadlineMs: Date.now() + timeoutMs,
    nowMs: () => Date.now(),
  });
}
