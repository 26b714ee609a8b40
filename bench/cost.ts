// What a claim costs on AWS (issue 5): a pure model from the AWS requests per claim counted on the local
// stack (bench/pipeline.bench.ts writes them to bench/out/aws-requests.json) to dollars per million
// claims at list prices, itemised by service and operation, LLM excluded; beside it the state
// transitions an AWS Step Functions Standard state machine would need for the same flow.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatTable } from "./harness.ts";
import type { TableRow } from "./harness.ts";

// ---------------------------------------------------------------------------------------------
// Prices and sizing
// ---------------------------------------------------------------------------------------------

/**
 * AWS list prices, us-east-1, on-demand, first tier, free tiers ignored (they vanish at a million claims).
 * Checked on the date below against the public pricing pages (see bench/RESULTS.md for the sources).
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
    /** $ per GB-month of table storage (standard class) and of continuous backups (PITR). */
    storageGbMonth: 0.25,
    pitrGbMonth: 0.2,
  },
  eventBridge: {
    /** $ per custom event published ($1.00 per million), per 64 KiB chunk of an entry. */
    customEvent: 1 / 1e6,
    chunkBytes: 64 * 1024,
  },
  apiGateway: {
    /** $ per HTTP API request ($1.00 per million, first 300 million), metered in 512 KB increments. */
    httpRequest: 1 / 1e6,
    chunkBytes: 512 * 1024,
  },
  stepFunctions: {
    /** $ per state transition of a Standard workflow ($0.025 per 1,000). */
    standardTransition: 0.025 / 1000,
  },
} as const;

/** The goal of issue 5: at most this many dollars per million claims (LLM excluded). */
export const GOAL_PER_MILLION = 25;

/** A Lambda function of the app, named as in infra/lambda.ts `FUNCTIONS`. */
export type FunctionKey = "intakeApi" | "authorizer" | "intakeExtract" | "orchestrator" | "worker" | "kernel" | "timer" | "sweep" | "batch";

/** Memory (MB) per function, restated from infra/lambda.ts (cost.test.ts checks it against the recorded SST app). */
export const FUNCTION_MEMORY_MB: Readonly<Record<FunctionKey, number>> = {
  intakeApi: 512,
  authorizer: 256,
  intakeExtract: 256,
  orchestrator: 256,
  worker: 256,
  kernel: 256,
  timer: 128,
  sweep: 256,
  batch: 512,
};

/** A work queue of the app (QUEUE_SETTINGS roles). */
export type QueueRole = "crewEvents" | "agentSteps" | "proposals" | "extraction" | "timers";

/** The consumer of each queue and whether the queue is FIFO. */
export const QUEUE_CONSUMERS: Readonly<Record<QueueRole, { fn: FunctionKey; fifo: boolean }>> = {
  crewEvents: { fn: "orchestrator", fifo: true },
  agentSteps: { fn: "worker", fifo: false },
  proposals: { fn: "kernel", fifo: false },
  extraction: { fn: "intakeExtract", fifo: false },
  timers: { fn: "timer", fifo: false },
};

/** Memory Lambda gives one full vCPU at (AWS: "at 1,769 MB, a function has the equivalent of one vCPU"). */
export const ONE_VCPU_MB = 1769;

// ---------------------------------------------------------------------------------------------
// The request profile (what bench/pipeline.bench.ts measures, per claim)
// ---------------------------------------------------------------------------------------------

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
  /** Sum of handler wall time per claim, ms (the local-proxy duration). */
  handlerMs: number;
  /** Of which the SDK calls were in flight, ms (local emulators' latency). */
  sdkMs: number;
  /** Per claim: handler time outside SDK calls scaled to the function's CPU share + typical AWS latency per SDK call, ms. */
  awsEstimateMs: number;
  /** LLM calls per claim made by this function (0 with the rules model wait; the LLM bill itself is excluded). */
  llmCalls: number;
};

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

