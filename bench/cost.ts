// What a claim costs on AWS (issues 5, 13): a pure model from the per-claim profile measured on the local
// stack (bench/aws-requests.bench.ts) to dollars per million claims at list prices, line by line, LLM
// tokens excluded: API Gateway, Lambda (requests, duration, time waiting on the LLM), SQS, DynamoDB,
// EventBridge, CloudWatch Logs (the handlers' lines, Lambda's platform lines, the API access log), the
// step-timer path, client GETs, storage per month kept, and Step Functions Standard and Express as
// the alternative orchestrators. `costTable` is the one table bench/RESULTS.md shows.
import { accessLogLine } from "../app/access-log.ts";
import { eventSourceBatch, FUNCTIONS, LINKS, TIMER_BATCHING_WINDOW_SECONDS } from "../app/manifest.ts";
import { FUNCTION_MEMORY_MB, LLM_FUNCTIONS, QUEUE_CONSUMERS, UNRECORDED_LOGGING } from "./lib/profile.ts";
import type {
  AwsRequestsFile,
  ClaimKind,
  ClaimProfile,
  DynamoUsage,
  FunctionKey,
  InvocationUsage,
  LoggingConfig,
  QueueRole,
  QueueUsage,
  StoredUsage,
} from "./lib/profile.ts";

// ---------------------------------------------------------------------------------------------
// Prices
// ---------------------------------------------------------------------------------------------

/** Bytes in the GB AWS bills storage and log data by. */
export const GB = 2 ** 30;

/**
 * AWS list prices, us-east-1, on-demand, first tier, free tiers ignored (they vanish at a million
 * claims). Each with the public page it was checked against on the date below.
 */
export const PRICES = {
  region: "us-east-1",
  checkedOn: "2026-11-22",
  lambda: {
    /** $ per request (invocation): $0.20 per million. */
    request: 0.2 / 1e6,
    /** $ per GB-second on arm64 (Graviton), first 6 billion GB-s a month. */
    gbSecondArm64: 0.0000133334,
    /** Duration is billed per invocation, rounded up to 1 ms. */
    granularityMs: 1,
  },
  sqs: {
    /** $ per request on a standard queue ($0.40 per million), per 64 KiB chunk of payload. */
    standardRequest: 0.4 / 1e6,
    /** $ per request on a FIFO queue ($0.50 per million), per 64 KiB chunk. */
    fifoRequest: 0.5 / 1e6,
    chunkBytes: 64 * 1024,
  },
  dynamodb: {
    /** $ per write request unit (on-demand, $0.625 per million): 1 WRU writes up to 1 KB; GSI writes pay too. */
    wru: 0.625 / 1e6,
    /** $ per read request unit ($0.125 per million): 1 RRU = a strongly consistent read of up to 4 KB; eventually consistent = ½. */
    rru: 0.125 / 1e6,
    /** $ per GB-month of table and index storage (standard class); each item counts 100 bytes more. */
    storageGbMonth: 0.25,
    /** $ per GB-month of continuous backups (PITR, on in infra/storage.ts), on the table's size. */
    pitrGbMonth: 0.2,
    itemOverheadBytes: 100,
  },
  eventBridge: {
    /** $ per custom event published ($1.00 per million), per 64 KiB chunk of an entry. */
    customEvent: 1 / 1e6,
  },
  apiGateway: {
    /** $ per HTTP API request ($1.00 per million, first 300 million), metered in 512 KB increments. */
    httpRequest: 1 / 1e6,
  },
  cloudWatchLogs: {
    /** $ per GB ingested: Lambda logs and API Gateway access logs are vended logs, $0.50/GB for the first 10 TB a month. */
    ingestGb: 0.5,
    /** $ per GB-month stored (archived, compressed). */
    storageGbMonth: 0.03,
  },
  kms: {
    /** $ per KMS API request (GenerateDataKey, Decrypt: $0.03 per 10,000 symmetric requests). */
    request: 0.03 / 10_000,
  },
  stepFunctions: {
    /** $ per state transition of a Standard workflow ($0.025 per 1,000). */
    standardTransition: 0.025 / 1000,
    /** $ per Express workflow request ($1.00 per million). */
    expressRequest: 1 / 1e6,
    /** $ per GB-second of Express duration ($0.06 per GB-hour, first 1,000 GB-hours), billed per 100 ms and 64 MB. */
    expressGbSecond: 0.06 / 3600,
    expressIncrementMs: 100,
    expressMemoryMb: 64,
  },
} as const;

/** Where each price was checked (bench/RESULTS.md cites these). */
export const PRICE_SOURCES: Readonly<
  Record<
    "lambda" | "sqs" | "dynamodb" | "eventBridge" | "apiGateway" | "cloudWatchLogs" | "kms" | "stepFunctions",
    string
  >
> = {
  lambda: "aws.amazon.com/lambda/pricing (arm64 $0.20/M requests, $0.0000133334/GB-s, 1 ms billing)",
  sqs: "aws.amazon.com/sqs/pricing (standard $0.40/M, FIFO $0.50/M; every 64 KB chunk is a request)",
  dynamodb:
    "aws.amazon.com/dynamodb/pricing/on-demand ($0.625/M WRU, $0.125/M RRU, $0.25/GB-month + 100 B per item, PITR $0.20/GB-month)",
  eventBridge: "aws.amazon.com/eventbridge/pricing ($1.00/M custom events, 64 KB chunks)",
  apiGateway: "aws.amazon.com/api-gateway/pricing (HTTP API $1.00/M, first 300 M)",
  cloudWatchLogs:
    "aws.amazon.com/cloudwatch/pricing (vended logs $0.50/GB ingested for the first 10 TB, Lambda tiered pricing since 2025-05-01; $0.03/GB-month archived)",
  kms: "aws.amazon.com/kms/pricing ($0.03 per 10,000 requests; GenerateDataKey and Decrypt are requests)",
  stepFunctions:
    "aws.amazon.com/step-functions/pricing (Standard $0.025/1,000 transitions; Express $1.00/M requests + $0.06/GB-hour, 100 ms and 64 MB increments)",
};

/**
 * The goal of issue 37 (issue 13's was $25, met in issue 24): at most this many dollars per million structured claims,
 * all in (rules model, logs and timers).
 */
export const GOAL_PER_MILLION = 20;

/** Memory Lambda gives one full vCPU at (AWS: "at 1,769 MB, a function has the equivalent of one vCPU"). */
export const ONE_VCPU_MB = 1769;

// ---------------------------------------------------------------------------------------------
// Lambda duration on AWS
// ---------------------------------------------------------------------------------------------

/**
 * Typical in-region latency of one SDK call from Lambda, ms (assumptions, not measurements): DynamoDB
 * single-item calls single-digit ms, SQS sends ~10 ms, EventBridge PutEvents ~20 ms.
 */
