// Test support: the real emulators (dynalite, fauxqs, local bus) with real SDK clients, started once per
// test file and stopped after it. Every `newTable()` is a fresh single table.
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll } from "vitest";
import { localClientConfig, startEmulators } from "../../local/emulators.ts";
import type { Emulators, StartEmulatorsOptions } from "../../local/emulators.ts";
import { createTable } from "./table.ts";

/** The running stack and its clients (valid inside tests, after beforeAll). */
export type EmulatedAws = {
  readonly emulators: Emulators;
  readonly dynamo: DynamoDBClient;
  readonly doc: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly events: EventBridgeClient;
  /** Creates a fresh table and returns its name. */
  newTable(): Promise<string>;
};

let tables = 0;

/** Starts the emulators before the file's tests and stops them after; returns a handle filled in by beforeAll. */
export function useEmulatedAws(options: StartEmulatorsOptions = {}): EmulatedAws {
  const handle = {} as { -readonly [K in keyof EmulatedAws]: EmulatedAws[K] };
  beforeAll(async () => {
    const emulators = await startEmulators({ ...options, bus: { retryDelayMs: () => 0, ...options.bus } });
    const dynamo = new DynamoDBClient(localClientConfig(emulators.dynamodbEndpoint));
    Object.assign(handle, {
      emulators,
      dynamo,
      doc: DynamoDBDocumentClient.from(dynamo),
      sqs: new SQSClient(localClientConfig(emulators.sqsEndpoint)),
      events: new EventBridgeClient(localClientConfig(emulators.eventsEndpoint)),
      async newTable() {
        const name = `claims-test-${++tables}`;
        await createTable(dynamo, name);
        return name;
      },
    } satisfies EmulatedAws);
  });
  afterAll(async () => {
    handle.dynamo?.destroy();
    handle.sqs?.destroy();
    handle.events?.destroy();
    await handle.emulators?.stop();
  });
  return handle;
}