/** What pipeline.bench.ts writes to bench/out/aws-requests.json. */
export type AwsRequestsFile = {
  recordedAt: string;
  machine: string;
  note: string;
  /** One claim at a time: batches of one, the low-traffic case. */
  sequential: Record<ClaimKind, ClaimProfile>;
  /** Claims submitted concurrently: batch fill as under load. */
  concurrent: Record<ClaimKind, ClaimProfile>;
  /** The step-deadline timers of one claim (two agent steps), firing after the claim was decided; undefined when not measured. */
  timerPath?: ClaimProfile;
  /** Bytes stored per claim by entity (DynamoDB item sizes) after the run. */
  storedBytesPerClaim: Record<string, number>;
};

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

/** What a line of the bill belongs to: the orchestration Step Functions would replace, or the work itself. */
export type CostCategory = "orchestration" | "work";

/** One line of the bill for one claim. */
export type CostLine = {
  service: "API Gateway" | "Lambda" | "SQS" | "DynamoDB" | "EventBridge";
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
  /** Which measured duration bills Lambda: the local wall time, or the AWS estimate. */
  duration: "local" | "awsEstimate";
  /** Records per invocation for the SQS consumers: "measured" (as the bench saw) or a fixed fill (1 = every message its own invocation). */
  batchFill: "measured" | number;
  /** Seconds a Lambda waits per LLM call (0 for the rules model); billed as GB-seconds of the caller. */
  llmWaitS: number;
};

/** The default options: AWS duration estimate, measured batch fill, no LLM wait (rules model). */
export const DEFAULT_COST_OPTIONS: CostOptions = { duration: "awsEstimate", batchFill: "measured", llmWaitS: 0 };

/** Adds two profiles claim for claim (e.g. a claim plus its timer path); `claims` and `kind` come from `a`. */
export function addProfiles(a: ClaimProfile, b: ClaimProfile): ClaimProfile {
  const sumRecord = (x: Record<string, number>, y: Record<string, number>) => {
    const out: Record<string, number> = { ...x };
    for (const [k, v] of Object.entries(y)) out[k] = (out[k] ?? 0) + v;
    return out;
  };
  const requests: Record<string, Record<string, number>> = { ...a.requests };
  for (const [service, ops] of Object.entries(b.requests)) requests[service] = sumRecord(requests[service] ?? {}, ops);
  const dynamo: Record<string, DynamoUsage> = { ...a.dynamo };
  for (const [entity, u] of Object.entries(b.dynamo)) {
    const p = dynamo[entity];
    dynamo[entity] = p
      ? { reads: p.reads + u.reads, writes: p.writes + u.writes, rru: p.rru + u.rru, wru: p.wru + u.wru, gsiWru: p.gsiWru + u.gsiWru, conditionalFailures: p.conditionalFailures + u.conditionalFailures }
      : { ...u };
  }
  const sqsSends: Partial<Record<QueueRole, QueueUsage>> = { ...a.sqsSends };
  for (const [role, u] of Object.entries(b.sqsSends) as [QueueRole, QueueUsage][]) {
    const p = sqsSends[role];
    sqsSends[role] = p ? { requests: p.requests + u.requests, chunks: p.chunks + u.chunks, messages: p.messages + u.messages } : { ...u };
  }
  const invocations: Partial<Record<FunctionKey, InvocationUsage>> = { ...a.invocations };
  for (const [fn, u] of Object.entries(b.invocations) as [FunctionKey, InvocationUsage][]) {
    const p = invocations[fn];
    invocations[fn] = p
      ? { invocations: p.invocations + u.invocations, records: p.records + u.records, handlerMs: p.handlerMs + u.handlerMs, sdkMs: p.sdkMs + u.sdkMs, awsEstimateMs: p.awsEstimateMs + u.awsEstimateMs, llmCalls: p.llmCalls + u.llmCalls }
      : { ...u };
  }
  return {
    kind: a.kind,
    claims: a.claims,
    requests,
    dynamo,
    sqsSends,
    events: { requests: a.events.requests + b.events.requests, entries: a.events.entries + b.events.entries, chunks: a.events.chunks + b.events.chunks },
    busDeliveries: sumRecord(a.busDeliveries, b.busDeliveries),
    apiRequests: a.apiRequests + b.apiRequests,
    invocations,
  };
}

