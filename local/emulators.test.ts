import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import { EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUS_NAME } from "../app/manifest.ts";
import { KERNEL_SOURCE } from "../core/kernel/events.ts";
import { DETAIL_TYPES } from "../core/kernel/events.ts";
import { EmulatorStartError } from "./errors.ts";
import { localClientConfig, startEmulators } from "./emulators.ts";
import { pkTableCommand } from "./testing/pk-table.ts";
import type { Emulators } from "./emulators.ts";
import type { BusEvent } from "./eventbridge/server.ts";

const run = promisify(execFile);

describe("startEmulators", () => {
  let emulators: Emulators;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "claims-emulators-"));
    emulators = await startEmulators({ dataDir, bus: { retryDelayMs: () => 0 } });
  });

  afterAll(async () => {
    await emulators.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("serves DynamoDB with conditional writes through the real SDK", async () => {
    const ddb = new DynamoDBClient(localClientConfig(emulators.dynamodbEndpoint));
    await ddb.send(pkTableCommand("claims"));
    // As on AWS, a table is CREATING for a moment (dynalite: until its next timer turn) and refuses items.
    await waitUntilTableExists(
      { client: ddb, maxWaitTime: 10, minDelay: 0.05, maxDelay: 0.1 },
      { TableName: "claims" },
    );
    const put = () =>
      ddb.send(
        new PutItemCommand({
          TableName: "claims",
          Item: { pk: { S: "clm_1" }, v: { N: "1" } },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
    await put();
    await expect(put()).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    const got = await ddb.send(new GetItemCommand({ TableName: "claims", Key: { pk: { S: "clm_1" } } }));
    expect(got.Item?.v).toEqual({ N: "1" });
    ddb.destroy();
  });

  it("serves SQS through the real SDK", async () => {
    const sqs = new SQSClient(localClientConfig(emulators.sqsEndpoint));
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "emulators-test" }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: "hello" }));
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
    expect(out.Messages?.map((m) => m.Body)).toEqual(["hello"]);
    sqs.destroy();
  });

  it("serves the bus: delivers to rule targets and journals to <dataDir>/events.jsonl", async () => {
    const seen: BusEvent[] = [];
    emulators.bus.addTarget("refunds", (e) => {
      seen.push(e);
    });
    const eb = new EventBridgeClient(localClientConfig(emulators.eventsEndpoint));
    const out = await eb.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: BUS_NAME,
            Source: KERNEL_SOURCE,
            DetailType: DETAIL_TYPES.refund,
            Detail: JSON.stringify({ execution_id: "exe_9" }),
          },
        ],
      }),
    );
    await emulators.bus.settled();
    expect(seen.map((e) => e.detail.execution_id)).toEqual(["exe_9"]);
    const lines = (await readFile(join(dataDir, "events.jsonl"), "utf8")).trim().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as BusEvent).id)).toEqual([out.Entries?.[0]?.EventId]);
    eb.destroy();
  });

  // The file's emulators keep their table in memory (a data directory for the bus, no state directory).
  it("has nothing to compact in memory", async () => {
    expect(await emulators.compactTable()).toBe(false);
  });

  it("gives clients this run's credentials for its endpoints, the given keys for others, and the local region", () => {
    expect(localClientConfig(emulators.sqsEndpoint)).toMatchObject({
      endpoint: emulators.sqsEndpoint,
      region: "us-east-1",
      credentials: {
        accessKeyId: emulators.credentials.accessKeyId,
        secretAccessKey: emulators.credentials.secretAccessKey,
      },
    });
    // This process's own dynalite is reached over the worker channel (no port), which stamps instead of signing.
    const table = localClientConfig(emulators.dynamodbEndpoint);
    expect(table.requestHandler).toBeDefined();
    expect(table.httpAuthSchemes?.map((s) => s.schemeId)).toEqual(["aws.auth#sigv4"]);
    const keys = { accessKeyId: "LOCLOTHER", secretAccessKey: "other-secret" };
    expect(localClientConfig("http://127.0.0.1:1", keys)).toEqual({
      endpoint: "http://127.0.0.1:1",
      region: "us-east-1",
      credentials: keys,
    });
    expect(process.env.AWS_EC2_METADATA_DISABLED).toBe("true");
  });
});