export const AWS_LATENCY_MS: Readonly<Record<string, number>> = {
  DynamoDB: 6,
  "DynamoDB.BatchWriteItem": 10,
  "DynamoDB.Query": 8,
  SQS: 12,
  EventBridge: 20,
};

/**
 * Duration estimate on AWS for one function's work: its own CPU time measured here scaled to the CPU
 * share of `memoryMb` (1769 MB = one vCPU; a conservative upper bound, since short bursts are not
 * throttled that hard), plus a typical in-region latency per SDK call.
 */
export function estimateAwsMs(
  cpuMs: number,
  memoryMb: number,
  calls: Readonly<Record<string, number>>,
  latency: Readonly<Record<string, number>> = AWS_LATENCY_MS,
): number {
  const cpu = cpuMs * Math.max(1, ONE_VCPU_MB / memoryMb);
  let io = 0;
  for (const [key, n] of Object.entries(calls)) {
    const service = key.split(".")[0] ?? key;
    const ms = latency[key] ?? latency[service];
    if (ms === undefined) throw new Error(`estimateAwsMs: no latency for ${key}`);
    io += n * ms;
  }
  return cpu + io;
}

/** The AWS duration estimate of one function's measured work per claim: its own CPU time and its SDK calls. */
const awsMsOf = (fn: FunctionKey, u: InvocationUsage): number =>
  estimateAwsMs(u.cpuMs, FUNCTION_MEMORY_MB[fn], u.calls);

// ---------------------------------------------------------------------------------------------
// Logs: what Lambda and API Gateway add to the handlers' own lines
// ---------------------------------------------------------------------------------------------

/**
 * The log events AWS writes beside the handlers' lines, as realistic examples whose byte length is the
 * model's per-event size: with the JSON log format and the default system log level (INFO), Lambda
 * writes `platform.start` and `platform.report` per invocation (AWS Lambda docs, "Log-level filtering");
 * API Gateway writes one access-log line per request in the stage's format (app/access-log.ts, filled in with
 * example values of a request that succeeded: no error); on
 * Lambda, Powertools adds the invocation's X-Ray trace id (`_X_AMZN_TRACE_ID`) to every line.
 */
export const LOG_EXAMPLES = {
  platformStart:
    '{"time":"2026-11-22T01:39:00.123Z","type":"platform.start","record":{"requestId":"6d68ca91-49c9-448d-89b8-7ca3e6dc66aa","version":"$LATEST"}}',
  platformReport:
    '{"time":"2026-11-22T01:39:00.168Z","type":"platform.report","record":{"requestId":"6d68ca91-49c9-448d-89b8-7ca3e6dc66aa","metrics":{"durationMs":44.51,"billedDurationMs":45,"memorySizeMB":256,"maxMemoryUsedMB":98},"status":"success"}}',
  accessLogPost: accessLogLine({
    requestId: "cJ8nHiXXoAMEJzQ=",
    routeKey: "POST /claims",
    path: "/claims",
    status: 202,
    responseLatency: 38,
    integrationRequestId: "6d68ca91-49c9-448d-89b8-7ca3e6dc66aa",
    error: "-",
    authorizerError: "-",
    ip: "203.0.113.7",
    userAgent: "python-requests/2.32.3",
  }),
  accessLogGet: accessLogLine({
    requestId: "cJ8nHiXXoAMEJzR=",
    routeKey: "GET /claims/{id}",
    path: "/claims/clm_01JDX3Q0Z9W8V7T6S5R4Q3P2N1",
    status: 200,
    responseLatency: 21,
    integrationRequestId: "7e79db02-5a3a-459e-9add-8cac4ed77bbb",
    error: "-",
    authorizerError: "-",
    ip: "203.0.113.7",
    userAgent: "python-requests/2.32.3",
  }),
  lambdaFieldsPerLine: ',"xray_trace_id":"1-6740d7c4-2c5e0bb85bd1b3b2a1b0c9d8"',
} as const;

const utf8 = (s: string) => Buffer.byteLength(s, "utf8");

/** Bytes per log event the model adds, from {@link LOG_EXAMPLES}. */
export const LOG_BYTES = {
  platformPerInvocation: utf8(LOG_EXAMPLES.platformStart) + utf8(LOG_EXAMPLES.platformReport),
  accessLogPost: utf8(LOG_EXAMPLES.accessLogPost),
  accessLogGet: utf8(LOG_EXAMPLES.accessLogGet),
  lambdaFieldsPerLine: utf8(LOG_EXAMPLES.lambdaFieldsPerLine),
} as const;

// ---------------------------------------------------------------------------------------------
// The bill of one claim
// ---------------------------------------------------------------------------------------------

/** What a line of the bill belongs to: the orchestration Step Functions would replace, or the work itself. */
export type CostCategory = "orchestration" | "work";

/** A service on the bill. */
export type Service = "API Gateway" | "Lambda" | "SQS" | "DynamoDB" | "EventBridge" | "CloudWatch Logs" | "KMS";

/** One line of the bill for one claim. */
export type CostLine = {
  service: Service;
  item: string;
  category: CostCategory;
  /** Billed units per claim. */
  units: number;
  unit: string;
  /** $ per unit. */
  price: number;
  /** $ per claim = units × price. */
  perClaim: number;
};

/** Choices the model needs beyond the measured profile. */
export type CostOptions = {
  /** Records per invocation for the SQS consumers: "measured" (as the bench saw) or a fixed fill (1 = every message its own invocation). */
  batchFill: "measured" | number;
  /** Seconds a Lambda waits per LLM call (0 for the rules model); billed as GB-seconds of the caller. */
  llmWaitS: number;
  /** Which access-log line the API requests of the profile write. */
  apiRoute: "POST" | "GET";
  /** How the deployment logs: Lambda's platform lines are written below WARN only; success lines at their sample rate. */
  logging: LoggingConfig;
  /**
   * Which Lambda containers unwrap the day's branch key (a GetItem and a KMS Decrypt each, issue 37): a fresh one per
   * invocation (low traffic: containers are reaped between a claim's steps) or warm ones (under load: once per
   * container every 10 minutes, ~$0 per claim). Absent: warm ("per function and claim", its name from before).
   */
  keyDecrypts?: "per invocation" | "per function and claim";
};

/** The default options: measured batch fill, no LLM wait (rules model), POST /claims, every log line written (Lambda's defaults). */
export const DEFAULT_COST_OPTIONS: CostOptions = {
  batchFill: "measured",
  llmWaitS: 0,
  apiRoute: "POST",
  logging: UNRECORDED_LOGGING,
};

/** True when Lambda writes its INFO platform lines (platform.start, platform.report) at this system log level. */
export const writesPlatformLines = (systemLogLevel: string): boolean =>
  ["TRACE", "DEBUG", "INFO"].includes(systemLogLevel.toUpperCase());