/** Billed GB-seconds of `invocations` invocations that together ran `totalMs` at `memoryMb` (each rounded up to 1 ms). */
export function billedGbSeconds(invocations: number, totalMs: number, memoryMb: number): number {
  if (invocations < 0 || totalMs < 0 || memoryMb <= 0) throw new RangeError(`billedGbSeconds: invalid input (${invocations}, ${totalMs}, ${memoryMb})`);
  if (invocations === 0) return 0;
  const perInvocation = Math.ceil(totalMs / invocations / PRICES.lambda.granularityMs) * PRICES.lambda.granularityMs;
  return (invocations * perInvocation * memoryMb) / 1024 / 1000;
}

/** Invocations per claim of a queue consumer for a batch fill: measured, or records ÷ fill (at least the measured minimum of one per record ÷ batch). */
export function invocationsFor(usage: Pick<InvocationUsage, "invocations" | "records">, fill: CostOptions["batchFill"]): number {
  if (fill === "measured") return usage.invocations;
  if (!(fill >= 1)) throw new RangeError(`invocationsFor: a batch fill is at least 1 record per invocation, got ${String(fill)}`);
  return usage.records / fill;
}

/** A count for a line label: at most 3 significant digits (per-claim averages are fractions). */
const n3 = (x: number) => String(Number(x.toPrecision(3)));

const QUEUE_OF: Partial<Record<FunctionKey, QueueRole>> = Object.fromEntries(
  (Object.entries(QUEUE_CONSUMERS) as [QueueRole, { fn: FunctionKey }][]).map(([role, c]) => [c.fn, role]),
);

/** Orchestration entities and queues: what a Step Functions state machine would replace. */
const ORCHESTRATION_QUEUES: readonly QueueRole[] = ["crewEvents", "agentSteps", "proposals", "timers"];
const ORCHESTRATION_FUNCTIONS: readonly FunctionKey[] = ["orchestrator", "timer"];
const ORCHESTRATION_ENTITIES: readonly string[] = ["session"];

/**
 * The bill of one claim, line by line: API Gateway requests; Lambda requests and GB-seconds per function
 * (plus GB-seconds spent waiting on the LLM); SQS sends by the handlers, and the event source mapping's
 * ReceiveMessage + DeleteMessageBatch per invocation; deliveries of bus rules into their target queues;
 * DynamoDB read/write request units (table and gsi1) by entity; EventBridge entries.
 */
