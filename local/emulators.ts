// The embedded AWS stack: dynalite (DynamoDB), fauxqs (SQS) and the local EventBridge bus, all
// in-process on random ports of 127.0.0.1 only. Production handlers and SDK clients run unchanged
// against these endpoints; only `endpoint` and dummy credentials differ. In memory by default; with
// `stateDir` the table lives in LevelDB under `<stateDir>/dynamodb` and the queues' messages in the
// journal `<stateDir>/queues.jsonl`, so both survive a restart, `kill -9` included.
import { mkdirSync } from "node:fs";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { join } from "node:path";
import dynalite from "dynalite";
import { EmulatorStartError } from "./emulators-errors.ts";
import { startLocalBus } from "./eventbridge/server.ts";
import type { LocalBus, LocalBusOptions } from "./eventbridge/server.ts";
import { openQueueJournal } from "./queue-journal.ts";
import type { QueueJournal } from "./queue-journal.ts";
import { startSqsEmulator } from "./sqs-emulator.ts";

/** Region every local client and emulator uses. */
export const LOCAL_REGION = "us-east-1";

/** The AWS SDK client settings for a local endpoint: static dummy credentials, fixed region. */
export type LocalClientConfig = {
  readonly endpoint: string;
  readonly region: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
};

/** Options of `startEmulators`. */
export type StartEmulatorsOptions = {
  /** Local data directory; the bus appends `events.jsonl` there. Without it nothing is written. */
  readonly dataDir?: string;
  /** Where the table and the queue journal are kept; without it both are in memory and gone at the stop. */
  readonly stateDir?: string;
  /** Rules, clock, ids, retries and test hooks of the local bus. */
  readonly bus?: Omit<LocalBusOptions, "dataDir">;
};

/** The running emulators. */
export type Emulators = {
  readonly dynamodbEndpoint: string;
  readonly sqsEndpoint: string;
  readonly eventsEndpoint: string;
  /** The local bus: add targets to its rules, read its dead letters. */
  readonly bus: LocalBus;
  /** The journal of the queues' messages (with `stateDir`): what it recovered is to be sent again once the queues exist. */
  readonly queueJournal: QueueJournal | undefined;
  /** Stops the bus (after its deliveries), then fauxqs and dynalite; safe to call twice. */
  stop(): Promise<void>;
};

/** SDK client config for a local endpoint: `new SQSClient(localClientConfig(emulators.sqsEndpoint))`. */
export function localClientConfig(endpoint: string): LocalClientConfig {
  return { endpoint, region: LOCAL_REGION, credentials: { accessKeyId: "local", secretAccessKey: "local" } };
}

/** Starts dynalite, fauxqs and the local bus on 127.0.0.1, random ports (in memory unless `stateDir` is given). */
export async function startEmulators(options: StartEmulatorsOptions = {}): Promise<Emulators> {
  // Without credentials the SDK probes the EC2 metadata address; local clients never need it.
  process.env.AWS_EC2_METADATA_DISABLED = "true";
  let queueJournal: QueueJournal | undefined;
  let tablePath: string | undefined;
  if (options.stateDir !== undefined) {
    try {
      tablePath = join(options.stateDir, "dynamodb");
      mkdirSync(tablePath, { recursive: true });
      queueJournal = openQueueJournal(join(options.stateDir, "queues.jsonl"));
    } catch (error) {
      throw new EmulatorStartError(`the local stack cannot keep its state in ${options.stateDir}: ${(error as Error).message}`, error);
    }
  }

  const [dynamo, sqs, bus] = await Promise.allSettled([
    startDynalite(tablePath),
    startSqsEmulator({ region: LOCAL_REGION, ...(queueJournal ? { journal: queueJournal } : {}) }),
    startLocalBus({ region: LOCAL_REGION, ...options.bus, ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }) }),
  ]);
  if (dynamo.status === "rejected" || sqs.status === "rejected" || bus.status === "rejected") {
    if (sqs.status === "rejected") queueJournal?.close();
    await Promise.allSettled([
      dynamo.status === "fulfilled" ? closeServer(dynamo.value) : undefined,
      sqs.status === "fulfilled" ? sqs.value.stop() : undefined,
      bus.status === "fulfilled" ? bus.value.stop() : undefined,
    ]);
    const failed = [
      dynamo.status === "rejected" ? ["dynalite", dynamo.reason] : undefined,
      sqs.status === "rejected" ? ["fauxqs", sqs.reason] : undefined,
      bus.status === "rejected" ? ["local EventBridge", bus.reason] : undefined,
    ].filter((f): f is [string, unknown] => f !== undefined);
    const detail = failed.map(([name, reason]) => `${name}: ${reason instanceof Error ? reason.message : String(reason)}`).join("; ");
    throw new EmulatorStartError(`the local stack did not start (${detail})`, failed[0]?.[1]);
  }

  const dynamoServer = dynamo.value;
  const { port } = dynamoServer.address() as AddressInfo;
  let stopped: Promise<void> | undefined;
  return {
    dynamodbEndpoint: `http://127.0.0.1:${port}`,
    sqsEndpoint: sqs.value.endpoint,
    eventsEndpoint: bus.value.endpoint,
    bus: bus.value,
    queueJournal,
    stop() {
      stopped ??= (async () => {
        await bus.value.stop();
        await Promise.all([sqs.value.stop(), closeServer(dynamoServer)]);
      })();
      return stopped;
    },
  };
}

/**
 * The table of a state directory on its own (no queues, no bus): how `claims replay|report` read what a
 * stopped `claims serve` kept. The caller holds the directory's lock (state-lock.ts).
 */
export async function startTableEmulator(stateDir: string): Promise<{ endpoint: string; stop(): Promise<void> }> {
  process.env.AWS_EC2_METADATA_DISABLED = "true";
  const server = await startDynalite(join(stateDir, "dynamodb"));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, stop: () => closeServer(server) };
}

async function startDynalite(path: string | undefined): Promise<Server> {
  // LevelDB appends every write to its log before dynalite answers, so an acknowledged write survives `kill -9`.
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(path === undefined ? {} : { path }) });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return server;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    // Keep-alive sockets of SDK clients would hold close() open.
    server.closeAllConnections();
  });
}
