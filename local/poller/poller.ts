// Plays Lambda's SQS event source mapping against any SQS endpoint (fauxqs locally) through the
// real @aws-sdk/client-sqs: long-polls, builds an SQSEvent, calls the handler, deletes the
// records that succeeded, and leaves batchItemFailures (or the whole batch when the handler
// throws) to the visibility timeout. Redrive to a DLQ is the queue's own RedrivePolicy.
import { randomUUID } from "node:crypto";
import { DeleteMessageBatchCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import type {
  BatchResultErrorEntry,
  DeleteMessageBatchCommandInput,
  Message,
  ReceiveMessageCommandInput,
  SQSClient,
} from "@aws-sdk/client-sqs";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import {
  DrainTimeoutError,
  HandlerFailedError,
  InvalidBatchResponseError,
  PollerConfigError,
  PollerStoppedError,
  SqsCallError,
} from "./errors.ts";
import type { PollerError } from "./errors.ts";
import { accountOfArn, lambdaContext, toSqsRecord } from "./sqs-event.ts";

/** An SQS-triggered Lambda handler (partial batch responses allowed). */
type SqsBatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

/**
 * How the poller receives and deletes (default: through `sqs`, the SDK client). Lambda's own pollers are not the
 * application's SDK calls: the local stack passes a leaner way to its in-process fauxqs (the same SQS requests).
 */
export type PollerTransport = {
  receive(input: ReceiveMessageCommandInput, signal?: AbortSignal): Promise<Message[]>;
  deleteBatch(input: DeleteMessageBatchCommandInput): Promise<{ readonly Failed?: readonly BatchResultErrorEntry[] }>;
};

/** Options of `startPoller`; the names follow the event source mapping settings. */
export type PollerOptions = {
  readonly sqs: SQSClient;
  /** Receives and deletes (default: `sqs`); `sqs` still reads the queue's attributes. */
  readonly transport?: PollerTransport;
  readonly queueUrl: string;
  readonly handler: SqsBatchHandler;
  /** Records per invocation, 1–10 (default 10); up to 10,000 with a batching window of at least 1 s, as on Lambda. */
  readonly batchSize?: number;
  /**
   * How long to gather a batch before invoking, in ms, from its first record (default 0: invoke with what one
   * receive returns); up to 300,000. Not on FIFO queues, as on Lambda. While it gathers, the poller long-polls.
   */
  readonly maxBatchingWindowMs?: number;
  /** Visibility timeout set on each receive, in s; default: the queue's own. */
  readonly visibilityTimeoutS?: number;
  /** Default: the queue's FifoQueue attribute. */
  readonly fifo?: boolean;
  /** Receive loops, i.e. batches in flight at once (default 2). */
  readonly concurrency?: number;
  /** Long-poll wait per receive, 0–20 s (default 1, so stop() is prompt). */
  readonly waitTimeSeconds?: number;
  /** Name in the Lambda context (default: the queue name). */
  readonly functionName?: string;
  /** Invocation timeout: a handler still running after it fails its batch (default: none enforced). */
  readonly timeoutMs?: number;
  /** Failures of the handler and of SQS calls; default: console.error. */
  readonly onError?: (error: PollerError, records: readonly SQSRecord[]) => void;
};

/** Counters of a poller since it started. */
type PollerStats = {
  readonly receiveCalls: number;
  /** Of those, the receives that returned messages (the ones a message's arrival ends; the rest is idle polling). */
  readonly receivesWithMessages: number;
  /** DeleteMessageBatch calls (at most 10 records each). */
  readonly deleteCalls: number;
  readonly received: number;
  readonly batches: number;
  /** Records the handler succeeded on (deleted, or attempted to). */
  readonly succeeded: number;
  /** Records left to the visibility timeout (reported failures, throws, invalid responses). */
  readonly failed: number;
  readonly handlerErrors: number;
  readonly sqsErrors: number;
  readonly inFlightBatches: number;
};

/** What `drainedAll` needs to know about a poller at one instant. */
type PollerActivity = { readonly busy: boolean; readonly epoch: number; readonly stopped: boolean };

/** Options of `drained` / `drainedAll`. */
type DrainOptions = { readonly timeoutMs?: number; readonly intervalMs?: number };

/** A running poller. */
export type Poller = {
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly fifo: boolean;
  readonly stats: PollerStats;
  /** Stops receiving (aborts the open long poll) and waits for the batches in flight. */
  stop(): Promise<void>;
  /** Resolves when the queue holds nothing (visible, in flight or delayed) and no batch is in flight. */
  drained(options?: DrainOptions): Promise<void>;
  activity(): PollerActivity;
  /** Visible + in-flight + delayed messages, from GetQueueAttributes. */
  queueDepth(): Promise<number>;
};

const DEFAULT_DRAIN_TIMEOUT_MS = 60_000;

/** Starts polling `queueUrl`; fails fast with PollerConfigError for bad options or an unknown queue. */
export async function startPoller(options: PollerOptions): Promise<Poller> {
  const batchSize = options.batchSize ?? 10;
  const concurrency = options.concurrency ?? 2;
  const waitTimeSeconds = options.waitTimeSeconds ?? 1;
  const windowMs = options.maxBatchingWindowMs ?? 0;
  requireInt("concurrency", concurrency, 1, 100);
  requireInt("waitTimeSeconds", waitTimeSeconds, 0, 20);
  requireInt("maxBatchingWindowMs", windowMs, 0, 300_000);
  // Lambda: a batch above 10 needs a batching window of at least 1 s.
  requireInt(
    windowMs >= 1000 ? "batchSize" : "batchSize (without a batching window of 1 s or more)",
    batchSize,
    1,
    windowMs >= 1000 ? 10_000 : 10,
  );
  if (options.visibilityTimeoutS !== undefined) requireInt("visibilityTimeoutS", options.visibilityTimeoutS, 0, 43_200);
  if (options.timeoutMs !== undefined) requireInt("timeoutMs", options.timeoutMs, 1, 900_000);
  if (!options.queueUrl) throw new PollerConfigError("queueUrl is required");

  const { sqs, queueUrl, handler } = options;
  const transport = options.transport ?? sdkTransport(sqs);
  let queueAttributes: Record<string, string>;
  try {
    const out = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["QueueArn", "FifoQueue"] }),
    );
    queueAttributes = out.Attributes ?? {};
  } catch (error) {
    throw new PollerConfigError(`cannot read the attributes of queue ${queueUrl}: ${errorText(error)}`, error);
  }
  const queueArn = queueAttributes.QueueArn;
  if (!queueArn) throw new PollerConfigError(`queue ${queueUrl} did not report a QueueArn`);
  const fifo = options.fifo ?? queueAttributes.FifoQueue === "true";
  if (fifo && windowMs > 0) throw new PollerConfigError(`queue ${queueUrl} is FIFO: it has no batching window`);
  const region = await sqs.config.region();
  const account = accountOfArn(queueArn);
  const functionName =
    options.functionName ??
    queueArn
      .split(":")
      .at(-1)
      ?.replace(/\.fifo$/, "") ??
    "local";
  const onError =
    options.onError ?? ((error: PollerError) => console.error(`[poller ${functionName}] ${error.message}`));

  const stats = {
    receiveCalls: 0,
    receivesWithMessages: 0,
    deleteCalls: 0,
    received: 0,
    batches: 0,
    succeeded: 0,
    failed: 0,
    handlerErrors: 0,
    sqsErrors: 0,
  };
  const stopController = new AbortController();
  let stopping = false;
  let busy = 0;
  let epoch = 0;
  const groupTails = new Map<string, Promise<void>>();

  const report = (error: PollerError, records: readonly SQSRecord[]) => {
    try {
      onError(error, records);
    } catch {
      // An onError that throws must not stop the poller.
    }
  };

  const receive = async (max: number, wait: number, signal?: AbortSignal): Promise<Message[]> => {
    stats.receiveCalls++;
    const messages = await transport.receive(
      {
        QueueUrl: queueUrl,
        // One receive returns at most 10 messages: a larger batch takes several.
        MaxNumberOfMessages: Math.min(10, max),
        WaitTimeSeconds: wait,
        ...(options.visibilityTimeoutS === undefined ? {} : { VisibilityTimeout: options.visibilityTimeoutS }),
        MessageSystemAttributeNames: ["All"],
        MessageAttributeNames: ["All"],
      },
      signal,
    );
    if (messages.length > 0) stats.receivesWithMessages++;
    return messages;
  };

  /** Receives one batch; from the first message on, the poller counts as busy until the batch is done. */
  const receiveBatch = async (): Promise<Message[]> => {
    const first = await receive(batchSize, waitTimeSeconds, stopController.signal);
    if (first.length === 0) return [];
    busy++;
    epoch++;
    const batch = [...first];
    const deadline = Date.now() + windowMs;
    while (windowMs > 0 && batch.length < batchSize && !stopping && Date.now() < deadline) {
      try {
        // Long polls while whole seconds of the window remain (a message's arrival ends one), then short ones.
        const wait = Math.min(20, Math.floor((deadline - Date.now()) / 1000));
        const more = await receive(batchSize - batch.length, wait, wait > 0 ? stopController.signal : undefined);
        if (more.length > 0) batch.push(...more);
        else if (wait === 0) await sleep(Math.min(25, deadline - Date.now()), stopController.signal);
      } catch (error) {
        if (stopping) break;
        stats.sqsErrors++;
        report(
          new SqsCallError(`ReceiveMessage on ${queueUrl} failed while filling a batch: ${errorText(error)}`, error),
          [],
        );
        break;
      }
    }
    stats.received += batch.length;
    return batch;
  };

  const invoke = async (records: SQSRecord[]): Promise<ReadonlySet<string>> => {
    const all = new Set(records.map((r) => r.messageId));
    const requestId = randomUUID();
    const context = lambdaContext({
      functionName,
      region,
      account,
      requestId,
      deadlineMs: Date.now() + (options.timeoutMs ?? 900_000),
      nowMs: () => Date.now(),
    });
    let result: unknown;
    try {
      const call = Promise.resolve().then(() => handler({ Records: records }, context));
      result = options.timeoutMs === undefined ? await call : await withTimeout(call, options.timeoutMs, functionName);
    } catch (error) {
      stats.handlerErrors++;
      report(
        new HandlerFailedError(
          `handler ${functionName} failed on a batch of ${records.length}: ${errorText(error)}`,
          error,
        ),
        records,
      );
      return all;
    }
    const parsed = parseBatchResponse(result, all);
    if (parsed instanceof InvalidBatchResponseError) {
      stats.handlerErrors++;
      report(parsed, records);
      return all;
    }
    return parsed;
  };

  const deleteSucceeded = async (records: SQSRecord[], failed: ReadonlySet<string>) => {
    const done = records.filter((r) => !failed.has(r.messageId));
    for (let i = 0; i < done.length; i += 10) {
      const chunk = done.slice(i, i + 10);
      stats.deleteCalls++;
      try {
        const out = await transport.deleteBatch({
          QueueUrl: queueUrl,
          Entries: chunk.map((r, j) => ({ Id: `m${j}`, ReceiptHandle: r.receiptHandle })),
        });
        if (out.Failed && out.Failed.length > 0) {
          stats.sqsErrors++;
          const ids = out.Failed.map((f) => `${f.Id}: ${f.Code ?? "?"} ${f.Message ?? ""}`).join("; ");
          report(
            new SqsCallError(`DeleteMessageBatch on ${queueUrl} failed for ${out.Failed.length} record(s): ${ids}`),
            chunk,
          );
        }
      } catch (error) {
        stats.sqsErrors++;
        report(new SqsCallError(`DeleteMessageBatch on ${queueUrl} failed: ${errorText(error)}`, error), chunk);
      }
    }
    stats.succeeded += done.length;
    stats.failed += records.length - done.length;
  };

  const processBatch = async (messages: Message[]) => {
    const records = messages.map((m) => toSqsRecord(m, { queueArn, region }));
    // FIFO: never two batches of one message group in flight (the queue's group lock already
    // ensures it on AWS and fauxqs; this keeps the order even if a queue did not).
    const groups = fifo ? [...new Set(records.map((r) => r.attributes.MessageGroupId ?? ""))] : [];
    let release = () => {};
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    const earlier = groups.map((g) => groupTails.get(g)).filter((p): p is Promise<void> => p !== undefined);
    for (const g of groups) groupTails.set(g, done);
    try {
      await Promise.all(earlier);
      stats.batches++;
      const failed = await invoke(records);
      await deleteSucceeded(records, failed);
    } finally {
      release();
      for (const g of groups) if (groupTails.get(g) === done) groupTails.delete(g);
    }
  };

  const runLoop = async () => {
    let failures = 0;
    while (!stopping) {
      let messages: Message[];
      try {
        messages = await receiveBatch();
        failures = 0;
      } catch (error) {
        if (stopping) break;
        failures++;
        stats.sqsErrors++;
        report(new SqsCallError(`ReceiveMessage on ${queueUrl} failed: ${errorText(error)}`, error), []);
        await sleep(Math.min(2_000, 50 * 2 ** failures), stopController.signal);
        continue;
      }
      if (messages.length === 0) continue;
      try {
        await processBatch(messages);
      } finally {
        busy--;
        epoch++;
      }
    }
  };

  const loops = Array.from({ length: concurrency }, () => runLoop());
  let stopped: Promise<void> | undefined;

  const poller: Poller = {
    queueUrl,
    queueArn,
    fifo,
    get stats(): PollerStats {
      return { ...stats, inFlightBatches: busy };
    },
    stop() {
      stopped ??= (async () => {
        stopping = true;
        stopController.abort();
        await Promise.all(loops);
      })();
      return stopped;
    },
    drained: (drainOptions) => drainedAll([poller], drainOptions),
    activity: () => ({ busy: busy > 0, epoch, stopped: stopping }),
    async queueDepth() {
      const out = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: [
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
          ],
        }),
      );
      const a = out.Attributes ?? {};
      return (
        Number(a.ApproximateNumberOfMessages ?? 0) +
        Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
        Number(a.ApproximateNumberOfMessagesDelayed ?? 0)
      );
    },
  };
  return poller;
}

