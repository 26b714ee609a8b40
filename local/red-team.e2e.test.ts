// The local stack attacked as another local program and as a web page the operator opens would attack it:
// loopback is not a boundary. Every emulator port (dynalite, fauxqs, the local bus) must refuse a request
// that is not signed (SigV4, checked, not just present) with this run's credentials, answer no CORS
// preflight and send no Access-Control-* header; the product's own clients, with the credentials from
// `<data-dir>/local-credentials.json`, still get through. Each attack checks the store, the queue or the
// bus's journal afterwards, not only the status code.
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import { EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { chromium } from "playwright-core";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM_ARGS, CHROMIUM_PATH, describeWithBrowser } from "../report/browser.test-kit.ts";
import { localClientConfig, startEmulators } from "./emulators.ts";
import type { Emulators } from "./emulators.ts";

const TABLE = "redteam-orders";
const FORGED_AUTH =
  "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=0000";
const FORGED_DATE = "20260101T000000Z";
const FORGED_EVENT = {
  Source: "claims.kernel",
  DetailType: "RefundExecuted",
  Detail: JSON.stringify({ claim_id: "clm_forged", order_id: "ord_001", amount_eur: 99_999 }),
  EventBusName: "claims",
};

let dataDir: string;
let emulators: Emulators;
let own: DynamoDBClient;
let ownSqs: SQSClient;
let queueUrl: string;

/** An item's amount as the product's own client reads it. */
async function amountOf(orderId: string): Promise<string | undefined> {
  const out = await own.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: orderId } } }));
  return out.Item?.amount_eur?.N;
}

/** The bus's journal of accepted events. */
const journal = () =>
  existsSync(join(dataDir, "events.jsonl")) ? readFileSync(join(dataDir, "events.jsonl"), "utf8") : "";

/** Messages waiting in the attacked queue (received and left to their visibility timeout). */
async function queuedBodies(): Promise<string[]> {
  const out = await ownSqs.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
  );
  return (out.Messages ?? []).map((m) => m.Body ?? "");
}

/** A client of `kind` signing with the given keys over HTTP (never this process's in-process channel). */
function signedClient<T>(
  Client: new (config: object) => T,
  endpoint: string,
  keys: { accessKeyId: string; secretAccessKey: string },
): T {
  return new Client({ endpoint, region: "us-east-1", credentials: keys, maxAttempts: 1 });
}

const PORTS = [
  ["dynalite (DynamoDB)", () => emulators.dynamodbEndpoint, "DynamoDB_20120810.Scan"],
  ["fauxqs (SQS)", () => emulators.sqsEndpoint, "AmazonSQS.ListQueues"],
  ["the local bus (EventBridge)", () => emulators.eventsEndpoint, "AWSEvents.PutEvents"],
] as const;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "claims-redteam-"));
  emulators = await startEmulators({ dataDir, stateDir: join(dataDir, "store") });
  own = new DynamoDBClient(localClientConfig(emulators.dynamodbEndpoint));
  ownSqs = new SQSClient(localClientConfig(emulators.sqsEndpoint));
  await own.send(
    new CreateTableCommand({
      TableName: TABLE,
      AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    }),
  );
  // dynalite answers CreateTable while the table is CREATING: a write before it is ACTIVE is refused (as on AWS).
  await waitUntilTableExists({ client: own, maxWaitTime: 60, minDelay: 1, maxDelay: 2 }, { TableName: TABLE });
  await own.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: "ord_001" }, amount_eur: { N: "120" } } }));
  queueUrl = (await ownSqs.send(new CreateQueueCommand({ QueueName: "redteam-proposals" }))).QueueUrl!;
});