/** Handler log lines and bytes billed per claim: success lines at the sample rate, the others all, + Lambda's per-line fields. */
export function billedHandlerLog(
  usage: Pick<InvocationUsage, "logLines" | "logBytes" | "successLines" | "successBytes">,
  successSampleRate: number,
): { lines: number; bytes: number } {
  const successLines = usage.successLines ?? 0;
  const successBytes = usage.successBytes ?? 0;
  const lines = usage.logLines - successLines + successLines * successSampleRate;
  return {
    lines,
    bytes: usage.logBytes - successBytes + successBytes * successSampleRate + lines * LOG_BYTES.lambdaFieldsPerLine,
  };
}

const sumRecord = (x: Readonly<Record<string, number>>, y: Readonly<Record<string, number>>) => {
  const out: Record<string, number> = { ...x };
  for (const [k, v] of Object.entries(y)) out[k] = (out[k] ?? 0) + v;
  return out;
};

/** Adds two profiles claim for claim (e.g. a claim plus its timer path); `claims` and `kind` come from `a`. */
export function addProfiles(a: ClaimProfile, b: ClaimProfile): ClaimProfile {
  const requests: Record<string, Record<string, number>> = { ...a.requests };
  for (const [service, ops] of Object.entries(b.requests)) requests[service] = sumRecord(requests[service] ?? {}, ops);
  const dynamo: Record<string, DynamoUsage> = { ...a.dynamo };
  for (const [entity, u] of Object.entries(b.dynamo)) {
    const p = dynamo[entity];
    dynamo[entity] = p ? (sumRecord(p, u) as DynamoUsage) : { ...u };
  }
  const sqsSends: Partial<Record<QueueRole, QueueUsage>> = { ...a.sqsSends };
  for (const [role, u] of Object.entries(b.sqsSends) as [QueueRole, QueueUsage][]) {
    const p = sqsSends[role];
    sqsSends[role] = p ? (sumRecord(p, u) as QueueUsage) : { ...u };
  }
  const invocations: Partial<Record<FunctionKey, InvocationUsage>> = { ...a.invocations };
  for (const [fn, u] of Object.entries(b.invocations) as [FunctionKey, InvocationUsage][]) {
    const p = invocations[fn];
    invocations[fn] = p
      ? {
          invocations: p.invocations + u.invocations,
          records: p.records + u.records,
          handlerMs: p.handlerMs + u.handlerMs,
          sdkMs: p.sdkMs + u.sdkMs,
          cpuMs: p.cpuMs + u.cpuMs,
          calls: sumRecord(p.calls, u.calls),
          llmCalls: p.llmCalls + u.llmCalls,
          logLines: p.logLines + u.logLines,
          logBytes: p.logBytes + u.logBytes,
          successLines: (p.successLines ?? 0) + (u.successLines ?? 0),
          successBytes: (p.successBytes ?? 0) + (u.successBytes ?? 0),
          metricLines: (p.metricLines ?? 0) + (u.metricLines ?? 0),
          metricBytes: (p.metricBytes ?? 0) + (u.metricBytes ?? 0),
          ...eventSourceSum(p, u),
          ...keySum(p, u),
        }
      : { ...u, calls: { ...u.calls } };
  }
  return {
    kind: a.kind,
    claims: a.claims,
    requests,
    dynamo,
    sqsSends,
    events: {
      requests: a.events.requests + b.events.requests,
      entries: a.events.entries + b.events.entries,
      chunks: a.events.chunks + b.events.chunks,
    },
    busDeliveries: sumRecord(a.busDeliveries, b.busDeliveries),
    apiRequests: a.apiRequests + b.apiRequests,
    invocations,
  };
}

/** Billed GB-seconds of `invocations` invocations that together ran `totalMs` at `memoryMb` (each rounded up to 1 ms). */
export function billedGbSeconds(invocations: number, totalMs: number, memoryMb: number): number {
  if (invocations < 0 || totalMs < 0 || memoryMb <= 0)
    throw new RangeError(`billedGbSeconds: invalid input (${invocations}, ${totalMs}, ${memoryMb})`);
  if (invocations === 0) return 0;
  const perInvocation = Math.ceil(totalMs / invocations / PRICES.lambda.granularityMs) * PRICES.lambda.granularityMs;
  return (invocations * perInvocation * memoryMb) / 1024 / 1000;
}

/**
 * True when the function is linked to the personal-data key on AWS and so composes the vault (app/functions.ts): the
 * timer and the authorizer are not (docs/customer-data.md), so they open nothing there, whatever the local stack did.
 */
export const composesVault = (fn: FunctionKey): boolean =>
  Object.hasOwn(FUNCTIONS[fn as keyof typeof FUNCTIONS]?.access ?? {}, LINKS.personalDataKey);

/** The data-key counts of two profiles added (absent on both: absent). */
function keySum(p: InvocationUsage, u: InvocationUsage): Partial<InvocationUsage> {
  if (p.keyLookups === undefined && u.keyLookups === undefined) return {};
  const add = (
    k: "keyLookups" | "keysMade" | "keyDecryptsPerInvocation" | "keyDecryptsPerFunction" | "keyInvocations",
  ) => (p[k] ?? 0) + (u[k] ?? 0);
  return {
    keyLookups: add("keyLookups"),
    keysMade: add("keysMade"),
    keyDecryptsPerInvocation: add("keyDecryptsPerInvocation"),
    keyDecryptsPerFunction: add("keyDecryptsPerFunction"),
    ...(p.keyInvocations === undefined && u.keyInvocations === undefined
      ? {}
      : { keyInvocations: add("keyInvocations") }),
  };
}

/** The event source's measured requests of two profiles added (absent on both: absent, one of each per invocation). */
function eventSourceSum(p: InvocationUsage, u: InvocationUsage): Partial<InvocationUsage> {
  if (p.eventSourceReceives === undefined && u.eventSourceReceives === undefined) return {};
  const receives = (x: InvocationUsage) => x.eventSourceReceives ?? x.invocations;
  const deletes = (x: InvocationUsage) => x.eventSourceDeletes ?? x.invocations;
  return { eventSourceReceives: receives(p) + receives(u), eventSourceDeletes: deletes(p) + deletes(u) };
}

/**
 * The event source mapping's ReceiveMessage and DeleteMessageBatch requests per claim of a queue consumer: as
 * measured where its batches were gathered over a window (`eventSourceReceives`), else one of each per
 * invocation (a batch of at most 10 is one receive and one delete); for a fixed fill, one of each per 10 records
 * of a batch.
 */
export function eventSourceRequests(
  usage: InvocationUsage,
  fill: CostOptions["batchFill"],
): { receives: number; deletes: number } {
  if (fill !== "measured") {
    const perInvocation = Math.ceil(fill / 10);
    return {
      receives: invocationsFor(usage, fill) * perInvocation,
      deletes: invocationsFor(usage, fill) * perInvocation,
    };
  }
  return {
    receives: usage.eventSourceReceives ?? usage.invocations,
    deletes: usage.eventSourceDeletes ?? usage.invocations,
  };
}

