// The usage recorder's parts: DynamoDB item sizes and entities, gsi1 write units, SQS and EventBridge
// billing sizes, the per-claim summary, and the recorder on a real SDK client against dynalite, with
// the log lines it attributes to invocations (no timing).
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { useEmulatedAws } from "../../adapters/aws/emulators.test-kit.ts";
import { createLogger } from "../../functions/observability/logger.ts";
import {
  attributeValueSize,
  consumedUnits,
  createUsageRecorder,
  entityOf,
  entityOfRequest,
  eventEntryBytes,
  gsiWriteUnits,
  readUnits,
  isHandlerLogLine,
  itemSize,
  sqsChunks,
  sqsPayloadBytes,
  summarise,
  updateClauses,
} from "./usage.ts";
import type { CallRecord, InvocationRecord } from "./usage.ts";

describe("DynamoDB sizes", () => {
  it.each([
    ["a string: its UTF-8 bytes", "héllo", 6],
    ["a number: 1 byte per two significant digits + 1", 12345, 4],
    ["a number: trailing zeros are not significant", 1200, 2],
    ["zero", 0, 2],
    ["a boolean", true, 1],
    ["null", null, 1],
    ["a list: 3 + 1 per element + elements", [1, "ab"], 3 + (1 + 2) + (1 + 2)],
    ["a map: 3 + 1 per entry + names + values", { a: "x", bc: false }, 3 + (1 + 1 + 1) + (1 + 2 + 1)],
  ])("%s", (_what, value, expected) => {
    expect(attributeValueSize(value)).toBe(expected);
  });

  it("sizes an item as names plus values, without undefined attributes", () => {
    expect(itemSize({ pk: "CLAIM#1", n: 12345, b: true, gone: undefined })).toBe(2 + 7 + 1 + 4 + 1 + 1);
  });
});

describe("entityOf", () => {
  it.each([
    ["CLAIM#c1", "META", "claim"],
    ["CLAIM#c1", "SESSION", "session"],
    ["CLAIM#c1", "SESSION#CHUNK#3#abcd#0001", "session"],
    ["IDEM#k", "IDEM", "idempotency"],
    ["VERDICT#v", "VERDICT", "verdict"],
    ["DFID#d", "AUDIT#2026#x", "audit"],
    ["DFID#d", "AUDIT#~SESSION#0000000002", "session"],
    ["DFID#d", "AUDIT#~SESSION$DONE", "session"],
    ["SIM#s", undefined, "audit"],
    ["ORDER#o", "LEDGER", "ledger"],
    ["ORDER#o", "ORDER", "order"],
    ["STATUS#RUNNING", undefined, "claim"],
    ["ORDERS", undefined, "order"],
    ["WHAT#x", "y", "other"],
  ])("%s / %s is %s", (pk, sk, entity) => {
    expect(entityOf(pk, sk)).toBe(entity);
  });

  it("finds the entity of queries and batch writes from their values", () => {
    expect(
      entityOfRequest("Query", { ExpressionAttributeValues: { ":pk": "CLAIM#c1", ":prefix": "SESSION#CHUNK#3#" } }),
    ).toBe("session");
    expect(
      entityOfRequest("Query", {
        IndexName: "gsi1",
        ExpressionAttributeValues: { ":p": "STATUS#RUNNING", ":before": "2026" },
      }),
    ).toBe("claim");
    expect(entityOfRequest("Query", { ExpressionAttributeValues: { ":pk": "DFID#d" } })).toBe("audit");
    expect(
      entityOfRequest("BatchWriteItem", {
        RequestItems: { t: [{ PutRequest: { Item: { pk: "CLAIM#c", sk: "SESSION#CHUNK#1#a#0000" } } }] },
      }),
    ).toBe("session");
    expect(entityOfRequest("UpdateItem", { Key: { pk: "ORDER#o", sk: "LEDGER" } })).toBe("ledger");
  });
});