afterAll(async () => {
  own?.destroy();
  ownSqs?.destroy();
  await emulators?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("another local program", () => {
  it("cannot write the table with a signature header that is present but forged", async () => {
    const res = await fetch(emulators.dynamodbEndpoint, {
      method: "POST",
      headers: {
        "content-type": "application/x-amz-json-1.0",
        "x-amz-target": "DynamoDB_20120810.PutItem",
        "x-amz-date": FORGED_DATE,
        authorization: FORGED_AUTH,
      },
      body: JSON.stringify({ TableName: TABLE, Item: { pk: { S: "ord_001" }, amount_eur: { N: "400" } } }),
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await amountOf("ord_001")).toBe("120");
  });

  it("cannot read the table without any Authorization header", async () => {
    const res = await fetch(emulators.dynamodbEndpoint, {
      method: "POST",
      headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "DynamoDB_20120810.Scan" },
      body: JSON.stringify({ TableName: TABLE }),
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await res.text()).not.toContain("ord_001");
  });

  it("cannot write the table with a real SigV4 signature made with other credentials", async () => {
    const attacker = signedClient(DynamoDBClient, emulators.dynamodbEndpoint, {
      accessKeyId: "local",
      secretAccessKey: "local",
    });
    await expect(
      attacker.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: "ord_001" }, amount_eur: { N: "400" } } })),
    ).rejects.toThrow();
    attacker.destroy();
    expect(await amountOf("ord_001")).toBe("120");
  });

  it("cannot publish a forged RefundExecuted on the local bus", async () => {
    const attacker = signedClient(EventBridgeClient, emulators.eventsEndpoint, {
      accessKeyId: "local",
      secretAccessKey: "local",
    });
    await expect(attacker.send(new PutEventsCommand({ Entries: [FORGED_EVENT] }))).rejects.toThrow();
    attacker.destroy();
    expect(journal()).not.toContain("99999");
  });

  it("cannot send a forged message to a work queue", async () => {
    const attacker = signedClient(SQSClient, emulators.sqsEndpoint, { accessKeyId: "local", secretAccessKey: "local" });
    await expect(
      attacker.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{"forged":true}' })),
    ).rejects.toThrow();
    attacker.destroy();
    expect(await queuedBodies()).not.toContain('{"forged":true}');
  });

  it("cannot replay a request of this run's credentials with another body (the payload is part of the signature)", async () => {
    const credentials = JSON.parse(readFileSync(join(dataDir, "local-credentials.json"), "utf8"));
    let captured: { headers: Record<string, string>; body: string } | undefined;
    const recorder = new EventBridgeClient({
      endpoint: emulators.eventsEndpoint,
      region: credentials.region,
      credentials,
      maxAttempts: 1,
      requestHandler: {
        handle: async (request: { headers: Record<string, string>; body: string }) => {
          captured = { headers: request.headers, body: request.body };
          throw new Error("recorded, not sent");
        },
      },
    });
    const harmless = { ...FORGED_EVENT, DetailType: "Harmless", Detail: JSON.stringify({ amount_eur: 1 }) };
    await expect(recorder.send(new PutEventsCommand({ Entries: [harmless] }))).rejects.toThrow("recorded");
    recorder.destroy();
    const tampered = captured!.body.replace('{\\"amount_eur\\":1}', '{\\"amount_eur\\":99999}');
    expect(tampered).not.toBe(captured!.body);
    const { host: _host, "content-length": _length, ...headers } = captured!.headers;
    const res = await fetch(emulators.eventsEndpoint, { method: "POST", headers, body: tampered });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(journal()).not.toContain("99999");
  });

  it.each(PORTS)("%s answers no CORS preflight", async (_name, endpointOf, target) => {
    const endpoint = endpointOf();
    const res = await fetch(endpoint, {
      method: "OPTIONS",
      headers: {
        origin: "http://evil.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type,x-amz-date,x-amz-target",
      },
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect([...res.headers.keys()].filter((h) => h.startsWith("access-control-"))).toEqual([]);
    // Nor does an ordinary request with an Origin get any Access-Control-* header back.
    const post = await fetch(endpoint, {
      method: "POST",
      headers: { origin: "http://evil.example", "content-type": "application/x-amz-json-1.0", "x-amz-target": target },
      body: "{}",
    });
    expect([...post.headers.keys()].filter((h) => h.startsWith("access-control-"))).toEqual([]);
  });
});