/** Invocations per claim of a queue consumer for a batch fill: measured, or records ÷ fill. */
export function invocationsFor(
  usage: Pick<InvocationUsage, "invocations" | "records">,
  fill: CostOptions["batchFill"],
): number {
  if (fill === "measured") return usage.invocations;
  if (!(fill >= 1))
    throw new RangeError(`invocationsFor: a batch fill is at least 1 record per invocation, got ${String(fill)}`);
  return usage.records / fill;
}

/** A count for a line label: at most 3 significant digits (per-claim averages are fractions). */
const n3 = (x: number) => String(Number(x.toPrecision(3)));

const QUEUE_OF: Partial<Record<FunctionKey, QueueRole>> = Object.fromEntries(
  (Object.entries(QUEUE_CONSUMERS) as [QueueRole, { fn: FunctionKey }][]).map(([role, c]) => [c.fn, role]),
);

/** Orchestration entities, queues and functions: what a Step Functions state machine would replace. */
const ORCHESTRATION_QUEUES: readonly QueueRole[] = ["crewEvents", "agentSteps", "proposals", "timers"];
const ORCHESTRATION_FUNCTIONS: readonly FunctionKey[] = ["orchestrator", "timer"];
const ORCHESTRATION_ENTITIES: readonly string[] = ["session"];

/**
 * The bill of one claim, line by line: API Gateway requests; Lambda requests and GB-seconds per function
 * (plus GB-seconds spent waiting on the LLM); SQS sends by the handlers, and the event source mapping's
 * ReceiveMessage + DeleteMessageBatch per invocation; deliveries of bus rules into their target queues;
 * DynamoDB read/write request units (table and gsi1) by entity; EventBridge entries; CloudWatch Logs
 * ingestion of the handlers' lines (with the fields Lambda adds), Lambda's platform lines per invocation
 * and the API access log per request.
 */
export function costLines(profile: ClaimProfile, options: CostOptions = DEFAULT_COST_OPTIONS): CostLine[] {
  const lines: CostLine[] = [];
  const push = (line: Omit<CostLine, "perClaim">) => {
    if (line.units > 0) lines.push({ ...line, perClaim: line.units * line.price });
  };
  const logPrice = PRICES.cloudWatchLogs.ingestGb / GB;
  const route = options.apiRoute === "GET" ? "GET /claims/{id}" : "POST /claims";
  push({
    service: "API Gateway",
    item: `HTTP API request (${route})`,
    category: "work",
    units: profile.apiRequests,
    unit: "requests",
    price: PRICES.apiGateway.httpRequest,
  });
  push({
    service: "CloudWatch Logs",
    item: `API access log (${n3(profile.apiRequests)} lines × ${options.apiRoute === "GET" ? LOG_BYTES.accessLogGet : LOG_BYTES.accessLogPost} B)`,
    category: "work",
    units: profile.apiRequests * (options.apiRoute === "GET" ? LOG_BYTES.accessLogGet : LOG_BYTES.accessLogPost),
    unit: "bytes",
    price: logPrice,
  });

  const invocationsOf: Partial<Record<FunctionKey, number>> = {};
  for (const [fn, usage] of Object.entries(profile.invocations) as [FunctionKey, InvocationUsage][]) {
    const queue = QUEUE_OF[fn];
    const invocations = queue ? invocationsFor(usage, options.batchFill) : usage.invocations;
    invocationsOf[fn] = invocations;
    const category: CostCategory = ORCHESTRATION_FUNCTIONS.includes(fn) ? "orchestration" : "work";
    const memory = FUNCTION_MEMORY_MB[fn];
    push({
      service: "Lambda",
      item: `${fn} invocations`,
      category,
      units: invocations,
      unit: "requests",
      price: PRICES.lambda.request,
    });
    push({
      service: "Lambda",
      item: `${fn} duration (${memory} MB)`,
      category,
      units: billedGbSeconds(invocations, awsMsOf(fn, usage), memory),
      unit: "GB-s",
      price: PRICES.lambda.gbSecondArm64,
    });
    if (options.llmWaitS > 0 && usage.llmCalls > 0) {
      push({
        service: "Lambda",
        item: `${fn} waiting on the LLM (${n3(usage.llmCalls)} calls × ${options.llmWaitS} s)`,
        category: "work",
        units: (usage.llmCalls * options.llmWaitS * memory) / 1024,
        unit: "GB-s",
        price: PRICES.lambda.gbSecondArm64,
      });
    }
    const billed = billedHandlerLog(usage, options.logging.successSampleRate);
    push({
      service: "CloudWatch Logs",
      item: `${fn} handler lines (${n3(billed.lines)} lines, ${Math.round(billed.bytes)} B)`,
      category,
      units: billed.bytes,
      unit: "bytes",
      price: logPrice,
    });
    push({
      service: "CloudWatch Logs",
      item: `${fn} EMF metric lines (${n3(usage.metricLines ?? 0)} lines)`,
      category,
      units: usage.metricBytes ?? 0,
      unit: "bytes",
      price: logPrice,
    });
    // The personal-data keys as `kmsKeyStore` serves them on AWS (issue 37; the local stack keeps them elsewhere): each
    // lookup that reaches the store (one per subject and invocation: the vault remembers it for the invocation) a
    // consistent GetItem of the claim's key item; each new key a PutItem, wrapped locally under the day's branch key
    // (no KMS call per claim). The branch key costs a GetItem and a KMS Decrypt per container and BRANCH_KEY_KEPT_MS:
    // ~$0 per million claims in warm containers; with a fresh container per invocation, one per invocation that
    // looked up a key.
    if (usage.keyLookups !== undefined && composesVault(fn)) {
      const perInvocation = options.keyDecrypts === "per invocation";
      const branchUnwraps = perInvocation ? (usage.keyInvocations ?? usage.keyDecryptsPerInvocation ?? 0) : 0;
      push({
        service: "DynamoDB",
        item: `data_key: ${fn} key lookups (${n3(usage.keyLookups)} consistent GetItem, 1 RRU each)`,
        category: "work",
        units: usage.keyLookups,
        unit: "RRU",
        price: PRICES.dynamodb.rru,
      });
      push({
        service: "DynamoDB",
        item: `data_key: ${fn} new keys (${n3(usage.keysMade ?? 0)} PutItem)`,
        category: "work",
        units: usage.keysMade ?? 0,
        unit: "WRU",
        price: PRICES.dynamodb.wru,
      });
      if (perInvocation) {
        push({
          service: "DynamoDB",
          item: `data_key: ${fn} branch key reads (a fresh container per invocation: ${n3(branchUnwraps)} GetItem)`,
          category: "work",
          units: branchUnwraps,
          unit: "RRU",
          price: PRICES.dynamodb.rru,
        });
        push({
          service: "KMS",
          item: `${fn} Decrypt of the branch key (a fresh container per invocation)`,
          category: "work",
          units: branchUnwraps,
          unit: "requests",
          price: PRICES.kms.request,
        });
      }
    }
    if (writesPlatformLines(options.logging.systemLogLevel)) {
      push({
        service: "CloudWatch Logs",
        item: `${fn} platform.start + platform.report (${n3(invocations)} × ${LOG_BYTES.platformPerInvocation} B)`,
        category,
        units: invocations * LOG_BYTES.platformPerInvocation,
        unit: "bytes",
        price: logPrice,
      });
    }
  }

  // Every queue the profile sends to or consumes from: the timer path consumes timers the claim sent, and its
  // event source's receives and deletes belong to it (its line and the all-in figure, which adds the two).
  const consumed = (Object.keys(QUEUE_CONSUMERS) as QueueRole[]).filter(
    (role) => profile.invocations[QUEUE_CONSUMERS[role].fn] !== undefined,
  );
  const roles = [...new Set([...(Object.keys(profile.sqsSends) as QueueRole[]), ...consumed])];
  for (const role of roles) {
    const send = profile.sqsSends[role] ?? { requests: 0, chunks: 0, messages: 0 };
    const { fifo, fn } = QUEUE_CONSUMERS[role];
    const price = fifo ? PRICES.sqs.fifoRequest : PRICES.sqs.standardRequest;
    const category: CostCategory = ORCHESTRATION_QUEUES.includes(role) ? "orchestration" : "work";
    const label = `${role}${fifo ? " (FIFO)" : ""}`;
    push({
      service: "SQS",
      item: `${label} sends (${n3(send.messages)} messages in ${n3(send.requests)} requests)`,
      category,
      units: send.chunks,
      unit: "requests",
      price,
    });
    const consumer = profile.invocations[fn];
    const { receives, deletes } = consumer
      ? eventSourceRequests(consumer, options.batchFill)
      : { receives: invocationsOf[fn] ?? 0, deletes: invocationsOf[fn] ?? 0 };
    push({
      service: "SQS",
      item: `${label} ReceiveMessage by the event source mapping`,
      category,
      units: receives,
      unit: "requests",
      price,
    });
    push({
      service: "SQS",
      item: `${label} DeleteMessageBatch by the event source mapping`,
      category,
      units: deletes,
      unit: "requests",
      price,
    });
  }
  for (const [rule, deliveries] of Object.entries(profile.busDeliveries)) {
    push({
      service: "SQS",
      item: `bus rule "${rule}" → its target queue (SendMessage by EventBridge)`,
      category: "work",
      units: deliveries,
      unit: "requests",
      price: PRICES.sqs.standardRequest,
    });
  }

  for (const [entity, u] of Object.entries(profile.dynamo).sort(([a], [b]) => a.localeCompare(b))) {
    const category: CostCategory = ORCHESTRATION_ENTITIES.includes(entity) ? "orchestration" : "work";
    push({
      service: "DynamoDB",
      item: `${entity}: ${n3(u.writes)} writes${u.conditionalFailures > 0 ? ` (${n3(u.conditionalFailures)} failed conditions)` : ""}`,
      category,
      units: u.wru,
      unit: "WRU",
      price: PRICES.dynamodb.wru,
    });
    push({
      service: "DynamoDB",
      item: `${entity}: gsi1 maintenance`,
      category,
      units: u.gsiWru,
      unit: "WRU",
      price: PRICES.dynamodb.wru,
    });
    push({
      service: "DynamoDB",
      item: `${entity}: ${n3(u.reads)} reads`,
      category,
      units: u.rru,
      unit: "RRU",
      price: PRICES.dynamodb.rru,
    });
  }

  push({
    service: "EventBridge",
    item: `PutEvents entries (${n3(profile.events.entries)} events in ${n3(profile.events.requests)} requests)`,
    category: "work",
    units: profile.events.chunks,
    unit: "events",
    price: PRICES.eventBridge.customEvent,
  });
  return lines;
}