describe("read units", () => {
  it.each([
    ["an empty strongly consistent Query bills one unit", "Query", { ConsistentRead: true }, 0, 1],
    ["an empty eventually consistent Query bills half a unit", "Query", {}, 0, 0.5],
    ["a GetItem of a missing item bills the minimum", "GetItem", { ConsistentRead: true }, 0, 1],
    ["a read that finds more is billed as reported", "Query", { ConsistentRead: true }, 3, 3],
    ["a BatchGetItem is taken as reported", "BatchGetItem", {}, 0, 0],
  ])("%s", (_name, op, input, reported, expected) => {
    expect(readUnits(op, input, reported)).toBe(expected);
  });
});

describe("gsi1 write units", () => {
  const big = "x".repeat(1500);
  it("splits an update expression into its clauses", () => {
    expect(updateClauses("SET a = :a, gsi1pk = :g REMOVE gsi1sk ADD n :one")).toEqual({
      SET: "a = :a, gsi1pk = :g",
      REMOVE: "gsi1sk",
      ADD: "n :one",
    });
  });

  it.each([
    [
      "a put of an indexed item writes the index once (2 KB item: 2 WRU)",
      "PutItem",
      { Item: { pk: "CLAIM#c", gsi1pk: "STATUS#RECEIVED", big } },
      {},
      2,
    ],
    ["a put of an item outside the index writes nothing there", "PutItem", { Item: { pk: "DFID#d", big } }, {}, 0],
    [
      "an update that moves the index key deletes and puts",
      "UpdateItem",
      { UpdateExpression: "SET #s = :s, gsi1pk = :g, gsi1sk = :k" },
      { Attributes: { pk: "CLAIM#c", gsi1pk: "STATUS#RUNNING" } },
      2,
    ],
    [
      "an update that moves the index key through a name placeholder deletes and puts (the claim made final)",
      "UpdateItem",
      {
        UpdateExpression: "SET #f0 = :f0, #gpk = :gpk",
        ExpressionAttributeNames: { "#f0": "status", "#gpk": "gsi1pk" },
      },
      { Attributes: { pk: "CLAIM#c", gsi1pk: "DONE#3" } },
      2,
    ],
    [
      "an update that removes the index key deletes once",
      "UpdateItem",
      { UpdateExpression: "SET #s = :s REMOVE gsi1pk, gsi1sk" },
      { Attributes: { pk: "CLAIM#c" } },
      1,
    ],
    [
      "an update of an indexed item that keeps its key rewrites the entry",
      "UpdateItem",
      { UpdateExpression: "SET proposal = :p" },
      { Attributes: { pk: "CLAIM#c", gsi1pk: "STATUS#RUNNING", big } },
      2,
    ],
    [
      "an update of an unindexed item writes nothing there",
      "UpdateItem",
      { UpdateExpression: "SET published = :t" },
      {},
      0,
    ],
    ["a delete writes nothing there (no indexed item is deleted)", "DeleteItem", { Key: { pk: "CLAIM#c" } }, {}, 0],
  ])("%s", (_what, op, input, output, expected) => {
    expect(gsiWriteUnits(op, input, output)).toBe(expected);
  });

  it("reads consumed capacity from one object or a batch list", () => {
    expect(consumedUnits({ ConsumedCapacity: { CapacityUnits: 3, Table: { CapacityUnits: 3 } } })).toBe(3);
    expect(consumedUnits({ ConsumedCapacity: [{ CapacityUnits: 2 }, { CapacityUnits: 1.5 }] })).toBe(3.5);
    expect(consumedUnits({})).toBe(0);
  });
});

describe("SQS and EventBridge billing sizes", () => {
  it("counts bodies and message attributes of a send", () => {
    expect(
      sqsPayloadBytes({ MessageBody: "abc", MessageAttributes: { k: { DataType: "String", StringValue: "v" } } }),
    ).toEqual({ messages: 1, bytes: 3 + 1 + 6 + 1 });
    expect(sqsPayloadBytes({ Entries: [{ MessageBody: "ab" }, { MessageBody: "cde" }] })).toEqual({
      messages: 2,
      bytes: 5,
    });
  });

  it.each([
    [0, 1],
    [65_536, 1],
    [65_537, 2],
    [262_144, 4],
  ])("a %d-byte request is billed as %d SQS requests", (bytes, chunks) => {
    expect(sqsChunks(bytes)).toBe(chunks);
  });

  it("sizes a PutEvents entry from Source, DetailType, Detail, Resources and Time", () => {
    expect(
      eventEntryBytes({
        Source: "claims.kernel",
        DetailType: "ClaimVerdict",
        Detail: '{"a":1}',
        Resources: ["r1"],
        Time: new Date(0),
      }),
    ).toBe(13 + 12 + 7 + 2 + 14);
    expect(eventEntryBytes({ Source: "s", Detail: "{}" })).toBe(3);
  });
});