describe("this run's credentials", () => {
  it("are written owner-only to <data-dir>/local-credentials.json with every endpoint", () => {
    const path = join(dataDir, "local-credentials.json");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const credentials = JSON.parse(readFileSync(path, "utf8"));
    expect(credentials).toEqual({
      region: "us-east-1",
      accessKeyId: expect.stringMatching(/^[A-Z0-9]{16,}$/),
      secretAccessKey: expect.stringMatching(/^.{32,}$/),
      endpoints: { dynamodb: emulators.dynamodbEndpoint, sqs: emulators.sqsEndpoint, events: emulators.eventsEndpoint },
    });
  });

  it("let an operator's tool (the AWS SDK over HTTP) read the table, use the queue and publish", async () => {
    const credentials = JSON.parse(readFileSync(join(dataDir, "local-credentials.json"), "utf8"));
    const ddb = signedClient(DynamoDBClient, credentials.endpoints.dynamodb, credentials);
    const sqs = signedClient(SQSClient, credentials.endpoints.sqs, credentials);
    const events = signedClient(EventBridgeClient, credentials.endpoints.events, credentials);
    try {
      const item = await ddb.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: "ord_001" } } }));
      expect(item.Item?.amount_eur?.N).toBe("120");
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: "operator-✓" }));
      expect(await queuedBodies()).toContain("operator-✓");
      const out = await events.send(
        new PutEventsCommand({ Entries: [{ ...FORGED_EVENT, DetailType: "OperatorProbe", Detail: '{"probe":1}' }] }),
      );
      expect(out.FailedEntryCount).toBe(0);
      expect(journal()).toContain("OperatorProbe");
    } finally {
      for (const c of [ddb, sqs, events]) c.destroy();
    }
  });

  it("are new on every start", async () => {
    const first = JSON.parse(readFileSync(join(dataDir, "local-credentials.json"), "utf8"));
    const otherDir = mkdtempSync(join(tmpdir(), "claims-redteam-2-"));
    const other = await startEmulators({ dataDir: otherDir, stateDir: join(otherDir, "store") });
    try {
      const second = JSON.parse(readFileSync(join(otherDir, "local-credentials.json"), "utf8"));
      expect(second.accessKeyId).not.toBe(first.accessKeyId);
      expect(second.secretAccessKey).not.toBe(first.secretAccessKey);
      // The first run's credentials do not open the second run's table.
      const crossed = signedClient(DynamoDBClient, second.endpoints.dynamodb, first);
      await expect(crossed.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: "x" } } }))).rejects.toThrow(
        /security token|signature|credential/i,
      );
      crossed.destroy();
    } finally {
      await other.stop();
      rmSync(otherDir, { recursive: true, force: true });
    }
  });
});

describeWithBrowser("a web page from another origin", () => {
  let browser: Browser;
  let attackerSite: Server;
  let attackerOrigin: string;

  beforeAll(async () => {
    attackerSite = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<!doctype html><title>cat pictures</title><p>nothing to see</p>");
    });
    await new Promise<void>((resolve) => attackerSite.listen(0, "127.0.0.1", resolve));
    attackerOrigin = `http://127.0.0.1:${(attackerSite.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });

  afterAll(async () => {
    await browser?.close();
    attackerSite?.close();
  });

  /** Runs a fetch from the attacker's page: what the page's script could read, or the error it got. */
  async function fromPage(
    endpoint: string,
    target: string,
    contentType: string,
    body: unknown,
  ): Promise<{ status?: number; text?: string; error?: string }> {
    const page = await browser.newPage();
    try {
      await page.goto(attackerOrigin);
      return await page.evaluate(
        async ({ endpoint, target, contentType, body, auth, date }) => {
          try {
            const res = await fetch(endpoint, {
              method: "POST",
              headers: { "content-type": contentType, "x-amz-target": target, "x-amz-date": date, authorization: auth },
              body: JSON.stringify(body),
            });
            return { status: res.status, text: await res.text() };
          } catch (error) {
            return { error: String(error) };
          }
        },
        { endpoint, target, contentType, body, auth: FORGED_AUTH, date: FORGED_DATE },
      );
    } finally {
      await page.close();
    }
  }

  it("cannot read the table", async () => {
    const got = await fromPage(emulators.dynamodbEndpoint, "DynamoDB_20120810.Scan", "application/x-amz-json-1.0", {
      TableName: TABLE,
    });
    expect(got.text ?? "").not.toContain("ord_001");
    expect(got.error).toMatch(/Failed to fetch/);
  });

  it("cannot raise an order's amount", async () => {
    const got = await fromPage(emulators.dynamodbEndpoint, "DynamoDB_20120810.PutItem", "application/x-amz-json-1.0", {
      TableName: TABLE,
      Item: { pk: { S: "ord_001" }, amount_eur: { N: "400" } },
    });
    expect(got.error).toMatch(/Failed to fetch/);
    expect(await amountOf("ord_001")).toBe("120");
  });

  it("cannot publish on the bus nor send to a queue", async () => {
    const bus = await fromPage(emulators.eventsEndpoint, "AWSEvents.PutEvents", "application/x-amz-json-1.1", {
      Entries: [FORGED_EVENT],
    });
    const queue = await fromPage(emulators.sqsEndpoint, "AmazonSQS.SendMessage", "application/x-amz-json-1.0", {
      QueueUrl: queueUrl,
      MessageBody: '{"from":"page"}',
    });
    expect(bus.error).toMatch(/Failed to fetch/);
    expect(queue.error).toMatch(/Failed to fetch/);
    expect(journal()).not.toContain("99999");
    expect(await queuedBodies()).not.toContain('{"from":"page"}');
  });
});