/** $ per million claims of a set of lines. */
export function perMillion(lines: readonly CostLine[]): number {
  return lines.reduce((sum, l) => sum + l.perClaim, 0) * 1e6;
}

/** $ per million claims by service. */
export function byService(lines: readonly CostLine[]): Partial<Record<Service, number>> {
  const out: Partial<Record<Service, number>> = {};
  for (const l of lines) out[l.service] = (out[l.service] ?? 0) + l.perClaim * 1e6;
  return out;
}

/** The `n` most expensive lines, largest first. */
export function topDrivers(lines: readonly CostLine[], n: number): CostLine[] {
  return [...lines].sort((a, b) => b.perClaim - a.perClaim).slice(0, n);
}

// ---------------------------------------------------------------------------------------------
// Storage, per month kept
// ---------------------------------------------------------------------------------------------

/**
 * $ per month per claim kept: DynamoDB (items + 100 B each, gsi1 entries likewise, PITR on the table) and
 * CloudWatch Logs (compressed). `afterHorizon`: only the items without a TTL (`expires_at`), which is what
 * stays once the retention horizon (idempotency keys 24 h; session steps are kept with the audit) has passed.
 */
export function storagePerMonth(
  stored: Readonly<Record<string, StoredUsage>>,
  logBytesPerClaim: number,
  gzipRatio: number,
  afterHorizon = false,
): { dynamo: number; logs: number; tableBytes: number; indexBytes: number; logGzipBytes: number } {
  let tableBytes = 0;
  let indexBytes = 0;
  for (const u of Object.values(stored)) {
    const items = u.items - (afterHorizon ? (u.expiringItems ?? 0) : 0);
    const bytes = u.bytes - (afterHorizon ? (u.expiringBytes ?? 0) : 0);
    tableBytes += bytes + items * PRICES.dynamodb.itemOverheadBytes;
    indexBytes += u.indexBytes + u.indexItems * PRICES.dynamodb.itemOverheadBytes;
  }
  const logGzipBytes = logBytesPerClaim * gzipRatio;
  return {
    dynamo:
      ((tableBytes + indexBytes) * PRICES.dynamodb.storageGbMonth + tableBytes * PRICES.dynamodb.pitrGbMonth) / GB,
    logs: (logGzipBytes * PRICES.cloudWatchLogs.storageGbMonth) / GB,
    tableBytes,
    indexBytes,
    logGzipBytes,
  };
}

/** Log bytes ingested per claim by a set of lines. */
const logBytesOf = (lines: readonly CostLine[]): number =>
  lines.filter((l) => l.service === "CloudWatch Logs").reduce((n, l) => n + l.units, 0);

// ---------------------------------------------------------------------------------------------
// Step Functions, for comparison
// ---------------------------------------------------------------------------------------------

/** One state of the comparison state machine and how many transitions it costs per claim. */
export type SfnState = { state: string; type: "Task" | "Choice" | "Succeed"; does: string; transitions: number };