describe("summarise", () => {
  const calls: CallRecord[] = [
    { caller: "orchestrator", service: "DynamoDB", operation: "GetItem", entity: "session", rru: 1 },
    { caller: "orchestrator", service: "DynamoDB", operation: "PutItem", entity: "session", wru: 4, gsiWru: 0 },
    { caller: "orchestrator", service: "DynamoDB", operation: "UpdateItem", entity: "claim", wru: 1, gsiWru: 2 },
    {
      caller: "kernel",
      service: "DynamoDB",
      operation: "PutItem",
      entity: "verdict",
      wru: 1,
      conditionalFailure: true,
      error: "ConditionalCheckFailedException",
    },
    {
      caller: "orchestrator",
      service: "SQS",
      operation: "SendMessageBatch",
      queue: "agentSteps",
      messages: 2,
      bytes: 4000,
      chunks: 1,
    },
    { caller: "kernel", service: "EventBridge", operation: "PutEvents", entries: 2, chunks: 2 },
    { caller: "outside", service: "SQS", operation: "ReceiveMessage", messages: 1 },
    {
      caller: "timer",
      tag: "tick",
      service: "SQS",
      operation: "SendMessageBatch",
      queue: "crewEvents",
      messages: 1,
      chunks: 1,
    },
    { caller: "intakeApi", tag: "poll", service: "DynamoDB", operation: "GetItem", entity: "claim", rru: 0.5 },
  ];
  const invocations: InvocationRecord[] = [
    {
      fn: "orchestrator",
      records: 3,
      ms: 30,
      sdkMs: 20,
      cpuMs: 8,
      calls: { "DynamoDB.GetItem": 1, "DynamoDB.PutItem": 1 },
      logLines: 3,
      logBytes: 600,
      successLines: 2,
      successBytes: 420,
      metricLines: 2,
      metricBytes: 800,
    },
    {
      fn: "worker",
      records: 1,
      ms: 10,
      sdkMs: 10,
      cpuMs: 0,
      calls: { "SQS.SendMessage": 1 },
      logLines: 1,
      logBytes: 250,
      successLines: 1,
      successBytes: 250,
      metricLines: 0,
      metricBytes: 0,
    },
    {
      fn: "timer",
      tag: "tick",
      records: 2,
      ms: 5,
      sdkMs: 4,
      cpuMs: 1,
      calls: { "SQS.SendMessageBatch": 1 },
      logLines: 2,
      logBytes: 400,
      successLines: 0,
      successBytes: 0,
      metricLines: 0,
      metricBytes: 0,
    },
    {
      fn: "intakeApi",
      tag: "poll",
      records: 1,
      ms: 4,
      sdkMs: 3,
      cpuMs: 1,
      calls: { "DynamoDB.GetItem": 1 },
      logLines: 1,
      logBytes: 200,
      successLines: 1,
      successBytes: 200,
      metricLines: 0,
      metricBytes: 0,
    },
  ];
  const data = { calls, invocations, busDeliveries: { verdicts: 2 }, apiRequests: 2 };

  it("averages the handlers' requests over the claims, leaving out pollers, timer ticks and GETs", () => {
    const p = summarise("structured", 2, data);
    expect(p.requests).toEqual({
      DynamoDB: { GetItem: 0.5, PutItem: 1, UpdateItem: 0.5 },
      SQS: { SendMessageBatch: 0.5 },
      EventBridge: { PutEvents: 0.5 },
    });
    expect(p.dynamo.session).toEqual({ reads: 0.5, writes: 0.5, rru: 0.5, wru: 2, gsiWru: 0, conditionalFailures: 0 });
    expect(p.dynamo.claim?.gsiWru).toBe(1);
    expect(p.dynamo.verdict?.conditionalFailures).toBe(0.5);
    expect(p.sqsSends).toEqual({ agentSteps: { requests: 0.5, chunks: 0.5, messages: 1 } });
    expect(p.events).toEqual({ requests: 0.5, entries: 1, chunks: 1 });
    expect(p.busDeliveries).toEqual({ verdicts: 1 });
    expect(p.apiRequests).toBe(1);
    expect(Object.keys(p.invocations).sort()).toEqual(["orchestrator", "worker"]);
    expect(p.invocations.orchestrator).toEqual({
      invocations: 0.5,
      records: 1.5,
      handlerMs: 15,
      sdkMs: 10,
      cpuMs: 4,
      calls: { "DynamoDB.GetItem": 0.5, "DynamoDB.PutItem": 0.5 },
      llmCalls: 0,
      logLines: 1.5,
      logBytes: 300,
      successLines: 1,
      successBytes: 210,
      metricLines: 1,
      metricBytes: 400,
    });
    expect(p.invocations.worker?.llmCalls).toBe(0.5);
  });

  it("keeps only the timer ticks when asked for the timer path", () => {
    const p = summarise("structured", 2, data, "tick");
    expect(p.requests).toEqual({ SQS: { SendMessageBatch: 0.5 } });
    expect(Object.keys(p.invocations)).toEqual(["timer"]);
    expect(p.apiRequests).toBe(0);
    expect(p.busDeliveries).toEqual({});
    expect(p.invocations.timer).toMatchObject({ logLines: 1, logBytes: 200 });
  });

  it("keeps only the GETs when asked for the poll path, per GET", () => {
    const p = summarise("structured", 1, { ...data, apiRequests: 1 }, "poll");
    expect(p.requests).toEqual({ DynamoDB: { GetItem: 1 } });
    expect(p.dynamo.claim).toMatchObject({ reads: 1, rru: 0.5 });
    expect(p.apiRequests).toBe(1);
    expect(p.invocations.intakeApi).toMatchObject({ invocations: 1, logLines: 1, logBytes: 200 });
  });

  it("refuses to average over no claims", () => {
    expect(() => summarise("structured", 0, data)).toThrow(/claims must be > 0/);
  });
});

