// `claims serve`'s handler thread: the five queue consumers, their pollers and the refund executor run in a worker thread
// (handler-worker.ts), so their SDK work — most of a claim's CPU — no longer queues behind the HTTP front, the
// intake and the bus on the stack's thread. They are the same handlers, composed from the same pieces
// (consumers.ts), with SDK clients of their own whose requests reach the emulators through the stack's thread
// (dynalite straight over a port into its worker; fauxqs and the bus through the stack's thread, thread-relay.ts,
// so the queue journal still sees every SQS answer first; no network port either way). The model is built in the thread
// from the environment as the stack's is (serve-llm.ts); the thread tells the stack when a call finds it
// unreachable, for GET /health. Test hooks (functions) cannot cross threads: a stack with hooks keeps its
// consumers on its own thread.
import { MessageChannel, Worker } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import type { OrderSourceKind } from "../app/order-source.ts";
import type { PaymentProviderName } from "../app/payment-provider.ts";
import type { QueueRole } from "../app/manifest.ts";
import type { LogLevelName } from "../functions/observability/logger.ts";
import type { LogFormat } from "./consumers.ts";
import type { PipelineWaits, StepTimerMode } from "../pipeline/deps.ts";
import type { ConsumerQueue } from "./consumers.ts";
import { EmulatorStartError, LocalStackError } from "./errors.ts";
import type { Poller } from "./poller/poller.ts";
import { serveRelay } from "./thread-relay.ts";
import { portSourceAt } from "./in-process/handlers.ts";
import type { ThreadMemory } from "./memory.ts";

/** What the thread composes its consumers from: plain values only (they cross to the worker). */
export interface HandlerThreadSetup {
  readonly configPath: string;
  /** The frozen clock's instant (`--now`); absent: the system clock. */
  readonly frozenAtMs?: number;
  readonly waits: PipelineWaits;
  readonly llmOutageHoldMs?: number;
  readonly stepTimers?: StepTimerMode;
  readonly logLevel: LogLevelName;
  /** How the thread's handlers write their logs (default JSON). */
  readonly logFormat?: LogFormat;
  readonly queues: Readonly<Record<QueueRole, ConsumerQueue>>;
  readonly endpoints: { readonly dynamodb: string; readonly sqs: string; readonly events: string };
  readonly payments: { readonly provider: PaymentProviderName; readonly env: Readonly<Record<string, string>> };
  readonly orderSource: OrderSourceKind;
  readonly pollerConcurrency: number;
  /** The key files the table's personal fields are sealed under (a kept store: adapters/vault/sealed-table.ts). */
  readonly personalDataKeys?: string;
}

/** A request to the thread: its pollers' counters, one queue's depth, wait until `roles` drained, pay a refund, or stop receiving. */
type ThreadRequest =
  | { op: "stats" }
  | { op: "depth"; role: QueueRole }
  | { op: "drained"; roles: QueueRole[]; timeoutMs: number }
  | { op: "refund"; event: SQSEvent }
  | { op: "memory" }
  | { op: "stopPollers" };
export type HandlerThreadCall = ThreadRequest & { call: number };

/** A poller's counters and activity as the thread last reported them. */
export type PollerSnapshot = { stats: Poller["stats"]; activity: ReturnType<Poller["activity"]> };

type Ready = { ready: true; pollers: Record<QueueRole, { queueUrl: string; queueArn: string; fifo: boolean }> };
type Answer = { call: number; value?: unknown; error?: string; snapshot?: Record<string, PollerSnapshot> };
type FromThread = Ready | { error: string } | { llmUnreachable: boolean } | Answer | "stopped";

/** The running handler thread. */
export interface HandlerThread {
  /** One poller per queue as seen from the stack's thread (`stats` as of the last answer from the thread). */
  readonly pollers: Readonly<Record<QueueRole, Poller>>;
  /** Whether the thread's last model call found the model unreachable. */
  llmUnreachable(): boolean;
  /** Invokes the thread's refund executor on `event` (the bus's payments rule delivers to it, as its queue does on AWS). */
  refund(event: SQSEvent): Promise<SQSBatchResponse>;
  /** Reads the pollers' counters from the thread (their `stats` until the next answer). */
  refresh(): Promise<void>;
  /** The thread's heap (memory report). */
  memory(): Promise<ThreadMemory>;
  /** Resolves once the `roles`' queues are empty and no batch runs (`drainedAll` in the thread). */
  drained(roles: readonly QueueRole[], timeoutMs: number): Promise<void>;
  /** Stops the pollers (after their batches), then the thread; safe to call twice. The pollers' own `stop` stops only them. */
  stop(): Promise<void>;
}