/**
 * The states a state machine needs to run the same flow for one claim on the happy path (every state
 * entered is one billed Standard transition; a retry is one more). It replaces the crew-events FIFO
 * queue, the orchestrator, the session snapshots, the agent-steps and proposals queues and the timers
 * (a Task's TimeoutSeconds and Retry/Catch do what the timers and the fixer routing do). The LLM steps
 * and the kernel stay Lambda functions; intake still stores the claim and calls StartExecution.
 */
export function stepFunctionsStates(kind: ClaimKind): SfnState[] {
  const extraction: SfnState[] =
    kind === "free_text"
      ? [
          {
            state: "Extract",
            type: "Task",
            does: "Lambda intake-extract: one LLM call, stores the structured claim",
            transitions: 1,
          },
          { state: "Extracted?", type: "Choice", does: "extraction failed → NeedsReview, else on", transitions: 1 },
        ]
      : [];
  return [
    ...extraction,
    {
      state: "StartCrew",
      type: "Task",
      does: "DynamoDB UpdateItem (direct service integration): the claim becomes RUNNING",
      transitions: 1,
    },
    {
      state: "Analyst",
      type: "Task",
      does: "Lambda worker: analyst step (LLM), audits it; TimeoutSeconds 120, Retry, Catch → Fixer",
      transitions: 1,
    },
    {
      state: "DecisionMaker",
      type: "Task",
      does: "Lambda worker: decision maker step (LLM), audits it; same timeout/retry/catch",
      transitions: 1,
    },
    {
      state: "SelfCheck",
      type: "Choice",
      does: "proposal valid and confident enough → Kernel, else → NeedsReview",
      transitions: 1,
    },
    {
      state: "Kernel",
      type: "Task",
      does: "Lambda kernel: verdict, ledger, audit, publish (unchanged)",
      transitions: 1,
    },
    { state: "Done", type: "Succeed", does: "end of the execution", transitions: 1 },
  ];
}

/** Transitions per claim of `states`. */
export function transitions(states: readonly SfnState[]): number {
  return states.reduce((n, s) => n + s.transitions, 0);
}

/** Assumed overhead per state of an Express execution (scheduling a task, a service integration), ms. */
export const EXPRESS_STATE_OVERHEAD_MS = 20;

/** The functions whose work an Express execution waits for (its duration): the tasks of {@link stepFunctionsStates}. */
const EXPRESS_TASK_FUNCTIONS: readonly FunctionKey[] = ["intakeExtract", "worker", "kernel"];

/**
 * $ per claim of one Express execution: a request, plus its duration — the AWS estimate of the task
 * functions' work, the LLM wait of their calls and {@link EXPRESS_STATE_OVERHEAD_MS} per state —
 * rounded up to 100 ms, at 64 MB (50 MB + definition + a few KB of payload fits the first 64 MB chunk).
 */
export function expressPerClaim(
  profile: ClaimProfile,
  kind: ClaimKind,
  llmWaitS: number,
): { perClaim: number; durationMs: number } {
  let ms = transitions(stepFunctionsStates(kind)) * EXPRESS_STATE_OVERHEAD_MS;
  for (const fn of EXPRESS_TASK_FUNCTIONS) {
    const u = profile.invocations[fn];
    if (!u) continue;
    ms += awsMsOf(fn, u) + (LLM_FUNCTIONS.includes(fn) ? u.llmCalls * llmWaitS * 1000 : 0);
  }
  const { expressIncrementMs, expressMemoryMb, expressGbSecond, expressRequest } = PRICES.stepFunctions;
  const billedMs = Math.ceil(ms / expressIncrementMs) * expressIncrementMs;
  return { perClaim: expressRequest + (billedMs / 1000) * (expressMemoryMb / 1024) * expressGbSecond, durationMs: ms };
}

// ---------------------------------------------------------------------------------------------
// The one table
// ---------------------------------------------------------------------------------------------

/** What one measured profile file costs, every figure in $ per million claims (storage: per month kept). */
export type CostSummary = {
  services: Partial<Record<Service, number>>;
  /** The handlers' lines, Lambda's platform lines, the API access log (all CloudWatch Logs ingestion). */
  logs: { handler: number; metrics: number; platform: number; access: number };
  timerPath: number | undefined;
  /** The personal-data keys as `kmsKeyStore` serves them (issue 37): key-item reads and writes, KMS requests. */
  keys: number;
  /** The same at low traffic: a fresh container per invocation, so a branch-key read and KMS Decrypt per invocation. */
  keysLowTraffic: number;
  allIn: number;
  llmWait: Record<1 | 3, number>;
  perGet: number;
  lowTraffic: number;
  storage: ReturnType<typeof storagePerMonth>;
  /** Storage per month kept once the retention horizon has passed (items with a TTL gone). */
  storageAfterHorizon: ReturnType<typeof storagePerMonth>;
  orchestration: number;
  standard: { transitions: number; orchestration: number; total: number };
  express: Record<0 | 1 | 3, { orchestration: number; total: number; durationMs: number }>;
};

/** A line of the personal-data keys (issue 37): the key item's reads and writes, the KMS requests. */
const isKeyLine = (l: CostLine): boolean => l.service === "KMS" || l.item.startsWith("data_key:");

/** A claim's profile with its step-timer path added (when measured). */
export const withTimerPath = (file: AwsRequestsFile, p: ClaimProfile): ClaimProfile =>
  file.timerPath ? addProfiles(p, file.timerPath) : p;

/** The default cost options with the logging a profile was recorded for (Lambda's defaults for profiles from before). */
export const optionsFor = (file: Pick<AwsRequestsFile, "logging">): CostOptions => ({
  ...DEFAULT_COST_OPTIONS,
  logging: file.logging ?? UNRECORDED_LOGGING,
});