// One kept table (a state directory) for both: each test has a table of its own; the iterator count is taken right
// after the iterator test's reads (the compaction test's Scan reads to the end too), and the compaction test's 2 MB
// bound on the directory leaves room for the other table's 30 small items.
describe("a kept table that stays up (issue 39: claims serve grew with every claim)", () => {
  let stateDir: string;
  let emu: Emulators;
  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), "claims-emulators-kept-"));
    emu = await startEmulators({ stateDir });
  });
  afterAll(async () => {
    await emu?.stop();
    await rm(stateDir, { recursive: true, force: true });
  });

  it("closes every LevelDB iterator its Queries and Scans open, read to the end or cut off by a Limit", async () => {
    const ddb = new DynamoDBClient(localClientConfig(emu.dynamodbEndpoint));
    try {
      await ddb.send(
        new CreateTableCommand({
          TableName: "many",
          BillingMode: "PAY_PER_REQUEST",
          AttributeDefinitions: [
            { AttributeName: "pk", AttributeType: "S" },
            { AttributeName: "sk", AttributeType: "S" },
          ],
          KeySchema: [
            { AttributeName: "pk", KeyType: "HASH" },
            { AttributeName: "sk", KeyType: "RANGE" },
          ],
        }),
      );
      await waitUntilTableExists(
        { client: ddb, maxWaitTime: 10, minDelay: 0.05, maxDelay: 0.1 },
        { TableName: "many" },
      );
      for (let i = 0; i < 30; i++)
        await ddb.send(new PutItemCommand({ TableName: "many", Item: { pk: { S: "p" }, sk: { S: `s${i}` } } }));
      for (let i = 0; i < 150; i++) {
        const page = await ddb.send(
          new QueryCommand({
            TableName: "many",
            KeyConditionExpression: "pk = :p",
            ExpressionAttributeValues: { ":p": { S: "p" } },
            Limit: 2,
          }),
        );
        expect(page.Count).toBe(2);
      }
      for (let i = 0; i < 20; i++) expect((await ddb.send(new ScanCommand({ TableName: "many" }))).Count).toBe(30);
      // Each of those 170 reads opened an iterator: every one is closed (dynalite 4.0.0 left them all open).
      const memory = await emu.memory();
      expect(memory.dynalite).toMatchObject({ iterators: 0 });
      expect(memory.fauxqs?.used).toBeGreaterThan(0);
    } finally {
      ddb.destroy();
    }
  });

  it("compacts the table's files while running: what was overwritten is gone, what is current is kept", async () => {
    const ddb = new DynamoDBClient(localClientConfig(emu.dynamodbEndpoint));
    const bytes = async () => {
      let total = 0;
      for (const name of await readdir(join(stateDir, "dynamodb")))
        total += (await stat(join(stateDir, "dynamodb", name))).size;
      return total;
    };
    try {
      await ddb.send(pkTableCommand("rewritten"));
      await waitUntilTableExists(
        { client: ddb, maxWaitTime: 10, minDelay: 0.05, maxDelay: 0.1 },
        { TableName: "rewritten" },
      );
      // 20 items of 4 KB (incompressible), each written 100 times: ~8 MB written, 80 KB current.
      for (let round = 0; round < 100; round++)
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            ddb.send(
              new PutItemCommand({
                TableName: "rewritten",
                Item: { pk: { S: `k${i}` }, round: { N: String(round) }, v: { S: randomText(4096) } },
              }),
            ),
          ),
        );
      expect(await emu.compactTable()).toBe(true);
      // What is left is about the current items (plus LevelDB's log and manifest), not the 8 MB written.
      expect(await bytes()).toBeLessThan(2_000_000);
      const items = (await ddb.send(new ScanCommand({ TableName: "rewritten", ConsistentRead: true }))).Items ?? [];
      expect(items.map((i) => i.round?.N)).toEqual(Array(20).fill("99"));
    } finally {
      ddb.destroy();
    }
  });
});

