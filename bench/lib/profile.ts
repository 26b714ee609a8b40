// What a claim causes on AWS, per claim, as bench/aws-requests.bench.ts measures it on the local stack
// and bench/cost.ts prices it: requests by service and operation, DynamoDB capacity by entity, queue
// sends, events, handler invocations with their time and log output, and what stays stored. Plus the
// deployment facts both need (function memory, queue consumers), from app/manifest.ts.
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { FUNCTIONS, LOGGING, QUEUES } from "../../app/manifest.ts";
import type { FunctionKey as FactFunctionKey, QueueRole as FactQueueRole } from "../../app/manifest.ts";

/** A Lambda function of the app (app/manifest.ts `FUNCTIONS`). */
export type FunctionKey = FactFunctionKey;

/** Memory (MB) per function, from app/manifest.ts. */
export const FUNCTION_MEMORY_MB = Object.fromEntries(
  (Object.entries(FUNCTIONS) as [FunctionKey, { memory: string }][]).map(([fn, f]) => [
    fn,
    Number.parseInt(f.memory, 10),
  ]),
) as Readonly<Record<FunctionKey, number>>;

/** A work queue of the app (app/manifest.ts `QUEUES`). */
export type QueueRole = FactQueueRole;

/** The consumer of each queue and whether the queue is FIFO, from app/manifest.ts. */
export const QUEUE_CONSUMERS = Object.fromEntries(
  (Object.entries(QUEUES) as [QueueRole, { consumer: FunctionKey; fifo: boolean }][]).map(([role, q]) => [
    role,
    { fn: q.consumer, fifo: q.fifo },
  ]),
) as Readonly<Record<QueueRole, { fn: FunctionKey; fifo: boolean }>>;

/** The functions that call the LLM, one call per record: the consumers of the LLM queues. */
export const LLM_FUNCTIONS: readonly FunctionKey[] = Object.values(QUEUES)
  .filter((q) => q.llm)
  .map((q) => q.consumer);

/** How a claim arrives. */
export type ClaimKind = "structured" | "free_text";

/** DynamoDB usage of one entity (claim, session, audit, …), per claim. */
export type DynamoUsage = {
  reads: number;
  writes: number;
  /** Read request units (consumed capacity from the emulator: item size, consistency). */
  rru: number;
  /** Write request units of the table (consumed capacity: max of old and new item size, 1 KB units). */
  wru: number;
  /** Write request units of gsi1 (estimated from the written item: projection ALL, key changes cost a delete and a put). */
  gsiWru: number;
  /** Conditional writes that failed (each still costs at least 1 WRU on AWS; counted in `wru`). */
  conditionalFailures: number;
};

/** One Lambda function's work per claim, as measured on the local stack. */
export type InvocationUsage = {
  /** Invocations per claim (batches handed to the handler). */
  invocations: number;
  /** Queue records (or HTTP requests) per claim. */
  records: number;
  /** Handler wall time per claim, ms (local: dominated by the emulators). */
  handlerMs: number;
  /** Of which SDK calls were in flight, ms. */
  sdkMs: number;
  /**
   * Process CPU ms per claim while none of the handler's SDK calls was in flight: its own work. Measured
   * one claim at a time; a phase with claims in flight (where handlers overlap and this would count their
   * neighbours too) carries the one-at-a-time figure per record (see `withOwnCpu`).
   */
  cpuMs: number;
  /** SDK calls per claim by "Service.Operation" (for the AWS duration estimate). */
  calls: Record<string, number>;
  /** LLM calls per claim made by this function (the rules model answers at once; the bill for tokens is excluded). */
  llmCalls: number;
  /** Log lines the handler's Powertools logger wrote per claim, at the run's level. */
  logLines: number;
  /** UTF-8 bytes of those lines (without newlines) per claim. */
  logBytes: number;
  /** Of those, the success lines (they carry `sample_rate`; written for a sampled share on AWS): lines and bytes. Absent in older profiles: none. */
  successLines?: number;
  successBytes?: number;
  /** CloudWatch Embedded Metric Format lines (Powertools Metrics, written on AWS) and their bytes. Absent in older profiles: none. */
  metricLines?: number;
  metricBytes?: number;
  /**
   * For a queue consumer whose event source gathers batches over a window (the timers): the event source's own
   * SQS requests per claim as the local poller made them, its ReceiveMessage calls that returned messages (a
   * message's arrival ends a long poll; the empty ones are idle polling) and its DeleteMessageBatch calls (10
   * records each at most). Absent: one of each per invocation, exact for a queue without a window.
   */
  eventSourceReceives?: number;
  eventSourceDeletes?: number;
  /**
   * The vault's data-key lookups per claim that reached the store (issue 37: on AWS each is a consistent GetItem of
   * the key item, adapters/aws/kms-keys.ts; one per subject and invocation since the vault remembers it), the keys
   * made per claim (a PutItem; a KMS GenerateDataKey each before the branch keys), and the distinct invocation and
   * subject pairs whose key was found, not made there, and distinct subjects found per function (what KMS Decrypts
   * per claim cost with a container per invocation or per function and claim before the branch keys). Absent: none
   * counted.
   */
  keyLookups?: number;
  keysMade?: number;
  keyDecryptsPerInvocation?: number;
  keyDecryptsPerFunction?: number;
  /**
   * The invocations per claim that looked up any data key: since the branch keys (issue 37), what a fresh container
   * per invocation costs is one branch-key GetItem and KMS Decrypt each, whatever the subjects. Absent: not counted.
   */
  keyInvocations?: number;
};

