// The embedded AWS stack: dynalite (DynamoDB), fauxqs (SQS) and the local EventBridge bus, all
// in-process on random ports of 127.0.0.1 only. Production handlers and SDK clients run unchanged
// against these endpoints; only `endpoint` and dummy credentials differ. In memory by default; with
// `stateDir` the table lives in LevelDB under `<stateDir>/dynamodb` and the queues' messages in the
// journal `<stateDir>/queues.jsonl`, so both survive a restart, `kill -9` included. dynalite and fauxqs run
// in worker threads (dynalite-worker.mjs, sqs-worker.mjs): their request handling (LevelDB, Fastify, long
// polls) no longer queues behind the handlers on the main thread.
//
// Loopback is not a boundary (any local program and any web page can reach it): every port requires a
// SigV4 signature made with this run's random keys (local/credentials.ts), checked, and answers no CORS.
// dynalite and fauxqs listen on no port of their own: a signed front (signed-front.ts) is their door. With
// `stateDir` the keys and endpoints are written owner-only to `<dataDir>/local-credentials.json`. This
// process's clients of its own emulators go in-process (dynalite's and fauxqs's worker channels, the bus's own
// request handling), which is no port, and stamp instead of sign.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import { inProcessHandlerAt } from "./worker-channel.ts";
import type { InProcessRequestHandler } from "./worker-channel.ts";
import { writeLocalCredentials } from "./credentials.ts";
import { endpointKeys, newSigningKeys } from "./auth/keys.ts";
import type { LocalCredentials } from "./credentials.ts";
import { startWorkerEmulator } from "./worker-emulator.ts";
import type { WorkerEmulator } from "./worker-emulator.ts";
import type { ThreadMemory } from "./memory.ts";
import type { SigningKeys } from "./auth/sigv4.ts";
import { EmulatorStartError } from "./errors.ts";
import { startLocalBus } from "./eventbridge/server.ts";
import type { LocalBus, LocalBusOptions } from "./eventbridge/server.ts";
import { openQueueJournal } from "./queue-journal.ts";
import type { QueueJournal } from "./queue-journal.ts";
import { startSqsEmulator } from "./sqs-emulator.ts";

/** Region every local client and emulator uses. */
export const LOCAL_REGION = "us-east-1";

/** The SDK's auth schemes setting (the same type in every v3 client). */
type HttpAuthSchemes = NonNullable<DynamoDBClientConfig["httpAuthSchemes"]>;

/** The AWS SDK client settings for a local endpoint: this run's credentials, fixed region (and, in-process, a signer that only stamps). */
export type LocalClientConfig = {
  readonly endpoint: string;
  readonly region: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  readonly httpAuthSchemes?: HttpAuthSchemes;
  /** For an emulator this process started: its in-process way (a worker's channel, the bus's handler) instead of HTTP. */
  readonly requestHandler?: InProcessRequestHandler;
};

/** A SigV4-shaped Authorization header with a fixed signature, for the in-process channel only (no port, no check): SigV4's hashing was a tenth of the handlers' CPU. */
const LOCAL_SIGNER: HttpAuthSchemes[number]["signer"] = {
  async sign(request) {
    const { headers } = request as unknown as { headers: Record<string, string> };
    headers.authorization =
      "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/local/aws4_request, SignedHeaders=host, Signature=local";
    headers["x-amz-date"] = "20260101T000000Z";
    return request;
  },
};

/** Options of `startEmulators`. */
export type StartEmulatorsOptions = {
  /** Local data directory; the bus appends `events.jsonl` there. Without it nothing is written. */
  readonly dataDir?: string;
  /** Where the table and the queue journal are kept; without it both are in memory and gone at the stop. */
  readonly stateDir?: string;
  /** Rules, clock, ids, retries and test hooks of the local bus. */
  readonly bus?: Omit<LocalBusOptions, "dataDir" | "keys">;
};

/** The running emulators. */
export type Emulators = {
  /** This run's credentials and endpoints (what `<dataDir>/local-credentials.json` holds with `stateDir`). */
  readonly credentials: LocalCredentials;
  readonly dynamodbEndpoint: string;
  readonly sqsEndpoint: string;
  readonly eventsEndpoint: string;
  /** The local bus: add targets to its rules, read its dead letters. */
  readonly bus: LocalBus;
  /** The journal of the queues' messages (with `stateDir`): what it recovered is to be sent again once the queues exist. */
  readonly queueJournal: QueueJournal | undefined;
  /** The emulators' threads' memory (memory report): dynalite's with LevelDB's figures, fauxqs's. */
  memory(): Promise<{ dynalite: ThreadMemory | undefined; fauxqs: ThreadMemory | undefined }>;
  /** Compacts the table's LevelDB files while running (what only a restart did); false in memory. */
  compactTable(): Promise<boolean>;
  /** Stops the bus (after its deliveries), then fauxqs and dynalite; safe to call twice. */
  stop(): Promise<void>;
};

