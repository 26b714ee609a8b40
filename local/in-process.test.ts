// This process's own clients reach its emulators without a port (fauxqs and dynalite over their workers'
// channels, the bus in-process), the pollers' receives and deletes go on fauxqs's channel without the SDK, and
// the ports other programs use still refuse what is not signed with this run's keys.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateQueueCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localClientConfig, startEmulators } from "./emulators.ts";
import type { Emulators } from "./emulators.ts";
import { inProcessPollerTransport } from "./sqs-emulator.ts";

describe("in-process ways to this process's emulators", () => {
  let emulators: Emulators;
  let dataDir: string;
  let sqs: SQSClient;
  let queueUrl: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "claims-in-process-"));
    emulators = await startEmulators({ dataDir });
    sqs = new SQSClient(localClientConfig(emulators.sqsEndpoint));
    queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: "in-process" }))).QueueUrl!;
  });

  afterAll(async () => {
    sqs.destroy();
    await emulators.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("are given to this process's clients of its own emulators, and to no other endpoint", () => {
    for (const endpoint of [emulators.dynamodbEndpoint, emulators.sqsEndpoint, emulators.eventsEndpoint])
      expect(localClientConfig(endpoint).requestHandler).toBeDefined();
    expect(localClientConfig("http://127.0.0.1:9").requestHandler).toBeUndefined();
    expect(inProcessPollerTransport("http://127.0.0.1:9")).toBeUndefined();
  });

  it("leave the ports closed to requests without this run's signature", async () => {
    for (const [endpoint, target] of [
      [emulators.sqsEndpoint, "AmazonSQS.ListQueues"],
      [emulators.eventsEndpoint, "AWSEvents.PutEvents"],
      [emulators.dynamodbEndpoint, "DynamoDB_20120810.ListTables"],
    ] as const) {
      const res = await fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": target },
        body: "{}",
      });
      expect(res.status, endpoint).toBe(403);
    }
  });

  it("let the pollers receive and delete what the SDK sent, as SQS answers", async () => {
    const transport = inProcessPollerTransport(emulators.sqsEndpoint)!;
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{"claim":"clm_1"}' }));
    const received = await transport.receive({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 1,
      MessageSystemAttributeNames: ["All"],
    });
    expect(received.map((m) => m.Body)).toEqual(['{"claim":"clm_1"}']);
    expect(received[0]!.Attributes?.ApproximateReceiveCount).toBe("1");
    const deleted = await transport.deleteBatch({
      QueueUrl: queueUrl,
      Entries: [{ Id: "m0", ReceiptHandle: received[0]!.ReceiptHandle! }],
    });
    expect(deleted.Failed ?? []).toEqual([]);
    const again = await transport.receive({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 });
    expect(again).toEqual([]);
  });

  it("fail a poller's call with the queue's error by name, and end an aborted long poll", async () => {
    const transport = inProcessPollerTransport(emulators.sqsEndpoint)!;
    const missing = `${queueUrl.slice(0, queueUrl.lastIndexOf("/"))}/no-such-queue`;
    await expect(transport.receive({ QueueUrl: missing, WaitTimeSeconds: 0 })).rejects.toMatchObject({
      name: expect.stringMatching(/NonExistentQueue|QueueDoesNotExist/),
    });
    const abort = new AbortController();
    const poll = transport.receive({ QueueUrl: queueUrl, WaitTimeSeconds: 20 }, abort.signal);
    abort.abort();
    await expect(poll).rejects.toMatchObject({ name: "AbortError" });
  });
});
