import { createHash } from "node:crypto";
import { ReceiveMessageCommand, SendMessageBatchCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { MessageAttributeValue } from "@aws-sdk/client-sqs";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localClientConfig, startEmulators } from "../emulators.ts";
import type { Emulators } from "../emulators.ts";
import { createLocalQueues } from "../resources.ts";
import type { LocalQueue, LocalQueueDef } from "../resources.ts";
import { DrainTimeoutError, HandlerFailedError, InvalidBatchResponseError, PollerConfigError } from "./errors.ts";
import type { PollerError } from "./errors.ts";
import { drainedAll, startPoller } from "./poller.ts";
import type { Poller, PollerOptions } from "./poller.ts";

let emulators: Emulators;
let sqs: SQSClient;
let queueCounter = 0;
const pollers: Poller[] = [];

beforeAll(async () => {
  emulators = await startEmulators();
  sqs = new SQSClient(localClientConfig(emulators.sqsEndpoint));
});

afterAll(async () => {
  await Promise.all(pollers.map((p) => p.stop()));
  sqs.destroy();
  await emulators.stop();
});

async function queue(def: Omit<LocalQueueDef, "name"> = {}): Promise<LocalQueue> {
  const name = `q${++queueCounter}`;
  const created = await createLocalQueues(sqs, [{ visibilityTimeoutS: 1, ...def, name }]);
  return created[name] as LocalQueue;
}

type Outgoing = { body: string; group?: string; attributes?: Record<string, MessageAttributeValue> };

async function send(url: string, messages: readonly Outgoing[]): Promise<void> {
  for (let i = 0; i < messages.length; i += 10) {
    const out = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: messages.slice(i, i + 10).map((m, j) => ({
          Id: `e${j}`,
          MessageBody: m.body,
          ...(m.group === undefined ? {} : { MessageGroupId: m.group, MessageDeduplicationId: m.body }),
          ...(m.attributes === undefined ? {} : { MessageAttributes: m.attributes }),
        })),
      }),
    );
    expect(out.Failed ?? []).toEqual([]);
  }
}

async function start(options: Omit<PollerOptions, "sqs">): Promise<Poller> {
  const poller = await startPoller({ sqs, waitTimeSeconds: 1, ...options });
  pollers.push(poller);
  return poller;
}

async function receiveAll(url: string): Promise<string[]> {
  const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
  return (out.Messages ?? []).map((m) => m.Body ?? "");
}

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((r) => setTimeout(r, 5));
};

const md5 = (s: string) => createHash("md5").update(s).digest("hex");