/**
 * SDK client config for a local endpoint: `new SQSClient(localClientConfig(emulators.sqsEndpoint))`. It signs
 * with the keys of an emulator this process started at that endpoint, else with `keys` (another process's
 * run, from its credentials file); an emulator of this process is reached in-process (no HTTP).
 */
export function localClientConfig(endpoint: string, keys?: SigningKeys): LocalClientConfig {
  const inProcess = inProcessHandlerAt(endpoint);
  const { accessKeyId, secretAccessKey } = endpointKeys(endpoint) ??
    keys ?? { accessKeyId: "local", secretAccessKey: "local" };
  const base = { endpoint, region: LOCAL_REGION, credentials: { accessKeyId, secretAccessKey } };
  if (inProcess === undefined) return base;
  return {
    ...base,
    httpAuthSchemes: [
      {
        schemeId: "aws.auth#sigv4",
        identityProvider: (config) => config.getIdentityProvider("aws.auth#sigv4"),
        signer: LOCAL_SIGNER,
      },
    ],
    requestHandler: inProcess,
  };
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
      throw new EmulatorStartError(
        `the local stack cannot keep its state in ${options.stateDir}: ${(error as Error).message}`,
        error,
      );
    }
  }

  const keys = newSigningKeys();
  const [dynamo, sqs, bus] = await Promise.allSettled([
    startDynalite(tablePath, keys),
    startSqsEmulator({ region: LOCAL_REGION, keys, ...(queueJournal ? { journal: queueJournal } : {}) }),
    startLocalBus({
      region: LOCAL_REGION,
      ...options.bus,
      keys,
      ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    }),
  ]);
  if (dynamo.status === "rejected" || sqs.status === "rejected" || bus.status === "rejected") {
    if (sqs.status === "rejected") queueJournal?.close();
    await Promise.allSettled([
      dynamo.status === "fulfilled" ? dynamo.value.close() : undefined,
      sqs.status === "fulfilled" ? sqs.value.stop() : undefined,
      bus.status === "fulfilled" ? bus.value.stop() : undefined,
    ]);
    const failed = [
      dynamo.status === "rejected" ? ["dynalite", dynamo.reason] : undefined,
      sqs.status === "rejected" ? ["fauxqs", sqs.reason] : undefined,
      bus.status === "rejected" ? ["local EventBridge", bus.reason] : undefined,
    ].filter((f): f is [string, unknown] => f !== undefined);
    const detail = failed
      .map(([name, reason]) => `${name}: ${reason instanceof Error ? reason.message : String(reason)}`)
      .join("; ");
    throw new EmulatorStartError(`the local stack did not start (${detail})`, failed[0]?.[1]);
  }

  const dynamoServer = dynamo.value;
  const credentials: LocalCredentials = {
    region: LOCAL_REGION,
    ...keys,
    endpoints: { dynamodb: dynamoServer.endpoint, sqs: sqs.value.endpoint, events: bus.value.endpoint },
  };
  if (options.stateDir !== undefined && options.dataDir !== undefined) {
    try {
      writeLocalCredentials(options.dataDir, credentials);
    } catch (error) {
      await Promise.allSettled([dynamoServer.close(), sqs.value.stop(), bus.value.stop()]);
      throw new EmulatorStartError(
        `the local stack cannot write its credentials in ${options.dataDir}: ${(error as Error).message}`,
        error,
      );
    }
  }
  let stopped: Promise<void> | undefined;
  return {
    credentials,
    dynamodbEndpoint: dynamoServer.endpoint,
    sqsEndpoint: sqs.value.endpoint,
    eventsEndpoint: bus.value.endpoint,
    bus: bus.value,
    queueJournal,
    memory: async () => {
      const [dynalite, fauxqs] = await Promise.all([dynamoServer.memory(), sqs.value.memory()]);
      return { dynalite, fauxqs };
    },
    compactTable: () => (tablePath === undefined ? Promise.resolve(false) : dynamoServer.compact()),
    stop() {
      stopped ??= (async () => {
        await bus.value.stop();
        await Promise.all([sqs.value.stop(), dynamoServer.close()]);
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
  const server = await startDynalite(join(stateDir, "dynamodb"), newSigningKeys());
  return { endpoint: server.endpoint, stop: () => server.close() };
}

/** Starts dynalite in a worker thread (in memory, or LevelDB under `path`) behind a signed front on a random port of 127.0.0.1. */
function startDynalite(path: string | undefined, keys: SigningKeys): Promise<WorkerEmulator> {
  return startWorkerEmulator({
    name: "dynalite",
    script: new URL("./dynalite-worker.mjs", import.meta.url),
    workerData: path === undefined ? {} : { path },
    keys,
    attachable: true,
    // In memory only: a table on LevelDB files gets a thread of its own (local/worker-emulator.ts).
    keepable: path === undefined,
  });
}