export function costLines(profile: ClaimProfile, options: CostOptions = DEFAULT_COST_OPTIONS): CostLine[] {
  const lines: CostLine[] = [];
  const push = (line: Omit<CostLine, "perClaim">) => {
    if (line.units > 0) lines.push({ ...line, perClaim: line.units * line.price });
  };
  push({ service: "API Gateway", item: "HTTP API request (POST /claims)", category: "work", units: profile.apiRequests, unit: "requests", price: PRICES.apiGateway.httpRequest });

  const invocationsOf: Partial<Record<FunctionKey, number>> = {};
  for (const [fn, usage] of Object.entries(profile.invocations) as [FunctionKey, InvocationUsage][]) {
    const queue = QUEUE_OF[fn];
    const invocations = queue ? invocationsFor(usage, options.batchFill) : usage.invocations;
    invocationsOf[fn] = invocations;
    const category: CostCategory = ORCHESTRATION_FUNCTIONS.includes(fn) ? "orchestration" : "work";
    const memory = FUNCTION_MEMORY_MB[fn];
    push({ service: "Lambda", item: `${fn} invocations`, category, units: invocations, unit: "requests", price: PRICES.lambda.request });
    const ms = options.duration === "local" ? usage.handlerMs : usage.awsEstimateMs;
    push({ service: "Lambda", item: `${fn} duration (${memory} MB)`, category, units: billedGbSeconds(invocations, ms, memory), unit: "GB-s", price: PRICES.lambda.gbSecondArm64 });
    if (options.llmWaitS > 0 && usage.llmCalls > 0) {
      push({ service: "Lambda", item: `${fn} waiting on the LLM (${n3(usage.llmCalls)} calls × ${options.llmWaitS} s)`, category: "work", units: (usage.llmCalls * options.llmWaitS * memory) / 1024, unit: "GB-s", price: PRICES.lambda.gbSecondArm64 });
    }
  }

  for (const [role, send] of Object.entries(profile.sqsSends) as [QueueRole, QueueUsage][]) {
    const { fifo, fn } = QUEUE_CONSUMERS[role];
    const price = fifo ? PRICES.sqs.fifoRequest : PRICES.sqs.standardRequest;
    const category: CostCategory = ORCHESTRATION_QUEUES.includes(role) ? "orchestration" : "work";
    const label = `${role}${fifo ? " (FIFO)" : ""}`;
    push({ service: "SQS", item: `${label} sends (${n3(send.messages)} messages in ${n3(send.requests)} requests)`, category, units: send.chunks, unit: "requests", price });
    const invocations = invocationsOf[fn] ?? 0;
    push({ service: "SQS", item: `${label} ReceiveMessage by the event source mapping`, category, units: invocations, unit: "requests", price });
    push({ service: "SQS", item: `${label} DeleteMessageBatch by the event source mapping`, category, units: invocations, unit: "requests", price });
  }
  for (const [rule, deliveries] of Object.entries(profile.busDeliveries)) {
    push({ service: "SQS", item: `bus rule "${rule}" → its target queue (SendMessage by EventBridge)`, category: "work", units: deliveries, unit: "requests", price: PRICES.sqs.standardRequest });
  }

  for (const [entity, u] of Object.entries(profile.dynamo).sort(([a], [b]) => a.localeCompare(b))) {
    const category: CostCategory = ORCHESTRATION_ENTITIES.includes(entity) ? "orchestration" : "work";
    push({ service: "DynamoDB", item: `${entity}: ${n3(u.writes)} writes${u.conditionalFailures > 0 ? ` (${n3(u.conditionalFailures)} failed conditions)` : ""}`, category, units: u.wru, unit: "WRU", price: PRICES.dynamodb.wru });
    push({ service: "DynamoDB", item: `${entity}: gsi1 maintenance`, category, units: u.gsiWru, unit: "WRU", price: PRICES.dynamodb.wru });
    push({ service: "DynamoDB", item: `${entity}: ${n3(u.reads)} reads`, category, units: u.rru, unit: "RRU", price: PRICES.dynamodb.rru });
  }

  push({ service: "EventBridge", item: `PutEvents entries (${n3(profile.events.entries)} events in ${n3(profile.events.requests)} requests)`, category: "work", units: profile.events.chunks, unit: "events", price: PRICES.eventBridge.customEvent });
  return lines;
}

/** $ per million claims of a set of lines. */
export function perMillion(lines: readonly CostLine[]): number {
  return lines.reduce((sum, l) => sum + l.perClaim, 0) * 1e6;
}

/** $ per million claims by service. */
export function byService(lines: readonly CostLine[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of lines) out[l.service] = (out[l.service] ?? 0) + l.perClaim * 1e6;
  return out;
}

/** The `n` most expensive lines, largest first. */
export function topDrivers(lines: readonly CostLine[], n: number): CostLine[] {
  return [...lines].sort((a, b) => b.perClaim - a.perClaim).slice(0, n);
}

/**
 * Duration estimate on AWS for one function's work: the local time outside SDK calls scaled to the
 * CPU share of `memoryMb` (1769 MB = one vCPU; a conservative upper bound, since short bursts are not
 * throttled that hard), plus a typical in-region latency per SDK call.
 */