/** Prices one kind of claim from a profile file. */
export function costSummary(file: AwsRequestsFile, kind: ClaimKind): CostSummary {
  const claim = file.concurrent[kind];
  const base = optionsFor(file);
  const claimLines = costLines(claim, base);
  const timerLines = file.timerPath ? costLines(file.timerPath, base) : undefined;
  const allLines = [...claimLines, ...(timerLines ?? [])];
  const allIn = perMillion(allLines);
  const isLog = (l: CostLine) => l.service === "CloudWatch Logs";
  const services: Partial<Record<Service, number>> = byService(claimLines.filter((l) => !isLog(l) && !isKeyLine(l)));
  const logOf = (pick: (l: CostLine) => boolean) => perMillion(claimLines.filter((l) => isLog(l) && pick(l)));
  const getLines = costLines(file.poll, { ...base, apiRoute: "GET" });
  const orchestration = perMillion(allLines.filter((l) => l.category === "orchestration"));
  const states = stepFunctionsStates(kind);
  const standardOrchestration = transitions(states) * PRICES.stepFunctions.standardTransition * 1e6;
  const llmWait = (s: number) =>
    perMillion([...costLines(claim, { ...base, llmWaitS: s }), ...(timerLines ?? [])]) - allIn;
  const express = (s: 0 | 1 | 3) => {
    const e = expressPerClaim(claim, kind, s);
    const orchestrationNow = e.perClaim * 1e6;
    return {
      orchestration: orchestrationNow,
      total: allIn - orchestration + llmWait(s) + orchestrationNow,
      durationMs: e.durationMs,
    };
  };
  // At low traffic every timer is alone in its batching window too: its own invocation, receive and delete; and
  // every invocation is a fresh container, which unwraps the day's branch key if it needs a key (a KMS Decrypt).
  const lowBase: CostOptions = { ...base, batchFill: 1, keyDecrypts: "per invocation" };
  const lowTrafficLines = [
    ...costLines(file.sequential[kind], lowBase),
    ...(file.timerPath ? costLines(file.timerPath, lowBase) : []),
  ];
  const gzipRatio = file.logs.bytes > 0 ? file.logs.gzipBytes / file.logs.bytes : 0;
  return {
    services,
    logs: {
      handler: logOf((l) => l.item.includes("handler lines")),
      metrics: logOf((l) => l.item.includes("EMF metric lines")),
      platform: logOf((l) => l.item.includes("platform.")),
      access: logOf((l) => l.item.startsWith("API access log")),
    },
    timerPath: timerLines ? perMillion(timerLines) : undefined,
    keys: perMillion(claimLines.filter(isKeyLine)),
    keysLowTraffic: perMillion(lowTrafficLines.filter(isKeyLine)),
    allIn,
    llmWait: { 1: llmWait(1), 3: llmWait(3) },
    perGet: perMillion(getLines),
    lowTraffic: perMillion(lowTrafficLines),
    storage: storagePerMonth(file.stored, logBytesOf(allLines), gzipRatio),
    storageAfterHorizon: storagePerMonth(file.stored, logBytesOf(allLines), gzipRatio, true),
    orchestration,
    standard: {
      transitions: transitions(states),
      orchestration: standardOrchestration,
      total: allIn - orchestration + standardOrchestration,
    },
    express: { 0: express(0), 1: express(1), 3: express(3) },
  };
}

/** One row of the table: a label, $/M per column, what is measured or assumed, the price and its source. */
export type CostTableRow = { line: string; values: number[]; basis: string; price: string };

/** Money for a table: cents from $10 up, more digits below. */
export const money = (x: number): string =>
  Math.abs(x) >= 10 ? x.toFixed(2) : Math.abs(x) >= 0.1 ? x.toFixed(3) : x.toFixed(4);

/**
 * The cost table: one column per (file, kind) — e.g. before and now, for structured and free-text
 * claims — and one row per line of the bill, the all-in total against the goal, the parameters (LLM
 * wait, client GETs, low traffic), storage per month kept, and Step Functions in place of our
 * orchestration; each row says what is measured and what is assumed, and which price it uses.
 */