describe("createUsageRecorder on a real client", () => {
  const aws = useEmulatedAws();

  it("attributes requests to the invocation they ran in and reads capacity by entity", async () => {
    const table = await aws.newTable();
    const recorder = createUsageRecorder(() => undefined);
    const detach = recorder.attach(aws.doc as never);
    try {
      const big = "x".repeat(2500);
      await recorder.runAs("kernel", 1, async () => {
        await aws.doc.send(new PutCommand({ TableName: table, Item: { pk: "VERDICT#k", sk: "VERDICT", big } }));
        await aws.doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { pk: "VERDICT#k", sk: "VERDICT" },
            UpdateExpression: "SET published = :t",
            ExpressionAttributeValues: { ":t": true },
          }),
        );
        await expect(
          aws.doc.send(
            new PutCommand({
              TableName: table,
              Item: { pk: "VERDICT#k", sk: "VERDICT" },
              ConditionExpression: "attribute_not_exists(pk)",
            }),
          ),
        ).rejects.toThrow();
      });
      const got = await aws.doc.send(
        new GetCommand({ TableName: table, Key: { pk: "VERDICT#k", sk: "VERDICT" }, ConsistentRead: true }),
      );
      expect(got.Item?.published).toBe(true); // the injected ReturnConsumedCapacity changes nothing else
      const { calls, invocations } = recorder.take();
      expect(calls.map((c) => [c.caller, c.operation, c.entity])).toEqual([
        ["kernel", "PutItem", "verdict"],
        ["kernel", "UpdateItem", "verdict"],
        ["kernel", "PutItem", "verdict"],
        ["outside", "GetItem", "verdict"],
      ]);
      expect(calls[0]?.wru).toBe(3); // ~2.5 KB
      expect(calls[1]?.wru).toBe(3); // an update bills the whole item
      expect(calls[2]).toMatchObject({ conditionalFailure: true, error: "ConditionalCheckFailedException", wru: 1 });
      expect(calls[3]?.rru).toBe(1);
      expect(invocations).toHaveLength(1);
      expect(invocations[0]).toMatchObject({
        fn: "kernel",
        records: 1,
        calls: { "DynamoDB.PutItem": 2, "DynamoDB.UpdateItem": 1 },
      });
      expect(invocations[0]!.sdkMs).toBeGreaterThan(0);
      expect(invocations[0]!.sdkMs).toBeLessThanOrEqual(invocations[0]!.ms);
      expect(invocations[0]!.cpuMs).toBeGreaterThanOrEqual(0);
    } finally {
      detach();
    }
  });
});