describe("SQS event-source poller", () => {
  it("hands the handler a faithful SQSEvent and deletes the records it processed", async () => {
    const q = await queue();
    await send(q.url, [
      {
        body: "one",
        attributes: {
          k: { DataType: "String", StringValue: "v" },
          n: { DataType: "Number", StringValue: "42" },
          b: { DataType: "Binary", BinaryValue: new Uint8Array([1, 2, 3]) },
        },
      },
      { body: "two" },
      { body: "three" },
    ]);
    const records: SQSRecord[] = [];
    const contexts: Context[] = [];
    const poller = await start({
      queueUrl: q.url,
      concurrency: 1,
      functionName: "worker",
      handler: async (event, context) => {
        records.push(...event.Records);
        contexts.push(context);
      },
    });
    await poller.drained({ timeoutMs: 10_000 });

    expect(records.map((r) => r.body).sort()).toEqual(["one", "three", "two"]);
    const one = records.find((r) => r.body === "one");
    expect(one).toMatchObject({
      eventSource: "aws:sqs",
      eventSourceARN: q.arn,
      awsRegion: "us-east-1",
      md5OfBody: md5("one"),
      attributes: {
        ApproximateReceiveCount: "1",
        SenderId: expect.any(String),
        SentTimestamp: expect.stringMatching(/^\d+$/),
        ApproximateFirstReceiveTimestamp: expect.stringMatching(/^\d+$/),
      },
      messageAttributes: {
        k: { stringValue: "v", stringListValues: [], binaryListValues: [], dataType: "String" },
        n: { stringValue: "42", stringListValues: [], binaryListValues: [], dataType: "Number" },
        b: { binaryValue: "AQID", stringListValues: [], binaryListValues: [], dataType: "Binary" },
      },
    });
    expect(one?.messageId).toMatch(/\S/);
    expect(one?.receiptHandle).toMatch(/\S/);
    expect(one?.attributes.MessageGroupId).toBeUndefined();
    expect(contexts[0]).toMatchObject({
      functionName: "worker",
      functionVersion: "$LATEST",
      invokedFunctionArn: "arn:aws:lambda:us-east-1:000000000000:function:worker",
    });
    expect(contexts[0]?.getRemainingTimeInMillis()).toBeGreaterThan(0);
    expect(await poller.queueDepth()).toBe(0);
    expect(poller.stats).toMatchObject({ received: 3, succeeded: 3, failed: 0, handlerErrors: 0, inFlightBatches: 0 });
  });

  it("returns reported failures to the queue and processes them after the visibility timeout", async () => {
    const q = await queue();
    await send(
      q.url,
      ["m0", "m1", "m2", "m3"].map((body) => ({ body })),
    );
    const succeeded: Array<[string, string]> = [];
    const poller = await start({
      queueUrl: q.url,
      handler: async (event): Promise<SQSBatchResponse> => {
        const batchItemFailures = [];
        for (const r of event.Records) {
          if ((r.body === "m1" || r.body === "m3") && r.attributes.ApproximateReceiveCount === "1")
            batchItemFailures.push({ itemIdentifier: r.messageId });
          else succeeded.push([r.body, r.attributes.ApproximateReceiveCount]);
        }
        return { batchItemFailures };
      },
    });
    await poller.drained({ timeoutMs: 10_000 });

    expect(succeeded.sort()).toEqual([
      ["m0", "1"],
      ["m1", "2"],
      ["m2", "1"],
      ["m3", "2"],
    ]);
    expect(await receiveAll(q.dlq?.url ?? "")).toEqual([]);
    expect(poller.stats).toMatchObject({ succeeded: 4, failed: 2 });
  });

  it("returns the whole batch when the handler throws", async () => {
    const q = await queue();
    await send(
      q.url,
      ["a", "b", "c"].map((body) => ({ body })),
    );
    const errors: PollerError[] = [];
    const succeeded: Array<[string, string]> = [];
    let calls = 0;
    const poller = await start({
      queueUrl: q.url,
      concurrency: 1,
      onError: (e) => errors.push(e),
      handler: async (event) => {
        calls++;
        if (calls === 1) throw new Error("database unavailable");
        for (const r of event.Records) succeeded.push([r.body, r.attributes.ApproximateReceiveCount]);
      },
    });
    await poller.drained({ timeoutMs: 10_000 });

    expect(succeeded.sort()).toEqual([
      ["a", "2"],
      ["b", "2"],
      ["c", "2"],
    ]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(HandlerFailedError);
    expect(errors[0]?.message).toContain("database unavailable");
  });

  it("treats a response naming a record outside the batch as a failure of the whole batch", async () => {
    const q = await queue();
    await send(q.url, [{ body: "x" }, { body: "y" }]);
    const errors: PollerError[] = [];
    const succeeded: string[] = [];
    let calls = 0;
    const poller = await start({
      queueUrl: q.url,
      concurrency: 1,
      onError: (e) => errors.push(e),
      handler: async (event) => {
        calls++;
        if (calls === 1) return { batchItemFailures: [{ itemIdentifier: "not-in-this-batch" }] };
        for (const r of event.Records) succeeded.push(r.body);
        return { batchItemFailures: [] };
      },
    });
    await poller.drained({ timeoutMs: 10_000 });

    expect(succeeded.sort()).toEqual(["x", "y"]);
    expect(errors.map((e) => e.constructor)).toEqual([InvalidBatchResponseError]);
  });

  it("moves a poison message to the DLQ after maxReceiveCount without blocking the others", async () => {
    const q = await queue({ maxReceiveCount: 2 });
    await send(q.url, [{ body: "ok1" }, { body: "poison" }, { body: "ok2" }]);
    const poisonCounts: string[] = [];
    const succeeded: Array<[string, string]> = [];
    const poller = await start({
      queueUrl: q.url,
      handler: async (event) => {
        const batchItemFailures = [];
        for (const r of event.Records) {
          if (r.body === "poison") {
            poisonCounts.push(r.attributes.ApproximateReceiveCount);
            batchItemFailures.push({ itemIdentifier: r.messageId });
          } else {
            succeeded.push([r.body, r.attributes.ApproximateReceiveCount]);
          }
        }
        return { batchItemFailures };
      },
    });
    await poller.drained({ timeoutMs: 15_000 });

    expect(succeeded.sort()).toEqual([
      ["ok1", "1"],
      ["ok2", "1"],
    ]);
    expect(poisonCounts).toEqual(["1", "2"]);
    expect(await receiveAll(q.dlq?.url ?? "")).toEqual(["poison"]);
  });

  it("keeps FIFO group order while two groups progress, never two batches of one group at once", async () => {
    const q = await queue({ fifo: true });
    const outgoing: Outgoing[] = [];
    for (let i = 1; i <= 5; i++) outgoing.push({ body: `a${i}`, group: "A" }, { body: `b${i}`, group: "B" });
    await send(q.url, outgoing);
    const log: string[] = [];
    const inFlight = new Set<string>();
    const overlaps: string[] = [];
    const poller = await start({
      queueUrl: q.url,
      concurrency: 3,
      handler: async (event: SQSEvent): Promise<SQSBatchResponse> => {
        const groups = [...new Set(event.Records.map((r) => r.attributes.MessageGroupId ?? "?"))];
        for (const g of groups) {
          if (inFlight.has(g)) overlaps.push(g);
          inFlight.add(g);
        }
        await new Promise((r) => setTimeout(r, 2));
        const failedGroups = new Set<string>();
        const batchItemFailures = [];
        for (const r of event.Records) {
          const g = r.attributes.MessageGroupId ?? "?";
          expect(r.attributes.SequenceNumber).toMatch(/^\d+$/);
          expect(r.attributes.MessageDeduplicationId).toBe(r.body);
          if (failedGroups.has(g) || (r.body === "a2" && r.attributes.ApproximateReceiveCount === "1")) {
            failedGroups.add(g);
            batchItemFailures.push({ itemIdentifier: r.messageId });
          } else {
            log.push(r.body);
          }
        }
        for (const g of groups) inFlight.delete(g);
        return { batchItemFailures };
      },
    });
    await poller.drained({ timeoutMs: 15_000 });

    expect(overlaps).toEqual([]);
    expect(log.filter((b) => b.startsWith("a"))).toEqual(["a1", "a2", "a3", "a4", "a5"]);
    expect(log.filter((b) => b.startsWith("b"))).toEqual(["b1", "b2", "b3", "b4", "b5"]);
    // Group B finished while group A waited for a2's visibility timeout.
    expect(log.indexOf("b5")).toBeLessThan(log.indexOf("a2"));
    expect(poller.fifo).toBe(true);
  });

  it("gathers a batch during maxBatchingWindowMs", async () => {
    const q = await queue();
    await send(q.url, [{ body: "first" }]);
    const batches: string[][] = [];
    const poller = await start({
      queueUrl: q.url,
      concurrency: 1,
      batchSize: 3,
      maxBatchingWindowMs: 3_000,
      handler: async (event) => {
        batches.push(event.Records.map((r) => r.body));
      },
    });
    await until(() => poller.stats.receiveCalls >= 2); // the first receive returned; the window is open
    await send(q.url, [{ body: "second" }, { body: "third" }]);
    await poller.drained({ timeoutMs: 10_000 });

    expect(batches.map((b) => [...b].sort())).toEqual([["first", "second", "third"]]);
  });

  it("with a window, fills a batch above 10 over several receives and deletes it 10 at a time, as Lambda does", async () => {
    const q = await queue();
    const bodies = Array.from({ length: 25 }, (_, i) => `t${i}`);
    await send(
      q.url,
      bodies.map((body) => ({ body })),
    );
    const batches: string[][] = [];
    const poller = await start({
      queueUrl: q.url,
      concurrency: 1,
      batchSize: 25,
      maxBatchingWindowMs: 60_000, // the batch fills before the window ends: it is invoked at once
      handler: async (event) => {
        batches.push(event.Records.map((r) => r.body));
        return { batchItemFailures: [{ itemIdentifier: event.Records[0]!.messageId }] };
      },
    });
    await until(() => poller.stats.batches === 1 && poller.stats.inFlightBatches === 0);

    expect(batches.map((b) => [...b].sort())).toEqual([[...bodies].sort()]);
    expect(poller.stats).toMatchObject({ received: 25, succeeded: 24, failed: 1, deleteCalls: 3 });
    expect(poller.stats.receivesWithMessages).toBeGreaterThanOrEqual(3);
    await poller.stop();
  });

  it("stops promptly during a long poll and receives nothing afterwards", async () => {
    const q = await queue();
    const seen: string[] = [];
    const poller = await start({
      queueUrl: q.url,
      waitTimeSeconds: 20,
      concurrency: 2,
      handler: async (event) => {
        seen.push(...event.Records.map((r) => r.body));
      },
    });
    await until(() => poller.stats.receiveCalls >= 2);
    const outcome = await Promise.race([
      poller.stop().then(() => "stopped"),
      new Promise((r) => setTimeout(() => r("still polling"), 10_000)),
    ]);
    expect(outcome).toBe("stopped");
    const calls = poller.stats.receiveCalls;
    await send(q.url, [{ body: "late" }]);
    await new Promise((r) => setTimeout(r, 50));
    expect(poller.stats.receiveCalls).toBe(calls);
    expect(seen).toEqual([]);
    expect(await receiveAll(q.url)).toEqual(["late"]);
  });

  it("lets the batch in flight finish before stop resolves", async () => {
    const q = await queue({ visibilityTimeoutS: 30 });
    await send(q.url, [{ body: "slow" }]);
    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let started = false;
    const poller = await start({
      queueUrl: q.url,
      concurrency: 1,
      handler: async () => {
        started = true;
        await gate;
      },
    });
    await until(() => started);
    let stopped = false;
    const stopping = poller.stop().then(() => {
      stopped = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(await poller.queueDepth()).toBe(0);
  });

  it("waits for work handed from one queue to another with drainedAll", async () => {
    const first = await queue();
    const second = await queue();
    const arrived: string[] = [];
    const forwarder = await start({
      queueUrl: first.url,
      handler: async (event) => {
        await new Promise((r) => setTimeout(r, 20));
        await send(
          second.url,
          event.Records.map((r) => ({ body: `${r.body}!` })),
        );
      },
    });
    const sink = await start({
      queueUrl: second.url,
      handler: async (event) => {
        arrived.push(...event.Records.map((r) => r.body));
      },
    });
    await send(
      first.url,
      ["p", "q", "r"].map((body) => ({ body })),
    );
    await drainedAll([forwarder, sink], { timeoutMs: 10_000 });

    expect(arrived.sort()).toEqual(["p!", "q!", "r!"]);
  });

  it("rejects drained() with DrainTimeoutError when a message keeps failing", async () => {
    const q = await queue({ dlq: false });
    await send(q.url, [{ body: "stuck" }]);
    const poller = await start({
      queueUrl: q.url,
      onError: () => undefined,
      handler: async () => {
        throw new Error("always");
      },
    });
    await expect(poller.drained({ timeoutMs: 300 })).rejects.toBeInstanceOf(DrainTimeoutError);
    await poller.stop();
  });

  it("fails fast, as Lambda does, on a batch above 10 without a window of 1 s, a window on FIFO, and an unknown queue", async () => {
    const q = await queue();
    const handler = async () => undefined;
    await expect(startPoller({ sqs, queueUrl: q.url, handler, batchSize: 11 })).rejects.toBeInstanceOf(
      PollerConfigError,
    );
    await expect(
      startPoller({ sqs, queueUrl: q.url, handler, batchSize: 11, maxBatchingWindowMs: 999 }),
    ).rejects.toThrow("batchSize (without a batching window of 1 s or more) must be an integer from 1 to 10, got 11");
    await expect(
      startPoller({ sqs, queueUrl: q.url, handler, batchSize: 10_001, maxBatchingWindowMs: 1000 }),
    ).rejects.toThrow("batchSize must be an integer from 1 to 10000, got 10001");
    const fifo = await queue({ fifo: true });
    await expect(startPoller({ sqs, queueUrl: fifo.url, handler, maxBatchingWindowMs: 1000 })).rejects.toThrow(
      "is FIFO: it has no batching window",
    );
    await expect(startPoller({ sqs, queueUrl: `${q.url}-missing`, handler })).rejects.toThrow(
      /cannot read the attributes/,
    );
  });
});