/** Starts the handler thread; resolves once its pollers receive. */
export async function startHandlerThread(setup: HandlerThreadSetup): Promise<HandlerThread> {
  const { port1, port2 } = new MessageChannel();
  const stopRelay = serveRelay(port1);
  // An emulator nothing observes (dynalite) is reached straight from the thread; the others through the relay.
  const direct: Record<string, MessagePort> = {};
  for (const endpoint of Object.values(setup.endpoints)) {
    const attach = portSourceAt(endpoint);
    if (attach) direct[endpoint] = attach();
  }
  // Compiled (dist/, bin/claims.mjs) the thread runs the compiled handler-worker.ts; from the sources, the .mjs that loads tsx first.
  const script = import.meta.url.endsWith(".js") ? "./handler-worker.js" : "./handler-worker.mjs";
  const worker = new Worker(new URL(script, import.meta.url), {
    workerData: { setup, relay: port2, direct },
    transferList: [port2, ...Object.values(direct)],
    // Of the parent's node flags only the profiler's apply (`--import tsx` and the like are the entry's job).
    execArgv: process.execArgv.filter((flag) => flag.startsWith("--cpu-prof")),
  });
  let unreachable = false;
  let snapshots: Record<string, PollerSnapshot> = {};
  const calls = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextCall = 0;
  let exited: string | undefined;
  let onStopped: ((m: "stopped" | { error: string }) => void) | undefined;
  let running = false;
  const ready = new Promise<Ready>((resolve, reject) => {
    worker.on("message", (m: FromThread) => {
      if (m === "stopped") return onStopped?.(m);
      if ("ready" in m) return resolve(m);
      if ("llmUnreachable" in m) return void (unreachable = m.llmUnreachable);
      if ("call" in m) {
        const waiting = calls.get(m.call);
        calls.delete(m.call);
        if (m.snapshot) snapshots = m.snapshot;
        if (m.error !== undefined) waiting?.reject(new LocalStackError("HANDLER_THREAD", m.error));
        else waiting?.resolve(m.value);
        return;
      }
      if (onStopped) return onStopped(m);
      reject(new EmulatorStartError(`the handler thread did not start: ${m.error}`));
    });
    // After the start, a failure of the thread is said loudly: no claim moves on until `claims serve` restarts (an
    // uncaught exception of a handler on the stack's own thread would have stopped the process).
    worker.once("error", (error) => {
      if (running) console.error(`[handler thread] failed: ${error.stack ?? error.message}`);
      reject(new EmulatorStartError(`the handler thread failed: ${error.message}`, error));
    });
    worker.once("exit", (code) => {
      exited = `it exited (${code})`;
      if (running && onStopped === undefined)
        console.error(`[handler thread] exited (${code}): no claim moves on until claims serve is restarted`);
      reject(new EmulatorStartError(`the handler thread exited (${code}) before it started`));
      for (const c of calls.values()) c.reject(new LocalStackError("HANDLER_THREAD", `the handler thread ${exited}`));
      calls.clear();
      onStopped?.("stopped");
    });
  });
  const call = <T>(request: ThreadRequest): Promise<T> => {
    if (exited !== undefined)
      return Promise.reject(new LocalStackError("HANDLER_THREAD", `the handler thread ${exited}`));
    const id = nextCall++;
    return new Promise<T>((resolve, reject) => {
      calls.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...request, call: id });
    });
  };
  let stopped: Promise<void> | undefined;
  let pollersStopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      if (exited === undefined) {
        const answer = new Promise<"stopped" | { error: string }>((resolve) => (onStopped = resolve));
        worker.postMessage("stop");
        const out = await answer;
        await worker.terminate();
        if (out !== "stopped")
          throw new LocalStackError("HANDLER_THREAD", `the handler thread did not stop: ${out.error}`);
      }
      stopRelay();
      port1.close();
    })());
  const started = await ready.catch(async (error: unknown) => {
    await worker.terminate();
    stopRelay();
    port1.close();
    throw error;
  });
  running = true;
  const drained = async (roles: readonly QueueRole[], timeoutMs: number) => {
    snapshots = await call<Record<string, PollerSnapshot>>({ op: "drained", roles: [...roles], timeoutMs });
  };
  const idle: PollerSnapshot = {
    stats: {
      receiveCalls: 0,
      receivesWithMessages: 0,
      received: 0,
      deleteCalls: 0,
      batches: 0,
      succeeded: 0,
      failed: 0,
      handlerErrors: 0,
      sqsErrors: 0,
      inFlightBatches: 0,
    },
    activity: { busy: false, epoch: 0, stopped: false },
  };
  const proxy = (role: QueueRole): Poller => ({
    ...started.pollers[role],
    get stats() {
      return (snapshots[role] ?? idle).stats;
    },
    // A poller's stop stops every poller of the thread (after their batches); the refund executor still answers the bus.
    stop: () => (pollersStopped ??= exited === undefined ? call<void>({ op: "stopPollers" }) : Promise.resolve()),
    drained: (o) => drained([role], o?.timeoutMs ?? 60_000),
    activity: () => (snapshots[role] ?? idle).activity,
    queueDepth: () => call<number>({ op: "depth", role }),
  });
  const roles = Object.keys(setup.queues) as QueueRole[];
  return {
    pollers: Object.fromEntries(roles.map((r) => [r, proxy(r)])) as Record<QueueRole, Poller>,
    llmUnreachable: () => unreachable,
    refund: (event) => call<SQSBatchResponse>({ op: "refund", event }),
    memory: () => call<ThreadMemory>({ op: "memory" }),
    async refresh() {
      snapshots = await call<Record<string, PollerSnapshot>>({ op: "stats" });
    },
    drained,
    async stop() {
      await stop();
    },
  };
}