/**
 * Resolves when every poller is idle and every queue is empty in one consistent pass (no batch
 * started or finished meanwhile) — so work that one consumer hands to another queue is waited for.
 */
export async function drainedAll(pollers: readonly Poller[], options: DrainOptions = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
  const intervalMs = options.intervalMs ?? 20;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const before = pollers.map((p) => p.activity());
    const stoppedOne = pollers.find((_p, i) => before[i]?.stopped);
    if (stoppedOne)
      throw new PollerStoppedError(`the poller of ${stoppedOne.queueUrl} is stopped; its queue cannot drain`);
    let depths: number[] = [];
    if (before.every((a) => !a.busy)) {
      try {
        depths = await Promise.all(pollers.map((p) => p.queueDepth()));
      } catch (error) {
        throw new SqsCallError(
          `GetQueueAttributes failed while waiting for queues to drain: ${errorText(error)}`,
          error,
        );
      }
      const after = pollers.map((p) => p.activity());
      const quiet = after.every((a, i) => !a.busy && a.epoch === before[i]?.epoch);
      if (quiet && depths.every((d) => d === 0)) return;
    }
    if (Date.now() >= deadline) {
      const state = pollers
        .map((p, i) => `${p.queueUrl}: depth ${depths[i] ?? "?"}, ${p.stats.inFlightBatches} batch(es) in flight`)
        .join("; ");
      throw new DrainTimeoutError(`queues did not drain within ${timeoutMs} ms (${state})`);
    }
    await sleep(intervalMs);
  }
}

