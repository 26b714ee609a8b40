// fauxqs's worker answers the SQS JSON protocol straight from fauxqs's router instead of through its Fastify app
// (local/sqs-worker.mjs): the same requests, sent both ways, must get the same answers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newSigningKeys } from "./auth/keys.ts";
import { startSqsEmulator } from "./sqs-emulator.ts";
import type { SqsEmulator } from "./sqs-emulator.ts";
import { inProcessHandlerAt } from "./worker-channel.ts";

type Answer = { status: number; headers: Record<string, string>; body: string };

const decoder = new TextDecoder();

/** One SQS JSON request on the emulator's in-process channel, as the SDK and the pollers send it. */
async function call(emulator: SqsEmulator, action: string, input: unknown, contentType?: string): Promise<Answer> {
  const handler = inProcessHandlerAt(emulator.endpoint)!;
  const { response } = await handler.handle(
    {
      method: "POST",
      path: "/",
      headers: {
        host: new URL(emulator.endpoint).host,
        "content-type": contentType ?? "application/x-amz-json-1.0",
        "x-amz-target": `AmazonSQS.${action}`,
        authorization: "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/sqs/aws4_request, Signature=local",
      },
      body: typeof input === "string" ? input : JSON.stringify(input),
    } as never,
    {},
  );
  return {
    status: response.statusCode,
    headers: response.headers as Record<string, string>,
    body: decoder.decode(response.body as Uint8Array),
  };
}

/** An answer with what differs by run (ids, handles, the port, clocks) replaced by placeholders. */
function comparable(answer: Answer, emulator: SqsEmulator): unknown {
  const port = new URL(emulator.endpoint).port;
  const body = answer.body
    .replaceAll(port, "<port>")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
    .replace(
      /"(SentTimestamp|ApproximateFirstReceiveTimestamp|CreatedTimestamp|LastModifiedTimestamp)":"\d+"/g,
      '"$1":"<t>"',
    )
    .replace(/"SequenceNumber":"\d+"/g, '"SequenceNumber":"<n>"');
  const headers = Object.fromEntries(
    Object.entries(answer.headers).map(([k, v]) => [
      k,
      k === "x-amz-request-id" ? /^[0-9A-F]{16}$/.test(v) : k === "date" ? typeof v : v,
    ]),
  );
  return { status: answer.status, headers, body };
}

/** The same requests, in order, on `emulator`. */
async function script(emulator: SqsEmulator): Promise<unknown[]> {
  const out: Answer[] = [];
  const created = await call(emulator, "CreateQueue", { QueueName: "direct-test" });
  out.push(created);
  const url = (JSON.parse(created.body) as { QueueUrl: string }).QueueUrl;
  const fifo = await call(emulator, "CreateQueue", {
    QueueName: "direct-test.fifo",
    Attributes: { FifoQueue: "true", ContentBasedDeduplication: "true" },
  });
  out.push(fifo);
  const fifoUrl = (JSON.parse(fifo.body) as { QueueUrl: string }).QueueUrl;
  out.push(await call(emulator, "SendMessage", { QueueUrl: url, MessageBody: "hello" }));
  out.push(await call(emulator, "SendMessage", { QueueUrl: url, MessageBody: "\uFFFF" }));
  out.push(
    await call(emulator, "SendMessageBatch", {
      QueueUrl: url,
      Entries: [
        { Id: "a", MessageBody: "one", MessageAttributes: { k: { DataType: "String", StringValue: "v" } } },
        { Id: "b", MessageBody: "two", DelaySeconds: 0 },
      ],
    }),
  );
  out.push(await call(emulator, "SendMessage", { QueueUrl: fifoUrl, MessageBody: "f1", MessageGroupId: "g" }));
  out.push(await call(emulator, "SendMessage", { QueueUrl: fifoUrl, MessageBody: "f1", MessageGroupId: "g" }));
  const received = await call(emulator, "ReceiveMessage", {
    QueueUrl: url,
    MaxNumberOfMessages: 10,
    MessageAttributeNames: ["All"],
    MessageSystemAttributeNames: ["ApproximateReceiveCount"],
  });
  out.push(received);
  const handles = (JSON.parse(received.body) as { Messages: { ReceiptHandle: string }[] }).Messages.map(
    (m) => m.ReceiptHandle,
  );
  out.push(
    await call(emulator, "ChangeMessageVisibility", { QueueUrl: url, ReceiptHandle: handles[0], VisibilityTimeout: 0 }),
  );
  out.push(
    await call(emulator, "DeleteMessageBatch", {
      QueueUrl: url,
      Entries: [
        { Id: "x", ReceiptHandle: handles[1] },
        { Id: "y", ReceiptHandle: "not-a-handle" },
      ],
    }),
  );
  out.push(
    await call(emulator, "GetQueueAttributes", { QueueUrl: url, AttributeNames: ["ApproximateNumberOfMessages"] }),
  );
  // Errors: no such queue, a missing parameter, an unknown action, a body that is not JSON, another protocol.
  out.push(await call(emulator, "SendMessage", { QueueUrl: `${url}-gone`, MessageBody: "x" }));
  out.push(await call(emulator, "SendMessage", { QueueUrl: url }));
  out.push(await call(emulator, "Nope", {}));
  out.push(await call(emulator, "SendMessage", "{not json"));
  out.push(await call(emulator, "DeleteMessageBatch", { QueueUrl: url, Entries: "not a list" }));
  out.push(await call(emulator, "SendMessageBatch", { QueueUrl: url, Entries: [null] }));
  out.push(await call(emulator, "ListQueues", "Action=ListQueues", "application/x-www-form-urlencoded"));
  return out.map((a) => comparable(a, emulator));
}

describe("fauxqs's worker, straight to its SQS router", () => {
  let viaApp: SqsEmulator;
  let direct: SqsEmulator;
  beforeAll(async () => {
    [viaApp, direct] = await Promise.all([
      startSqsEmulator({ region: "us-east-1", keys: newSigningKeys(), viaApp: true }),
      startSqsEmulator({ region: "us-east-1", keys: newSigningKeys() }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([viaApp?.stop(), direct?.stop()]);
  });

  it("answers every request of the SQS JSON protocol, errors included, as fauxqs's app answers it", async () => {
    const expected = await script(viaApp);
    const got = await script(direct);
    expect(got).toEqual(expected);
    // The JSON requests went straight to the router; the body that is not JSON and the other protocol to the app.
    expect(await direct.memory()).toMatchObject({ direct: 16, via_app: 2 });
    expect(await viaApp.memory()).toMatchObject({ direct: 0, via_app: 18 });
    // The script reached what it meant to: messages received with their attributes, each kind of error (fauxqs's
    // own, the router's, Fastify's for a body that is not JSON and for an action that throws, the other protocol).
    const text = JSON.stringify(expected);
    for (const seen of ['\\"Body\\":\\"hello\\"', "MD5OfMessageAttributes", "InvalidMessageContents", "InvalidAction"])
      expect(text).toContain(seen);
    expect((expected as { status: number }[]).map((a) => a.status)).toEqual([
      200, 200, 200, 400, 200, 200, 200, 200, 200, 200, 200, 400, 400, 400, 500, 400, 500, 400,
    ]);
  });
});