describe("own CPU time of an invocation", () => {
  const aws = useEmulatedAws();

  it("counts the CPU spent outside SDK calls, not the emulator's work during them", async () => {
    const table = await aws.newTable();
    const recorder = createUsageRecorder(() => undefined);
    const detach = recorder.attach(aws.doc as never);
    const get = () => aws.doc.send(new GetCommand({ TableName: table, Key: { pk: "CLAIM#c", sk: "META" } }));
    const burn = (ms: number) => {
      const until = process.cpuUsage().user + process.cpuUsage().system + ms * 1000;
      while (process.cpuUsage().user + process.cpuUsage().system < until) {
        /* spin */
      }
    };
    try {
      await recorder.runAs("kernel", 1, async () => {
        burn(20);
        await get();
      });
      await recorder.runAs("kernel", 1, get);
    } finally {
      detach();
    }
    const [busy, idle] = recorder.take().invocations;
    expect(busy!.cpuMs).toBeGreaterThanOrEqual(20);
    expect(idle!.cpuMs).toBeLessThan(busy!.cpuMs);
  });
});

describe("log capture", () => {
  it.each([
    ['{"level":"INFO","message":"message handled","service":"claims-worker","timestamp":"t"}', true],
    ['{"level":"INFO","message":"x","service":"other"}', false],
    ['{"message":"no level","service":"claims-kernel"}', false],
    ["bench: wrote bench/out/latest.md", false],
    ['{"service":"claims-worker", broken', false],
  ])("%s is a handler log line: %s", (line, expected) => {
    expect(isHandlerLogLine(line)).toBe(expected);
  });

  it("counts a Powertools logger's lines against the invocation that wrote them and keeps them off the terminal", async () => {
    const recorder = createUsageRecorder(() => undefined);
    const logger = createLogger("claims-kernel", "INFO");
    const passedThrough: string[] = [];
    const realWrite = process.stdout.write;
    process.stdout.write = ((chunk: unknown) => (
      passedThrough.push(String(chunk)), true
    )) as typeof process.stdout.write;
    const restore = recorder.captureLogs();
    try {
      await recorder.runAs("kernel", 1, async () => {
        logger.info("message handled", { messageId: "m1", outcome: "ACCEPT" });
        logger.debug("below the level: not written");
        await Promise.resolve();
        logger.info("message handled", { messageId: "m2", outcome: "ACCEPT" });
      });
      logger.info("outside any invocation");
      process.stdout.write("not a log line\n");
    } finally {
      restore();
      process.stdout.write = realWrite;
    }
    const { invocations } = recorder.take();
    const { text, outsideLines } = recorder.logs();
    expect(text).toHaveLength(3);
    expect(text.every((l) => JSON.parse(l).service === "claims-kernel")).toBe(true);
    expect(invocations[0]).toMatchObject({
      fn: "kernel",
      logLines: 2,
      logBytes: Buffer.byteLength(text[0]!) + Buffer.byteLength(text[1]!),
    });
    expect(outsideLines).toBe(1);
    expect(passedThrough).toEqual(["not a log line\n"]);
  });
});
