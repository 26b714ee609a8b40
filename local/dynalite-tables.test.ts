// dynalite's worker keeps the table descriptions its item requests read (local/dynalite-worker.mjs): a table
// deleted or created again with another key must be seen by the next item request at once.
import {
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  PutItemCommand,
  ResourceNotFoundException,
  waitUntilTableExists,
  waitUntilTableNotExists,
} from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localClientConfig, startEmulators } from "./emulators.ts";
import type { Emulators } from "./emulators.ts";

const wait = { minDelay: 0.05, maxDelay: 0.1, maxWaitTime: 10 };

describe("dynalite's kept table descriptions", () => {
  let emulators: Emulators;
  let ddb: DynamoDBClient;

  beforeAll(async () => {
    emulators = await startEmulators();
    ddb = new DynamoDBClient(localClientConfig(emulators.dynamodbEndpoint));
  });
  afterAll(async () => {
    ddb?.destroy();
    await emulators?.stop();
  });

  const create = async (key: string) => {
    await ddb.send(
      new CreateTableCommand({
        TableName: "kept",
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: [{ AttributeName: key, AttributeType: "S" }],
        KeySchema: [{ AttributeName: key, KeyType: "HASH" }],
      }),
    );
    await waitUntilTableExists({ client: ddb, ...wait }, { TableName: "kept" });
  };
  const put = (item: Record<string, { S: string }>) => ddb.send(new PutItemCommand({ TableName: "kept", Item: item }));

  it("refuses items once the table is deleted, and checks them against the key of the table created again", async () => {
    await create("pk");
    await put({ pk: { S: "a" } });
    await put({ pk: { S: "b" } });
    await ddb.send(new DeleteTableCommand({ TableName: "kept" }));
    await waitUntilTableNotExists({ client: ddb, ...wait }, { TableName: "kept" });
    await expect(put({ pk: { S: "c" } })).rejects.toBeInstanceOf(ResourceNotFoundException);

    await create("id");
    // The old key is refused, the new one taken: the description read is the new table's.
    await expect(put({ pk: { S: "d" } })).rejects.toThrow(/key/i);
    await put({ id: { S: "e" } });
  });

  it("refuses items from the moment DeleteTable answers", async () => {
    await put({ id: { S: "g" } });
    await ddb.send(new DeleteTableCommand({ TableName: "kept" }));
    await expect(put({ id: { S: "h" } })).rejects.toBeInstanceOf(ResourceNotFoundException);
  });
});
