// The embedded AWS stack: dynalite (DynamoDB), fauxqs (SQS) and the local EventBridge bus, all
// in-process on random loopback ports. Production handlers and SDK clients run unchanged against
// these endpoints; only `endpoint` and dummy credentials differ.
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import dynalite from "dynalite";
import { startFauxqs } from "fauxqs";
import type { FauxqsServer } from "fauxqs";
import { EmulatorStartError } from "./emulators-errors.ts";
import { startLocalBus } from "./eventbridge/server.ts";
import type { LocalBus, LocalBusOptions } from "./eventbridge/server.ts";

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
  /** The fauxqs server (inspectQueue, purgeAll) for tests and diagnostics. */
  readonly fauxqs: FauxqsServer;
  /** Stops the bus (after its deliveries), then fauxqs and dynalite; safe to call twice. */
  stop(): Promise<void>;
};

/** SDK client config for a local endpoint: `new SQSClient(localClientConfig(emulators.sqsEndpoint))`. */
export function localClientConfig(endpoint: string): LocalClientConfig {
  return { endpoint, region: LOCAL_REGION, credentials: { accessKeyId: "local", secretAccessKey: "local" } };
}

/** Starts dynalite (in memory), fauxqs and the local bus on 127.0.0.1, random ports. */
export async function startEmulators(options: StartEmulatorsOptions = {}): Promise<Emulators> {
  // Without credentials the SDK probes the EC2 metadata address; local clients never need it.
  process.env.AWS_EC2_METADATA_DISABLED = "true";

  const [dynamo, sqs, bus] = await Promise.allSettled([
    startDynalite(),
    startFauxqs({ port: 0, logger: false, host: "127.0.0.1", defaultRegion: LOCAL_REGION }),
    startLocalBus({ region: LOCAL_REGION, ...options.bus, ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }) }),
  ]);
  if (dynamo.status === "rejected" || sqs.status === "rejected" || bus.status === "rejected") {
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
    sqsEndpoint: sqs.value.address,
    eventsEndpoint: bus.value.endpoint,
    bus: bus.value,
    fauxqs: sqs.value,
    stop() {
      stopped ??= (async () => {
        await bus.value.stop();
        await Promise.all([sqs.value.stop(), closeServer(dynamoServer)]);
      })();
      return stopped;
    },
  };
}

async function startDynalite(): Promise<Server> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
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