/** `n` characters that do not compress (random bytes in base64; one call, not a callback a byte). */
function randomText(n: number): string {
  return randomBytes(Math.ceil((n * 3) / 4))
    .toString("base64")
    .slice(0, n);
}

describe("stopping the emulators", () => {
  // dynalite closes its LevelDB once its sockets are gone, and a Scan still reading a closed one throws uncaught
  // (the chaos runs' restarts ended the process that way): a stop lets the requests in progress be answered first.
  it("answers the Scans in progress before it closes the kept table", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "claims-emulators-stop-"));
    const emu = await startEmulators({ stateDir });
    // The stop must come once every Scan is on its way to dynalite (not before the SDK has sent it, which a busy
    // machine can delay): the channel's handler posts a request as it is called, so count the calls.
    const config = localClientConfig(emu.dynamodbEndpoint);
    const channel = config.requestHandler!;
    let sent = 0;
    let onSent: (() => void) | undefined;
    const client = new DynamoDBClient({
      ...config,
      requestHandler: {
        ...channel,
        handle: (request: Parameters<typeof channel.handle>[0]) => {
          const answer = channel.handle(request);
          sent++;
          onSent?.();
          return answer;
        },
      },
    });
    try {
      await client.send(pkTableCommand("scan-me"));
      await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          client.send(
            new PutItemCommand({ TableName: "scan-me", Item: { pk: { S: `k${i}` }, v: { S: "x".repeat(200) } } }),
          ),
        ),
      );
      const before = sent;
      const allSent = new Promise<void>((resolve) => {
        onSent = () => {
          if (sent - before === 10) resolve();
        };
      });
      const scans = Array.from({ length: 10 }, () => client.send(new ScanCommand({ TableName: "scan-me" })));
      await allSent;
      await emu.stop();
      const answered = await Promise.allSettled(scans);
      const refused = answered.flatMap((a) => (a.status === "rejected" ? [String(a.reason)] : []));
      expect(
        answered
          .filter((a) => a.status === "fulfilled")
          .map((a) => (a as PromiseFulfilledResult<{ Count?: number }>).value.Count),
        `refused: ${refused.join("; ")}`,
      ).toEqual(Array(10).fill(200));
    } finally {
      client.destroy();
      await emu.stop();
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it("closes every endpoint and tolerates a second stop", async () => {
    const emulators = await startEmulators();
    const endpoints = [emulators.dynamodbEndpoint, emulators.sqsEndpoint, emulators.eventsEndpoint];
    await emulators.stop();
    await emulators.stop();
    for (const endpoint of endpoints) await expect(fetch(endpoint, { method: "POST" })).rejects.toThrow();
  });

  it("lets a process that used all three endpoints exit on its own", async () => {
    const emulatorsModule = JSON.stringify(fileURLToPath(new URL("./emulators.ts", import.meta.url)));
    const code = `
      import { startEmulators, localClientConfig } from ${emulatorsModule};
      import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
      import { SQSClient, ListQueuesCommand } from "@aws-sdk/client-sqs";
      import { EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
      const e = await startEmulators();
      await new DynamoDBClient(localClientConfig(e.dynamodbEndpoint)).send(new ListTablesCommand({}));
      await new SQSClient(localClientConfig(e.sqsEndpoint)).send(new ListQueuesCommand({}));
      await new EventBridgeClient(localClientConfig(e.eventsEndpoint)).send(new PutEventsCommand({ Entries: [{ EventBusName: "claims", Source: "s", DetailType: "d", Detail: "{}" }] }));
      await e.stop();
      console.log("stopped");
    `;
    // A leaked socket, timer or server would keep the child alive until the timeout kills it.
    const { stdout } = await run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      timeout: 20_000,
    });
    expect(stdout.trim()).toBe("stopped");
  });

  it("reports which emulator failed to start and stops the others", async () => {
    const dir = await mkdtemp(join(tmpdir(), "claims-bad-"));
    const notADir = join(dir, "file");
    await writeFile(notADir, "x");
    try {
      await expect(startEmulators({ dataDir: join(notADir, "sub") })).rejects.toSatisfy(
        (e: unknown) => e instanceof EmulatorStartError && e.message.includes("local EventBridge"),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
