import { describe, expect, it, vi } from "vitest";
import { DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { countRequests, createRequestCounter } from "../adapters/aws/request-counter.ts";
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { createAwsClients } from "../functions/composition/compose.ts";
import { createLocalAwsClients, LOCAL_SKIPPED_MIDDLEWARE, withCachedHandlers } from "./local-clients.ts";
import type { InProcessRequestHandler } from "./worker-channel.ts";

type Seen = { headers: Record<string, string>; body: string };

/** A request handler that records each request and answers like dynalite / fauxqs would for these calls. */
function recordingHandler(seen: Seen[]): InProcessRequestHandler {
  const encoder = new TextEncoder();
  return {
    metadata: { handlerProtocol: "http/1.1" },
    async handle(request) {
      const body =
        typeof request.body === "string" ? request.body : new TextDecoder().decode(request.body as Uint8Array);
      seen.push({ headers: { ...request.headers }, body });
      const target = request.headers["x-amz-target"] ?? "";
      const answer = target.endsWith("GetItem")
        ? { Item: { pk: { S: "CLAIM#c1" }, sk: { S: "META" }, n: { N: "7" } } }
        : target.endsWith("SendMessage")
          ? { MessageId: "m1", MD5OfMessageBody: "ee7a1c4d2a5e2a6a0bfb3f5a8a3b9c62" }
          : {};
      return {
        response: {
          statusCode: 200,
          headers: { "content-type": "application/x-amz-json-1.0", "x-amzn-requestid": "r1" },
          body: encoder.encode(JSON.stringify(answer)),
        },
      };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
  };
}

const config = (requestHandler: InProcessRequestHandler) => ({
  endpoint: "http://127.0.0.1:1",
  region: "us-east-1",
  credentials: { accessKeyId: "local", secretAccessKey: "local" },
  requestHandler,
});

const names = (stack: { identify(): string[] }) => stack.identify().map((entry) => entry.split(" ")[0]);

describe("the functions' SDK clients (on Lambda as locally)", () => {
  it("resolve each command class's middleware chain once, and again after their stack changes", async () => {
    const resolved = vi.spyOn(GetItemCommand.prototype, "resolveMiddleware");
    try {
      const { dynamo } = createAwsClients({ dynamodb: config(recordingHandler([])) });
      const get = () => dynamo.send(new GetCommand({ TableName: "t", Key: { pk: "CLAIM#c1", sk: "META" } }));
      for (let i = 0; i < 3; i++) expect((await get()).Item).toEqual({ pk: "CLAIM#c1", sk: "META", n: 7 });
      expect(resolved).toHaveBeenCalledTimes(1);
      const stop = countRequests(dynamo, createRequestCounter());
      await get();
      stop();
      expect(resolved).toHaveBeenCalledTimes(2);
    } finally {
      resolved.mockRestore();
    }
  });

  it("go without the SDK's logger middleware unless given a logger, which then logs each call", async () => {
    const logged: unknown[] = [];
    const logger = { debug() {}, info: (entry: unknown) => logged.push(entry), warn() {}, error() {} };
    const idle = createAwsClients({ dynamodb: config(recordingHandler([])) });
    const logging = createAwsClients({ dynamodb: { ...config(recordingHandler([])), logger } });
    expect(names(idle.dynamo.middlewareStack)).not.toContain("loggerMiddleware");
    expect(names(idle.sqs.middlewareStack)).not.toContain("loggerMiddleware");
    expect(names(logging.dynamo.middlewareStack)).toContain("loggerMiddleware");
    await logging.dynamo.send(new GetCommand({ TableName: "t", Key: { pk: "CLAIM#c1", sk: "META" } }));
    expect(logged).toEqual([expect.objectContaining({ commandName: expect.stringMatching(/^Get(Item)?Command$/) })]);
  });
});

describe("the local stack's SDK clients", () => {
  it("go without the logger, user-agent and trace-id middlewares, keeping retries, signing and serde", () => {
    const clients = createLocalAwsClients({ dynamodb: config(recordingHandler([])) });
    for (const client of [clients.dynamo, clients.sqs, clients.events]) {
      const present = names(client.middlewareStack);
      for (const skipped of LOCAL_SKIPPED_MIDDLEWARE) expect(present).not.toContain(skipped);
      expect(present).toEqual(
        expect.arrayContaining([
          "serializerMiddleware",
          "retryMiddleware",
          "httpSigningMiddleware",
          "deserializerMiddleware",
        ]),
      );
    }
  });

  it("send the same DynamoDB request bodies and targets as the production clients, and read the same answers", async () => {
    const production: Seen[] = [];
    const local: Seen[] = [];
    const prod = createAwsClients({ dynamodb: config(recordingHandler(production)) });
    const trimmed = createLocalAwsClients({ dynamodb: config(recordingHandler(local)) });
    const read: unknown[] = [];
    for (const client of [prod.dynamo, trimmed.dynamo]) {
      await client.send(
        new PutCommand({
          TableName: "t",
          Item: { pk: "CLAIM#c1", sk: "META", amount: { minor: 29999, currency: "EUR" } },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
      read.push((await client.send(new GetCommand({ TableName: "t", Key: { pk: "CLAIM#c1", sk: "META" } }))).Item);
    }
    expect(local.map((r) => [r.headers["x-amz-target"], r.body])).toEqual(
      production.map((r) => [r.headers["x-amz-target"], r.body]),
    );
    expect(read[1]).toEqual({ pk: "CLAIM#c1", sk: "META", n: 7 });
    expect(read[1]).toEqual(read[0]);
    // What the skipped middlewares added: the SDK's user agent (the production client sends it).
    expect(production[0]!.headers["x-amz-user-agent"] ?? production[0]!.headers["user-agent"]).toMatch(/aws-sdk-js/);
    expect(local[0]!.headers["x-amz-user-agent"] ?? local[0]!.headers["user-agent"]).toBeUndefined();
  });

  it("send queue messages as the production SQS client does", async () => {
    const production: Seen[] = [];
    const local: Seen[] = [];
    const prod = createAwsClients({ sqs: config(recordingHandler(production)) });
    const trimmed = createLocalAwsClients({ sqs: config(recordingHandler(local)) });
    const send = new SendMessageCommand({ QueueUrl: "http://127.0.0.1:1/000000000000/q", MessageBody: "hello" });
    await prod.sqs.send(send).catch(() => undefined);
    await trimmed.sqs.send(send).catch(() => undefined);
    expect(local.map((r) => [r.headers["x-amz-target"], r.body])).toEqual(
      production.map((r) => [r.headers["x-amz-target"], r.body]),
    );
    expect(local).toHaveLength(1);
  });

  it("keep each command class's chain yet send every call's own input and read its own answer", async () => {
    const production: Seen[] = [];
    const local: Seen[] = [];
    // The SDK's own client, resolving its chain for every call, against the functions' (kept chains, no idle logger).
    const prod = {
      dynamo: DynamoDBDocumentClient.from(new DynamoDBClient(config(recordingHandler(production))), {
        marshallOptions: { removeUndefinedValues: true },
      }),
    };
    const cached = createAwsClients({ dynamodb: config(recordingHandler(local)) });
    const calls = [
      new PutCommand({ TableName: "t", Item: { pk: "CLAIM#c1", sk: "META", n: 1 } }),
      new PutCommand({ TableName: "t", Item: { pk: "CLAIM#c2", sk: "META", tags: new Set(["a"]) } }),
      new GetCommand({ TableName: "t", Key: { pk: "CLAIM#c1", sk: "META" }, ConsistentRead: true }),
      new QueryCommand({
        TableName: "t",
        KeyConditionExpression: "pk = :p",
        ExpressionAttributeValues: { ":p": "CLAIM#c2" },
      }),
      new GetCommand({ TableName: "u", Key: { pk: "CLAIM#c9", sk: "V" } }),
    ];
    const read: unknown[][] = [[], []];
    for (const [i, client] of [prod.dynamo, cached.dynamo].entries())
      await Promise.all(calls.map(async (c) => read[i]!.push(await client.send(c as never))));
    expect(local.map((r) => [r.headers["x-amz-target"], r.body])).toEqual(
      production.map((r) => [r.headers["x-amz-target"], r.body]),
    );
    expect(new Set(local.map((r) => r.body)).size).toBe(calls.length);
    expect(read[1]).toEqual(read[0]);
    expect(read[1]![2]).toMatchObject({ Item: { pk: "CLAIM#c1", sk: "META", n: 7 } });
  });

  it("see a middleware added or removed after their first call (a bench's counter, a test's fault)", async () => {
    const clients = createLocalAwsClients({ sqs: config(recordingHandler([])) });
    const send = () =>
      clients.sqs.send(new SendMessageCommand({ QueueUrl: "http://127.0.0.1:1/000000000000/q", MessageBody: "x" }));
    await send().catch(() => undefined);
    const counter = createRequestCounter();
    const stop = countRequests(clients.sqs, counter);
    await send().catch(() => undefined);
    await send().catch(() => undefined);
    expect(counter.snapshot().byService).toEqual({ SQS: { SendMessage: 2 } });
    stop();
    await send().catch(() => undefined);
    expect(counter.snapshot().total).toBe(2);
  });

  it("resolve a call with options (an abort signal) as the SDK does, handing the signal to the request handler", async () => {
    const signals: unknown[] = [];
    const handler = recordingHandler([]);
    const recording: InProcessRequestHandler = {
      ...handler,
      handle: (request, options) => (signals.push(options?.abortSignal), handler.handle(request, options)),
    };
    const client = withCachedHandlers(createAwsClients({ dynamodb: config(recording) }).dynamo);
    const get = () => new GetCommand({ TableName: "t", Key: { pk: "CLAIM#c1", sk: "META" } });
    const signal = new AbortController().signal;
    expect((await client.send(get(), { abortSignal: signal })).Item).toEqual({ pk: "CLAIM#c1", sk: "META", n: 7 });
    expect((await client.send(get())).Item).toEqual({ pk: "CLAIM#c1", sk: "META", n: 7 });
    expect(signals).toEqual([signal, undefined]);
  });
});