export function costTable(columns: readonly { file: AwsRequestsFile; kind: ClaimKind }[]): CostTableRow[] {
  const s = columns.map((c) => costSummary(c.file, c.kind));
  const f = columns[0]!.file;
  const v = (pick: (x: CostSummary) => number) => s.map(pick);
  const svc = (name: Service) => v((x) => x.services[name] ?? 0);
  const p = PRICE_SOURCES;
  const timerFill = (file: AwsRequestsFile) => {
    const t = file.timerPath?.invocations.timer;
    return t && t.invocations > 0 ? n3(t.records / t.invocations) : "–";
  };
  const noTimers = columns.filter((c) => c.file.timerPath && !c.file.timerPath.invocations.timer).length;
  const lazyNote =
    noTimers === 0
      ? ""
      : `; ${noTimers === columns.length ? "in every column" : `in ${noTimers} of ${columns.length} columns`} no claim sent a timer: with CLAIMS_STEP_TIMERS=lazy (the default) the crew's start arms none, the sweep arms the first of a claim still open after its cutoff (\`CLAIMS_STEP_TIMERS=eager npm run bench -- aws-requests cost\` prices the timer the start arms)`;
  const timerNote = columns.every((c) => c.file.timerPath)
    ? `measured: the timer fired 120 s after the step and was handled (the timer function reads the claim and its session and drops a settled claim's timer: its last step's outbox is marked, or proven by the claim's verdict on the proposal it sent, which spares the marker write; before issue 13 a FIFO send and an orchestrator tick followed); since issue 24 its event source gathers timers for up to ${TIMER_BATCHING_WINDOW_SECONDS} s into batches of up to ${eventSourceBatch("timers").size} (app/manifest.ts): timers per invocation as measured ${columns.map((c) => timerFill(c.file)).join(" / ")}, and the receives that returned timers and the DeleteMessageBatch calls as the windowed poller made them${lazyNote}`
    : "NOT measured in at least one column (AWS_REQUESTS_TIMERS=0): counted as 0 there";
  return [
    {
      line: "API Gateway: POST /claims",
      values: svc("API Gateway"),
      basis: "measured: 1 request per claim; the authorizer's answer is cached 5 min per token (~0 per claim)",
      price: p.apiGateway,
    },
    {
      line: "Lambda: invocations + duration",
      values: svc("Lambda"),
      basis: `measured invocations under load (event-source batch fill as measured); duration = AWS estimate: the handler's own CPU time measured one claim at a time (process CPU while none of its SDK calls is in flight) × (1769 MB ÷ memory) + an assumed in-region latency per SDK call (DynamoDB 6 ms, Query 8, BatchWriteItem 10, SQS 12, EventBridge 20); memory from infra/lambda.ts`,
      price: p.lambda,
    },
    {
      line: "SQS: sends, event-source receive + delete, bus deliveries",
      values: svc("SQS"),
      basis:
        "measured sends (64 KiB chunks); assumed 1 ReceiveMessage + 1 DeleteMessageBatch per invocation by the event source mapping, except the timers', gathered over a window, whose receives that returned messages and DeleteMessageBatch calls (10 records each) are measured and counted in the step-timer path row (idle long polling is a fixed ~$0.1–0.3 per queue-month, not per claim); measured bus-rule deliveries into SQS",
      price: p.sqs,
    },
    {
      line: "DynamoDB: reads and writes (table + gsi1)",
      values: svc("DynamoDB"),
      basis:
        "measured consumed capacity (dynalite, ReturnConsumedCapacity); gsi1 writes estimated from the written item (projection ALL); a failed conditional write counted as 1 WRU; the data-key items in the next row",
      price: p.dynamodb,
    },
    {
      line: "Personal-data keys on AWS (kmsKeyStore): key-item reads and writes, KMS",
      values: v((x) => x.keys),
      basis: `measured data-key lookups per claim (bench/lib/key-lookups.ts: one per subject and handler invocation, as the deployed vault remembers it for the invocation; none counted in a profile from before issue 37's count: 0 there), priced as adapters/aws/kms-keys.ts serves them: each a consistent GetItem of the key item (1 RRU), each new key a PutItem (1 WRU) wrapped locally under the day's branch key — no KMS call per claim; the branch key's GetItem and KMS Decrypt once per container every 10 minutes, ~$0 per million claims in warm containers (low traffic: one per invocation that looks up a key, ${s.map((x) => money(x.keysLowTraffic)).join("/")} in the low-traffic row)`,
      price: `${p.kms}; ${p.dynamodb}`,
    },
    {
      line: "EventBridge: PutEvents",
      values: svc("EventBridge"),
      basis: "measured entries (64 KiB chunks)",
      price: p.eventBridge,
    },
    {
      line: `CloudWatch Logs: handler lines at ${f.logs.level}`,
      values: v((x) => x.logs.handler),
      basis: `measured: the Powertools lines the handlers wrote at ${f.logs.level} (Lambda's default application level with the JSON format), success lines ("message handled", "request handled") × the deployed sample rate (${columns.map((c) => optionsFor(c.file).logging.successSampleRate).join("/")}), + ${LOG_BYTES.lambdaFieldsPerLine} B per line for the X-Ray trace id Powertools adds on Lambda`,
      price: p.cloudWatchLogs,
    },
    {
      line: "CloudWatch Logs: EMF metric lines",
      values: v((x) => x.logs.metrics),
      basis:
        "measured: the CloudWatch Embedded Metric Format lines the handlers wrote (Powertools Metrics records, one line per invocation: functions/observability/metrics.ts, emf.ts; enabled in the bench as on Lambda); ingested as logs, the metrics themselves are a fixed ~$0.30 per metric and dimension set a month, not per claim",
      price: p.cloudWatchLogs,
    },
    {
      line: "CloudWatch Logs: Lambda platform.start + platform.report",
      values: v((x) => x.logs.platform),
      basis: `measured invocations × ${LOG_BYTES.platformPerInvocation} B at system log level INFO (JSON format; example lines in bench/cost.ts); none at WARN (system levels: ${columns.map((c) => optionsFor(c.file).logging.systemLogLevel).join("/")}; app/manifest.ts LOGGING)`,
      price: p.cloudWatchLogs,
    },
    {
      line: "CloudWatch Logs: API access log",
      values: v((x) => x.logs.access),
      basis: `1 line per request × ${LOG_BYTES.accessLogPost} B (the format of app/access-log.ts, example in bench/cost.ts)`,
      price: p.cloudWatchLogs,
    },
    {
      line: "Step-timer path (its requests, its event source's receives and deletes, invocations and logs)",
      values: v((x) => x.timerPath ?? 0),
      basis: timerNote,
      price: "as above",
    },
    {
      line: `**All-in per claim** (rules model, logs and timers; goal ≤ $${GOAL_PER_MILLION})`,
      values: v((x) => x.allIn),
      basis: "sum of the rows above; LLM tokens excluded",
      price: "",
    },
    {
      line: "+ LLM wait in Lambda, 1 s per call",
      values: v((x) => x.llmWait[1]),
      basis:
        "parameter: the calling function's GB-seconds while it waits (worker 2 calls, intake-extract 1 for free text, 256 MB each)",
      price: p.lambda,
    },
    {
      line: "+ LLM wait in Lambda, 3 s per call",
      values: v((x) => x.llmWait[3]),
      basis: "parameter, as above",
      price: p.lambda,
    },
    {
      line: "+ each client GET /claims/{id}",
      values: v((x) => x.perGet),
      basis:
        "measured per GET: API request, intake-api invocation + duration, DynamoDB read, its log lines, platform lines and access log; a client polling once a second pays one per second until DECIDED",
      price: "as above",
    },
    {
      line: "All-in at low traffic (every message its own invocation)",
      values: v((x) => x.lowTraffic),
      basis: "measured one claim at a time, batch fill 1",
      price: "as above",
    },
    {
      line: "Storage per month kept: DynamoDB (+ PITR)",
      values: v((x) => x.storage.dynamo * 1e6),
      basis: `measured items and bytes left per claim after the run (+ 100 B per item and per gsi1 entry); PITR on the table's size`,
      price: p.dynamodb,
    },
    {
      line: "Storage per month kept after the retention horizon: DynamoDB (+ PITR)",
      values: v((x) => x.storageAfterHorizon.dynamo * 1e6),
      basis:
        "as above, without the items that carry a TTL (expires_at: idempotency keys after 24 h; the audit, and the session steps that hold the orchestrator's audit events, are kept unless CLAIMS_AUDIT_RETENTION_DAYS is set)",
      price: p.dynamodb,
    },
    {
      line: "Storage per month kept: CloudWatch Logs",
      values: v((x) => x.storage.logs * 1e6),
      basis: `all-in log bytes × the measured gzip ratio of the handlers' lines (${f.logs.bytes > 0 ? ((100 * f.logs.gzipBytes) / f.logs.bytes).toFixed(0) : "?"} %); retention 1 month (dev) / 1 year (production), infra/settings.ts`,
      price: p.cloudWatchLogs,
    },
    {
      line: "Our orchestration (included in the all-in)",
      values: v((x) => x.orchestration),
      basis:
        "crew-events FIFO, agent-steps, proposals and timers queues, the orchestrator and timer functions and their logs, the session items, the timer path",
      price: "as above",
    },
    {
      line: "All-in with Step Functions Standard instead",
      values: v((x) => x.standard.total),
      basis: `our orchestration replaced by ${s.map((x) => x.standard.transitions).join("/")} state transitions per claim (happy path; each retry or fixer detour adds some)`,
      price: p.stepFunctions,
    },
    ...([0, 1, 3] as const).map((w) => ({
      line: `All-in with Step Functions Express instead, LLM wait ${w} s`,
      values: v((x) => x.express[w].total),
      basis: `our orchestration replaced by one Express execution: $1/M + its duration (the task functions' AWS estimate + LLM waits + ${EXPRESS_STATE_OVERHEAD_MS} ms per state, assumed; ${s.map((x) => Math.round(x.express[w].durationMs)).join("/")} ms) at 64 MB; execution logging off; max 5 minutes per execution`,
      price: p.stepFunctions,
    })),
  ];
}

// ---- the model beside AWS (docs/llm.md, "Cost per claim"): kept apart from the AWS model above.

/** A model's list price per million tokens, in USD. */
export type TokenPrice = { input_per_million: number; output_per_million: number };

/** Tokens one claim costs on average (model calls included). */
export type TokensPerClaim = { prompt: number; completion: number };

/** The model's cost per million claims at `price`, in USD. */
export function modelPerMillion(tokens: TokensPerClaim, price: TokenPrice): number {
  return tokens.prompt * price.input_per_million + tokens.completion * price.output_per_million;
}

/** One all-in figure per million claims: AWS (`awsPerMillion`) plus the model at `price`, in USD. */
export function allInPerMillion(awsPerMillion: number, tokens: TokensPerClaim, price: TokenPrice): number {
  return awsPerMillion + modelPerMillion(tokens, price);
}