export function estimateAwsMs(nonSdkMs: number, memoryMb: number, calls: Readonly<Record<string, number>>, latency: Readonly<Record<string, number>> = AWS_LATENCY_MS): number {
  const cpu = nonSdkMs * Math.max(1, ONE_VCPU_MB / memoryMb);
  let io = 0;
  for (const [key, n] of Object.entries(calls)) {
    const service = key.split(".")[0] ?? key;
    const ms = latency[key] ?? latency[service];
    if (ms === undefined) throw new Error(`estimateAwsMs: no latency for ${key}`);
    io += n * ms;
  }
  return cpu + io;
}

/**
 * Typical in-region latency of one SDK call from Lambda, ms (assumptions, not measurements): DynamoDB
 * single-item calls single-digit ms, SQS sends ~10 ms (FIFO a little more), EventBridge PutEvents ~20 ms.
 */
export const AWS_LATENCY_MS: Readonly<Record<string, number>> = {
  DynamoDB: 6,
  "DynamoDB.BatchWriteItem": 10,
  "DynamoDB.Query": 8,
  SQS: 12,
  EventBridge: 20,
};

// ---------------------------------------------------------------------------------------------
// Step Functions Standard, for comparison
// ---------------------------------------------------------------------------------------------

/** One state of the comparison state machine and how many transitions it costs per claim. */
export type SfnState = { state: string; type: "Task" | "Choice" | "Succeed"; does: string; transitions: number };

/**
 * The states a Standard state machine needs to run the same flow for one claim on the happy path
 * (every state entered is one billed transition; a retry is one more). It replaces the crew-events FIFO
 * queue, the orchestrator, the session snapshots, the agent-steps and proposals queues and the timers
 * (a Task's TimeoutSeconds and Retry/Catch do what the timers and the fixer routing do). The LLM steps
 * and the kernel stay Lambda functions; intake still stores the claim and calls StartExecution.
 */
export function stepFunctionsStates(kind: ClaimKind): SfnState[] {
  const extraction: SfnState[] = kind === "free_text"
    ? [
        { state: "Extract", type: "Task", does: "Lambda intake-extract: one LLM call, stores the structured claim", transitions: 1 },
        { state: "Extracted?", type: "Choice", does: "extraction failed → NeedsReview, else on", transitions: 1 },
      ]
    : [];
  return [
    ...extraction,
    { state: "StartCrew", type: "Task", does: "DynamoDB UpdateItem (direct service integration): the claim becomes RUNNING", transitions: 1 },
    { state: "Analyst", type: "Task", does: "Lambda worker: analyst step (LLM), audits it; TimeoutSeconds 120, Retry, Catch → Fixer", transitions: 1 },
    { state: "DecisionMaker", type: "Task", does: "Lambda worker: decision maker step (LLM), audits it; same timeout/retry/catch", transitions: 1 },
    { state: "SelfCheck", type: "Choice", does: "proposal valid and confident enough → Kernel, else → NeedsReview", transitions: 1 },
    { state: "Kernel", type: "Task", does: "Lambda kernel: verdict, ledger, audit, publish (unchanged)", transitions: 1 },
    { state: "Done", type: "Succeed", does: "end of the execution", transitions: 1 },
  ];
}

