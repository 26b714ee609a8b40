// The handler thread of `claims serve` (handler-thread.ts starts it): the queue consumers, their pollers and the
// refund executor, composed here from the same pieces as on the stack's thread (consumers.ts), with SDK clients of
// their own: dynalite's straight over a port into its worker (workerData.direct), fauxqs's and the bus's over a
// MessagePort to the stack's thread (workerData.relay, thread-relay.ts). Out on parentPort: { ready, pollers } or
// { error }, { llmUnreachable } when a model call finds its state changed, answers to { call, op } requests, and
// "stopped" after "stop".
import { parentPort, workerData } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import { frozenClock, systemClock } from "../core/crew/index.ts";
import type { LlmPort } from "../core/llm/index.ts";
import { createLocalAwsClients } from "./local-clients.ts";
import { servedLocalVault } from "./key-store.ts";
import { openingSqsHandler } from "../adapters/vault/sealed-table.ts";
import { loadConfig } from "../functions/composition/config-file.ts";
import type { FunctionKey, QueueRole } from "../app/manifest.ts";
import {
  createQueueConsumers,
  depsComposer,
  invocationContext,
  loggerAt,
  ROLES,
  startQueuePollers,
} from "./consumers.ts";
import { createRefundExecutorHandler } from "../functions/refund-executor.ts";
import type { SqsHandler } from "../functions/consumers/sqs-consumer.ts";
import { localClientConfig } from "./emulators.ts";
import type { HandlerThreadCall, HandlerThreadSetup, PollerSnapshot } from "./handler-thread.ts";
import { registerInProcessHandler } from "./in-process/handlers.ts";
import { drainedAll } from "./poller/poller.ts";
import type { Poller } from "./poller/poller.ts";
import { localLlm } from "./serve-llm.ts";
import { relayClient } from "./thread-relay.ts";
import { portClient } from "./worker-channel.ts";
import { threadMemory } from "./memory.ts";

const control = parentPort!;
const setup = workerData.setup as HandlerThreadSetup;
const relay = relayClient(workerData.relay as MessagePort);
const { endpoints } = setup;
const direct = workerData.direct as Record<string, MessagePort>;
const directClients = Object.entries(direct).map(([endpoint, port]) => {
  const client = portClient(port, { name: endpoint === endpoints.dynamodb ? "dynalite" : endpoint });
  registerInProcessHandler(endpoint, client.requestHandler);
  return client;
});
for (const endpoint of [endpoints.dynamodb, endpoints.sqs, endpoints.events])
  if (direct[endpoint] === undefined) registerInProcessHandler(endpoint, relay.handlerFor(endpoint));

const vault = setup.personalDataKeys === undefined ? undefined : servedLocalVault(setup.personalDataKeys);
const clients = createLocalAwsClients({
  ...(vault === undefined ? {} : { personalData: vault }),
  dynamodb: localClientConfig(endpoints.dynamodb),
  sqs: localClientConfig(endpoints.sqs),
  events: localClientConfig(endpoints.events),
});
const pollers: Partial<Record<QueueRole, Poller>> = {};
let refundExecutor: SqsHandler | undefined;

/** The model's port, telling the stack's thread (GET /health) when a call finds it unreachable or back. */
function reporting(port: LlmPort, unreachable: (() => boolean) | undefined): LlmPort {
  if (unreachable === undefined) return port;
  let last = false;
  const report = () => {
    const now = unreachable();
    if (now !== last) control.postMessage({ llmUnreachable: (last = now) });
  };
  return {
    provider: port.provider,
    model: port.model,
    complete: (request) => port.complete(request).finally(report),
  };
}

const snapshot = (): Record<string, PollerSnapshot> =>
  Object.fromEntries(Object.entries(pollers).map(([role, p]) => [role, { stats: p.stats, activity: p.activity() }]));

async function start(): Promise<void> {
  const clock = setup.frozenAtMs === undefined ? systemClock() : frozenClock(setup.frozenAtMs);
  const config = loadConfig(setup.configPath, clock.now());
  const llm = localLlm(config, process.env, 0); // a thread that stays up keeps no call records
  const depsFor = depsComposer({
    clients,
    clock,
    llm: reporting(llm.port, llm.unreachable),
    config,
    waits: setup.waits,
    llmOutageHoldMs: setup.llmOutageHoldMs,
    stepTimers: setup.stepTimers,
    payments: setup.payments,
    orderSource: setup.orderSource,
  });
  const of = (fn: FunctionKey) => {
    const deps = depsFor(fn);
    return () => deps;
  };
  const log = loggerAt(setup.logLevel, setup.logFormat);
  const handlers = createQueueConsumers(of, log, setup.queues, vault);
  refundExecutor = openingSqsHandler(createRefundExecutorHandler(of("refundExecutor"), log("refundExecutor")), vault);
  await startQueuePollers({
    sqs: clients.sqs,
    sqsEndpoint: endpoints.sqs,
    queues: setup.queues,
    handlers,
    waits: setup.waits,
    concurrency: setup.pollerConcurrency,
    into: pollers,
  });
}

async function answer(call: HandlerThreadCall): Promise<unknown> {
  if (call.op === "stats") return snapshot();
  if (call.op === "depth") return pollers[call.role]!.queueDepth();
  if (call.op === "stopPollers") return void (await stopPollers());
  if (call.op === "refund") return refundExecutor!(call.event, invocationContext("refundExecutor"));
  if (call.op === "memory") return threadMemory();
  await drainedAll(
    call.roles.map((r) => pollers[r]!),
    { timeoutMs: call.timeoutMs },
  );
  return snapshot();
}

let stopping: Promise<void> | undefined;
const stopPollers = () => Promise.all(Object.values(pollers).map((p) => p.stop()));
const stop = () =>
  (stopping ??= (async () => {
    await stopPollers();
    clients.dynamo.destroy();
    clients.sqs.destroy();
    clients.events.destroy();
    relay.close("the handler thread stopped");
    for (const c of directClients) c.close("the handler thread stopped");
  })());

control.on("message", (m: "stop" | HandlerThreadCall) => {
  if (m === "stop") {
    void stop().then(
      () => control.postMessage("stopped"),
      (error: unknown) => control.postMessage({ error: (error as Error).message }),
    );
    return;
  }
  answer(m).then(
    (value) => control.postMessage({ call: m.call, value }),
    (error: unknown) => control.postMessage({ call: m.call, error: (error as Error).message, snapshot: snapshot() }),
  );
});

start().then(
  () =>
    control.postMessage({
      ready: true,
      pollers: Object.fromEntries(
        ROLES.map((r) => [
          r,
          { queueUrl: pollers[r]!.queueUrl, queueArn: pollers[r]!.queueArn, fifo: pollers[r]!.fifo },
        ]),
      ),
    }),
  async (error: unknown) => {
    await stop().catch(() => undefined);
    control.postMessage({ error: error instanceof Error ? error.message : String(error) });
  },
);