/** `loaded` with each function's `cpuMs` replaced by the CPU per record of `alone` (measured one claim at a time) × its records. */
export function withOwnCpu(loaded: ClaimProfile, alone: ClaimProfile): ClaimProfile {
  const invocations: Partial<Record<FunctionKey, InvocationUsage>> = {};
  for (const [fn, u] of Object.entries(loaded.invocations) as [FunctionKey, InvocationUsage][]) {
    const a = alone.invocations[fn];
    invocations[fn] = { ...u, cpuMs: a && a.records > 0 ? (a.cpuMs / a.records) * u.records : u.cpuMs };
  }
  return { ...loaded, invocations };
}

/** SQS sends per claim into one queue, by the app's handlers. */
export type QueueUsage = { requests: number; chunks: number; messages: number };

/** Everything one claim caused, on average, in one phase. */
export type ClaimProfile = {
  kind: ClaimKind;
  /** Claims the averages are over. */
  claims: number;
  /** Handler requests per claim by service and operation (from the SDK middleware). */
  requests: Record<string, Record<string, number>>;
  dynamo: Record<string, DynamoUsage>;
  sqsSends: Partial<Record<QueueRole, QueueUsage>>;
  events: { requests: number; entries: number; chunks: number };
  /** Events the bus delivered to each rule's target queue, per claim. */
  busDeliveries: Record<string, number>;
  apiRequests: number;
  invocations: Partial<Record<FunctionKey, InvocationUsage>>;
};

/** What stays in the table per claim for one entity: items, their bytes, and their gsi1 entries. */
export type StoredUsage = {
  items: number;
  /** DynamoDB item size (attribute names + values), without the 100-byte per-item storage overhead. */
  bytes: number;
  /** gsi1 entries (projection ALL: the whole item again) and their bytes. */
  indexItems: number;
  indexBytes: number;
  /** Of the items, those with a TTL (`expires_at`: gone after the retention horizon) and their bytes. Absent in older profiles: none. */
  expiringItems?: number;
  expiringBytes?: number;
};

/** How the deployment logs: Lambda's system log level and the share of success lines written (app/manifest.ts LOGGING). */
export type LoggingConfig = { systemLogLevel: string; successSampleRate: number };

/** The deployment's logging now (app/manifest.ts), recorded with each profile. */
export const DEPLOYED_LOGGING: LoggingConfig = {
  systemLogLevel: LOGGING.systemLogLevel,
  successSampleRate: LOGGING.successSampleRate,
};

/** The logging of profiles recorded before it was recorded with them: Lambda's defaults, every line written. */
export const UNRECORDED_LOGGING: LoggingConfig = { systemLogLevel: "INFO", successSampleRate: 1 };

/** What the handlers' logs weighed over the whole run, at the level they ran at. */
export type LogSample = { level: string; lines: number; bytes: number; gzipBytes: number; outsideLines: number };

/** What bench/aws-requests.bench.ts writes to bench/out/aws-requests.json. */
export type AwsRequestsFile = {
  recordedAt: string;
  /** The commit the run measured (`git rev-parse --short HEAD`, "+dirty" with uncommitted changes). */
  commit: string;
  machine: string;
  note: string;
  /** One claim at a time: batches of one, the low-traffic case. */
  sequential: Record<ClaimKind, ClaimProfile>;
  /** Claims submitted concurrently: batch fill as under load. */
  concurrent: Record<ClaimKind, ClaimProfile>;
  /** The step-deadline timer of one claim firing after the claim was decided; undefined when not measured. */
  timerPath?: ClaimProfile;
  /** One client `GET /claims/{id}` (per GET, not per claim). */
  poll: ClaimProfile;
  /** Stored per claim by entity after the run (orders, reference data, left out). */
  stored: Record<string, StoredUsage>;
  logs: LogSample;
  /** The deployment's logging the profile is priced with; absent in profiles recorded before (UNRECORDED_LOGGING). */
  logging?: LoggingConfig;
};

const libDir = dirname(fileURLToPath(import.meta.url));
/** Where bench/aws-requests.bench.ts writes the request profile and bench/cost.bench.ts reads it. */
export const AWS_REQUESTS_FILE = join(libDir, "..", "out", "aws-requests.json");
/** The profile measured before the cost levers (committed), priced beside the fresh one. */
export const BASELINE_FILE = join(libDir, "..", "cost-baseline.json");

/** Reads a request profile file, naming the file when it is missing or written by an older bench. */
export async function readAwsRequests(path: string = AWS_REQUESTS_FILE): Promise<AwsRequestsFile> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (cause) {
    throw new Error(`cannot read ${path} (run \`npm run bench -- aws-requests\` first): ${(cause as Error).message}`, {
      cause,
    });
  }
  const parsed = JSON.parse(text) as Partial<AwsRequestsFile>;
  for (const key of ["sequential", "concurrent", "poll", "stored", "logs"] as const) {
    if (parsed[key] === undefined)
      throw new Error(
        `${path} has no "${key}" (written by an older bench? run \`npm run bench -- aws-requests\` again)`,
      );
  }
  return parsed as AwsRequestsFile;
}
