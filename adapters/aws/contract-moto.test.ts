// The shared port contracts against the DynamoDB adapters on a second, independent implementation of DynamoDB
// (moto's server, when installed: adapters/aws/testing/moto.ts), through the real SDK — the same suite as
// contract-dynamo.test.ts runs on dynalite. Skipped with a notice where moto is not installed.
// moto falls short of DynamoDB in one way these contracts notice: it does not serialise concurrent conditional
// writes to one item, which real DynamoDB and dynalite do (without it the racing-reservation cases find a ledger
// entry whose sum broke — and the ledger refuses to read it, failing closed). The client here sends one request at
// a time, which gives every item the serial order DynamoDB guarantees per item (and more), so the racing cases
// check the adapters' logic on moto too.
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { afterAll, describe, it } from "vitest";
import { describeDynamoPortContracts } from "./contract-dynamo.test-kit.ts";
import { createTable } from "./table.ts";
import { motoAvailable, motoClientConfig, useMoto } from "./testing/moto.ts";

const moto = useMoto();
let client: DynamoDBClient | undefined;
let doc: DynamoDBDocumentClient | undefined;
let tables = 0;
afterAll(() => client?.destroy());

/** A client that sends one request at a time (see above). */
function serialClient(endpoint: string): DynamoDBClient {
  const c = new DynamoDBClient(motoClientConfig(endpoint));
  let queue: Promise<unknown> = Promise.resolve();
  c.middlewareStack.add(
    (next) => (args) => {
      const run = queue.then(() => next(args));
      queue = run.catch(() => undefined);
      return run;
    },
    { step: "finalizeRequest", name: "oneRequestAtATime" },
  );
  return c;
}

async function newTable(): Promise<{ doc: DynamoDBDocumentClient; tableName: string }> {
  client ??= serialClient(moto.endpoint);
  doc ??= DynamoDBDocumentClient.from(client);
  const tableName = `claims-moto-${++tables}`;
  await createTable(client, tableName);
  return { doc, tableName };
}

if (!motoAvailable()) {
  describe("the port contracts on moto (an independent DynamoDB)", () => {
    it.skip('skipped: moto_server is not installed (pip install "moto[server]")', () => undefined);
  });
} else {
  describeDynamoPortContracts("moto", newTable);
}