/** Transitions per claim of `states`. */
export function transitions(states: readonly SfnState[]): number {
  return states.reduce((n, s) => n + s.transitions, 0);
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

const benchDir = dirname(fileURLToPath(import.meta.url));
/** Where pipeline.bench.ts writes the request profile. */
export const AWS_REQUESTS_FILE = join(benchDir, "out", "aws-requests.json");

const money = (x: number) => (x >= 10 ? x.toFixed(2) : x >= 0.1 ? x.toFixed(3) : x.toFixed(4));

/** A profile with its timer path added (when measured). */
export function withTimers(file: AwsRequestsFile, profile: ClaimProfile): ClaimProfile {
  return file.timerPath ? addProfiles(profile, file.timerPath) : profile;
}

/** The markdown cost section for a request profile file. */
export function report(file: AwsRequestsFile): string {
  const kinds: ClaimKind[] = ["structured", "free_text"];
  const scenarios: { name: string; phase: "concurrent" | "sequential"; options: CostOptions; timers?: false }[] = [
    { name: "under load (measured batch fill), AWS duration estimate", phase: "concurrent", options: DEFAULT_COST_OPTIONS },
    { name: "the same without the step timers (no timer path)", phase: "concurrent", options: DEFAULT_COST_OPTIONS, timers: false },
    { name: "under load, local handler time as duration", phase: "concurrent", options: { ...DEFAULT_COST_OPTIONS, duration: "local" } },
    { name: "low traffic: one message per invocation", phase: "sequential", options: { ...DEFAULT_COST_OPTIONS, batchFill: 1 } },
    { name: "under load + LLM wait 1 s per call", phase: "concurrent", options: { ...DEFAULT_COST_OPTIONS, llmWaitS: 1 } },
    { name: "under load + LLM wait 3 s per call", phase: "concurrent", options: { ...DEFAULT_COST_OPTIONS, llmWaitS: 3 } },
  ];
  const summaryRows: TableRow[] = [];
  for (const s of scenarios) {
    const row: TableRow = { scenario: s.name };
    for (const kind of kinds) {
      const profile = s.timers === false ? file[s.phase][kind] : withTimers(file, file[s.phase][kind]);
      const total = perMillion(costLines(profile, s.options));
      row[`${kind} $/M claims`] = Number(money(total));
      row[`${kind} ≤ $${GOAL_PER_MILLION}`] = total <= GOAL_PER_MILLION ? "met" : "MISSED";
    }
    summaryRows.push(row);
  }

  const headline = (kind: ClaimKind) => costLines(withTimers(file, file.concurrent[kind]), DEFAULT_COST_OPTIONS);
  const serviceRows = ["API Gateway", "Lambda", "SQS", "DynamoDB", "EventBridge"].map((service) => {
    const row: TableRow = { service };
    for (const kind of kinds) row[`${kind} $/M`] = Number(money(byService(headline(kind))[service] ?? 0));
    return row;
  });
  const lineRows = (kind: ClaimKind) =>
    [...headline(kind)].sort((a, b) => b.perClaim - a.perClaim).map((l) => ({
      service: l.service,
      item: l.item,
      category: l.category,
      "units/claim": Number(l.units.toPrecision(4)),
      unit: l.unit,
      "$/M claims": Number(money(l.perClaim * 1e6)),
    }));

  const sfnRows: TableRow[] = [];
  for (const kind of kinds) {
    const lines = headline(kind);
    const orchestration = perMillion(lines.filter((l) => l.category === "orchestration"));
    const states = stepFunctionsStates(kind);
    const sfn = transitions(states) * PRICES.stepFunctions.standardTransition * 1e6;
    sfnRows.push({
      claim: kind,
      "our orchestration $/M (queues, orchestrator, timers, sessions)": Number(money(orchestration)),
      "Step Functions transitions/claim": transitions(states),
      "Step Functions transitions $/M": Number(money(sfn)),
      "ratio": `${(sfn / orchestration).toFixed(1)}×`,
      "whole claim, ours $/M": Number(money(perMillion(lines))),
      "whole claim with Step Functions instead $/M": Number(money(perMillion(lines) - orchestration + sfn)),
    });
  }
  const stateRows = stepFunctionsStates("free_text").map((s) => ({ state: s.state, type: s.type, transitions: s.transitions, does: s.does }));

  const storageGb = Object.values(file.storedBytesPerClaim).reduce((a, b) => a + b, 0) * 1e6 / 1e9;
  const storageRows = Object.entries(file.storedBytesPerClaim).sort(([, a], [, b]) => b - a).map(([entity, bytes]) => ({ entity, "bytes/claim": Math.round(bytes) }));

  return [
    "### What a claim costs on AWS (bench/cost.ts)",
    "",
    `From \`bench/out/aws-requests.json\` (recorded ${file.recordedAt} by bench/pipeline.bench.ts on ${file.machine}). ${file.note}`,
    "",
    `Prices: AWS list prices, ${PRICES.region}, checked ${PRICES.checkedOn}; free tiers ignored; LLM tokens excluded. Lambda arm64 $0.20/M requests + $${PRICES.lambda.gbSecondArm64}/GB-s (1 ms granularity); SQS $0.40/M standard, $0.50/M FIFO per 64 KiB chunk; DynamoDB on-demand $0.625/M WRU (1 KB), $0.125/M RRU (4 KB strongly consistent, ½ eventually); EventBridge $1.00/M custom events (64 KiB chunks); API Gateway HTTP API $1.00/M requests (512 KB); Step Functions Standard $0.025 per 1,000 state transitions. The step-deadline timers of a claim fire 120 s after its steps and are included${file.timerPath ? "" : " — NOT measured in this file, so missing"}.`,
    "",
    `#### $ per million claims (goal ≤ $${GOAL_PER_MILLION})`,
    "",
    formatTable(summaryRows),
    "",
    "#### By service (headline scenario: under load, AWS duration estimate, rules model)",
    "",
    formatTable(serviceRows),
    "",
    "#### Every line, structured claim (headline scenario)",
    "",
    formatTable(lineRows("structured")),
    "",
    "#### Every line, free-text claim (headline scenario)",
    "",
    formatTable(lineRows("free_text")),
    "",
    "#### Beside AWS Step Functions Standard",
    "",
    formatTable(sfnRows),
    "",
    `The state machine counted (free text; a structured claim skips the first two states): every state entered is one billed transition, Choice and Succeed states included. Happy path only: each retry, and each fixer detour (Catch → Fixer task → back), adds transitions. Even the bare minimum — the three Lambda tasks Analyst → DecisionMaker → Kernel and nothing else — is 3 transitions = $${(3 * PRICES.stepFunctions.standardTransition * 1e6).toFixed(0)} per million claims, ${(3 * PRICES.stepFunctions.standardTransition * 1e6 / GOAL_PER_MILLION).toFixed(0)}× the whole $${GOAL_PER_MILLION} budget on its own.`,
    "",
    formatTable(stateRows),
    "",
    `#### Stored per claim (not per request; DynamoDB storage $${PRICES.dynamodb.storageGbMonth}/GB-month + PITR $${PRICES.dynamodb.pitrGbMonth}/GB-month)`,
    "",
    formatTable(storageRows),
    "",
    `A million claims kept: ${storageGb.toFixed(1)} GB → $${(storageGb * (PRICES.dynamodb.storageGbMonth + PRICES.dynamodb.pitrGbMonth)).toFixed(2)} per month while they are kept (table + PITR), on top of the per-claim figures.`,
  ].join("\n");
}

/** Reads a request profile file, naming the file when it is missing or malformed. */
export async function readAwsRequests(path: string = AWS_REQUESTS_FILE): Promise<AwsRequestsFile> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (cause) {
    throw new Error(`cost: cannot read ${path} (run \`npm run bench -- pipeline\` first): ${(cause as Error).message}`, { cause });
  }
  const parsed = JSON.parse(text) as Partial<AwsRequestsFile>;
  for (const key of ["sequential", "concurrent", "storedBytesPerClaim"] as const) {
    if (parsed[key] === undefined) throw new Error(`cost: ${path} has no "${key}" (written by an older pipeline bench? run it again)`);
  }
  return parsed as AwsRequestsFile;
}

/** Reads bench/out/aws-requests.json (counting on the local stack first when it is missing) and returns the cost section. */
export async function run(): Promise<string> {
  if (!existsSync(AWS_REQUESTS_FILE)) {
    const { countAwsRequests } = await import("./pipeline.bench.ts");
    await countAwsRequests();
  }
  return report(await readAwsRequests());
}
