// The emulators' threads kept from one stack to the next in a process (local/worker-emulator.ts): a kept thread starts
// the next emulator with nothing of the last one — an in-memory table and queues start empty — a thread is kept only
// once its emulator stopped, and a table on a state directory's files runs on a thread of its own.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import { CreateQueueCommand, ListQueuesCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, describe, expect, it } from "vitest";
import { localClientConfig, startEmulators } from "./emulators.ts";
import { pkTableCommand } from "./testing/pk-table.ts";
import type { Emulators } from "./emulators.ts";
import { keptEmulatorThreads } from "./worker-emulator.ts";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function stateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "claims-kept-threads-"));
  dirs.push(dir);
  return dir;
}

/** A table with one item and a queue with one message, on `e`. */
async function fill(e: Emulators): Promise<void> {
  const ddb = new DynamoDBClient(localClientConfig(e.dynamodbEndpoint));
  await ddb.send(pkTableCommand("kept"));
  await waitUntilTableExists({ client: ddb, maxWaitTime: 30, minDelay: 1 }, { TableName: "kept" });
  await ddb.send(new PutItemCommand({ TableName: "kept", Item: { pk: { S: "a" }, n: { N: "1" } } }));
  const sqs = new SQSClient(localClientConfig(e.sqsEndpoint));
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "kept" }));
  await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: "left behind" }));
}

async function tablesAndQueues(e: Emulators): Promise<{ tables: string[]; queues: string[] }> {
  const ddb = new DynamoDBClient(localClientConfig(e.dynamodbEndpoint));
  const sqs = new SQSClient(localClientConfig(e.sqsEndpoint));
  const tables = (await ddb.send(new ListTablesCommand({}))).TableNames ?? [];
  const queues = (await sqs.send(new ListQueuesCommand({}))).QueueUrls ?? [];
  return { tables, queues: queues.map((url) => url.split("/").at(-1)!) };
}

describe("emulator threads kept for the next start", () => {
  it("keeps each thread once its emulator stopped, and starts the next emulator on it with nothing of the last", async () => {
    const first = await startEmulators();
    expect(keptEmulatorThreads()).toEqual([]); // taken by this start, or none yet
    await fill(first);
    expect(await tablesAndQueues(first)).toEqual({ tables: ["kept"], queues: ["kept"] });
    await first.stop();
    expect(keptEmulatorThreads()).toEqual(["dynalite-worker.mjs", "sqs-worker.mjs"]);

    const second = await startEmulators();
    expect(keptEmulatorThreads()).toEqual([]); // the kept threads run this one
    expect(await tablesAndQueues(second)).toEqual({ tables: [], queues: [] });
    const memory = await second.memory();
    expect(memory.dynalite?.used).toBeGreaterThan(0);
    expect(memory.fauxqs?.used).toBeGreaterThan(0);
    await second.stop();
    expect(keptEmulatorThreads()).toEqual(["dynalite-worker.mjs", "sqs-worker.mjs"]);
  });

  it("gives a table on a state directory's files a thread of its own, neither taken from the kept ones nor kept", async () => {
    const inMemory = await startEmulators();
    await inMemory.stop();
    expect(keptEmulatorThreads()).toEqual(["dynalite-worker.mjs", "sqs-worker.mjs"]);

    const dir = await stateDir();
    const first = await startEmulators({ stateDir: dir });
    expect(keptEmulatorThreads()).toEqual(["dynalite-worker.mjs"]); // fauxqs took its kept thread, dynalite did not
    await fill(first);
    await first.stop();
    expect(keptEmulatorThreads()).toEqual(["dynalite-worker.mjs", "sqs-worker.mjs"]);

    const again = await startEmulators({ stateDir: dir });
    const ddb = new DynamoDBClient(localClientConfig(again.dynamodbEndpoint));
    const item = await ddb.send(new GetItemCommand({ TableName: "kept", Key: { pk: { S: "a" } } }));
    expect(item.Item?.n).toEqual({ N: "1" });
    await again.stop();
  });
});
