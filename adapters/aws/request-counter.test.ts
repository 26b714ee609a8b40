// The request counter: counts by service and operation across clients, every HTTP attempt (SDK
// retries included), and stops counting once removed.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { localClientConfig } from "../../local/emulators.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { countRequests, createRequestCounter } from "./request-counter.ts";

const aws = useEmulatedAws();

describe("request counter", () => {
  it("counts DocumentClient and SQS requests by service and operation, and resets", async () => {
    const tableName = await aws.newTable();
    const counter = createRequestCounter();
    const removeDoc = countRequests(aws.doc, counter);
    const removeSqs = countRequests(aws.sqs, counter);
    try {
      await aws.doc.send(new PutCommand({ TableName: tableName, Item: { pk: "a", sk: "b" } }));
      await aws.doc.send(new PutCommand({ TableName: tableName, Item: { pk: "a", sk: "c" } }));
      await aws.doc.send(new GetCommand({ TableName: tableName, Key: { pk: "a", sk: "b" } }));
      await aws.sqs.send(new GetQueueUrlCommand({ QueueName: "nope" })).catch(() => undefined);
      expect(counter.snapshot()).toEqual({
        total: 4,
        byService: { DynamoDB: { GetItem: 1, PutItem: 2 }, SQS: { GetQueueUrl: 1 } },
      });
      counter.reset();
      expect(counter.snapshot()).toEqual({ total: 0, byService: {} });
    } finally {
      removeDoc();
      removeSqs();
    }
    await aws.doc.send(new GetCommand({ TableName: tableName, Key: { pk: "a", sk: "b" } }));
    expect(counter.snapshot().total).toBe(0);
  });

  it("counts every attempt of a request the SDK retries", async () => {
    let calls = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        calls++;
        if (calls < 3) {
          res.writeHead(500, {
            "content-type": "application/x-amz-json-1.0",
            "x-amzn-errortype": "InternalServerError",
          });
          res.end(JSON.stringify({ __type: "com.amazonaws.dynamodb.v20120810#InternalServerError", message: "flaky" }));
        } else {
          res.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
          res.end("{}");
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const client = new DynamoDBClient({
      ...localClientConfig(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
      maxAttempts: 3,
    });
    const counter = createRequestCounter();
    countRequests(client, counter);
    try {
      const out = await client.send(new GetItemCommand({ TableName: "ttt", Key: { pk: { S: "a" } } }));
      expect(out.Item).toBeUndefined();
      expect(calls).toBe(3);
      expect(counter.snapshot()).toEqual({ total: 3, byService: { DynamoDB: { GetItem: 3 } } });
    } finally {
      client.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