/** Lambda's rules for a partial batch response: returns the failed ids, or why the response is invalid. */
export function parseBatchResponse(
  result: unknown,
  ids: ReadonlySet<string>,
): ReadonlySet<string> | InvalidBatchResponseError {
  if (result === undefined || result === null) return new Set();
  if (typeof result !== "object" || Array.isArray(result)) {
    return new InvalidBatchResponseError(`the handler returned ${JSON.stringify(result)}, not a batch response object`);
  }
  const failures = (result as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined || failures === null) return new Set();
  if (!Array.isArray(failures)) return new InvalidBatchResponseError("batchItemFailures must be an array");
  const failed = new Set<string>();
  for (const item of failures) {
    const id: unknown =
      typeof item === "object" && item !== null ? (item as { itemIdentifier?: unknown }).itemIdentifier : undefined;
    if (typeof id !== "string" || id === "") {
      return new InvalidBatchResponseError(
        `batchItemFailures holds an entry without an itemIdentifier: ${JSON.stringify(item)}`,
      );
    }
    if (!ids.has(id)) return new InvalidBatchResponseError(`batchItemFailures names ${id}, which is not in the batch`);
    failed.add(id);
  }
  return failed;
}

function requireInt(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new PollerConfigError(`${name} must be an integer from ${min} to ${max}, got ${value}`);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function withTimeout<T>(promise: Promise<T>, ms: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Receives and deletes through the SDK client. */
function sdkTransport(sqs: SQSClient): PollerTransport {
  return {
    async receive(input, signal) {
      const out = await sqs.send(new ReceiveMessageCommand(input), signal ? { abortSignal: signal } : {});
      return out.Messages ?? [];
    },
    deleteBatch: (input) => sqs.send(new DeleteMessageBatchCommand(input)),
  };
}
