// Pipeline benchmark on the local stack (issue 4): claims per second and submit-to-DECIDED latency
// with the rules model, beside the in-process pipeline; and the AWS requests each claim causes, by
// service and operation, counted with SDK middleware on the stack's clients (written to
// bench/out/aws-requests.json for bench/cost.ts).
//
// Everything runs through the production handlers: claims go in through the intake-api handler with
// API Gateway v2 events (no HTTP server, no authorizer: its 5-minute cache makes it ~0 per claim), the
// pollers play Lambda's event source mappings, the kernel's completion marks a claim DECIDED.
import { itemBytes, valueBytes } from "../adapters/aws/compact.ts";
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, totalmem } from "node:os";
import { dirname } from "node:path";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { Context, SQSBatchResponse, SQSEvent } from "aws-lambda";
import { createInMemoryClaimRepository } from "../pipeline/in-memory.ts";
import { createInProcessPipeline } from "../pipeline/in-process.ts";
import type { ClaimRecord } from "../core/claims/claim-record.ts";
import { systemClock } from "../core/crew/index.ts";
import type { Order } from "../core/integrity/index.ts";
import { createRulesModel } from "../core/llm/index.ts";
import type { ClaimRepository } from "../pipeline/ports.ts";
import { countRequests, createRequestCounter } from "../adapters/aws/index.ts";
import type { RequestCounts } from "../adapters/aws/index.ts";
import { loadConfig } from "../functions/lib/compose.ts";
import type { SqsHandler } from "../functions/lib/sqs-consumer.ts";
import { apiEvent, CONFIG_PATH } from "../local/stack-fixture.ts";
import { startLocalStack } from "../local/stack.ts";
import type { LocalStack } from "../local/stack.ts";
import { AWS_LATENCY_MS, AWS_REQUESTS_FILE, estimateAwsMs, FUNCTION_MEMORY_MB, QUEUE_CONSUMERS } from "./cost.ts";
import type { AwsRequestsFile, ClaimKind, ClaimProfile, DynamoUsage, FunctionKey, InvocationUsage, QueueRole, QueueUsage } from "./cost.ts";
import { formatTable, quantile } from "./harness.ts";
import type { TableRow } from "./harness.ts";

// ---------------------------------------------------------------------------------------------
// Sizes (pure)
// ---------------------------------------------------------------------------------------------

const utf8 = (s: string) => Buffer.byteLength(s, "utf8");

/** DynamoDB's size of one attribute value (the adapters' own measure, so the bench and the store agree). */
export const attributeValueSize = valueBytes;

/** DynamoDB's size of an item: the attribute names' UTF-8 bytes plus their values' sizes. */
export const itemSize = itemBytes;

/** 1 KB write units of an item of `bytes` (at least 1). */
export const writeUnits = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

/** The single-table entity a key belongs to (adapters/aws/README.md), or "other". */
export function entityOf(pk: unknown, sk: unknown): string {
  const p = typeof pk === "string" ? pk : "";
  const s = typeof sk === "string" ? sk : "";
  if (p.startsWith("CLAIM#")) return s.startsWith("SESSION") ? "session" : "claim";
  if (p.startsWith("IDEM#")) return "idempotency";
  if (p.startsWith("VERDICT#")) return "verdict";
  if (p.startsWith("DFID#") || p.startsWith("SIM#")) return "audit";
  if (p.startsWith("ORDER#")) return s === "LEDGER" ? "ledger" : "order";
  if (p.startsWith("STATUS#")) return "claim";
  if (p === "ORDERS") return "order";
  return "other";
}

type Loose = Record<string, unknown>;
const asLoose = (v: unknown): Loose => (typeof v === "object" && v !== null ? (v as Loose) : {});

/** The entity a DynamoDB request touches, from its Key, Item, key condition values or first batch entry. */
export function entityOfRequest(operation: string, input: Loose): string {
  const key = asLoose(input.Key ?? input.Item);
  if (key.pk !== undefined) return entityOf(key.pk, key.sk);
  if (operation === "Query" || operation === "Scan") {
    const values = Object.values(asLoose(input.ExpressionAttributeValues)).filter((v): v is string => typeof v === "string");
    const strings = values.map((v) => [v, values.find((w) => w !== v && w.startsWith("SESSION")) ?? ""] as const);
    for (const [v, sk] of strings) {
      const e = entityOf(v, sk);
      if (e !== "other") return e;
    }
    return "other";
  }
  if (operation === "BatchWriteItem" || operation === "BatchGetItem") {
    for (const requests of Object.values(asLoose(input.RequestItems))) {
      const first = asLoose(Array.isArray(requests) ? requests[0] : asLoose(requests).Keys);
      const inner = asLoose(asLoose(first.PutRequest).Item ?? asLoose(first.DeleteRequest).Key ?? (Array.isArray(first) ? first[0] : first));
      if (inner.pk !== undefined) return entityOf(inner.pk, inner.sk);
    }
  }
  return "other";
}

/** The clauses of an update expression by keyword (`SET`, `REMOVE`, `ADD`, `DELETE`). */
export function updateClauses(expression: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /\b(SET|REMOVE|ADD|DELETE)\b/gi;
  const marks = [...expression.matchAll(re)].map((m) => ({ kw: m[1]!.toUpperCase(), at: m.index ?? 0, len: m[0].length }));
  marks.forEach((m, i) => {
    out[m.kw] = `${out[m.kw] ?? ""} ${expression.slice(m.at + m.len, marks[i + 1]?.at ?? expression.length)}`.trim();
  });
  return out;
}

/**
 * gsi1 write units of one write (projection ALL, so an index entry is as large as the item): a put of an
 * item with `gsi1pk` writes it once; an update that sets gsi1 keys moves the entry (delete + put), one
 * that removes them deletes it, one that leaves them on an indexed item rewrites it.
 */
export function gsiWriteUnits(operation: string, input: Loose, output: Loose): number {
  if (operation === "PutItem") {
    const item = asLoose(input.Item);
    return item.gsi1pk === undefined ? 0 : writeUnits(itemSize(item));
  }
  if (operation !== "UpdateItem") return 0;
  const clauses = updateClauses(typeof input.UpdateExpression === "string" ? input.UpdateExpression : "");
  const attrs = asLoose(output.Attributes);
  const units = writeUnits(itemSize(attrs));
  if (/\bgsi1(pk|sk)\b/.test(clauses.REMOVE ?? "")) return units;
  if (/\bgsi1(pk|sk)\b/.test(clauses.SET ?? "")) return 2 * units;
  return attrs.gsi1pk === undefined ? 0 : units;
}

/** Capacity units of a DynamoDB response (`ReturnConsumedCapacity: INDEXES`): one object, or a list for batch calls. */
export function consumedUnits(output: Loose): number {
  const cc = output.ConsumedCapacity;
  const list = Array.isArray(cc) ? cc : cc === undefined ? [] : [cc];
  return list.reduce<number>((n, c) => n + (Number(asLoose(c).CapacityUnits) || 0), 0);
}

/** Bytes SQS bills for a send: message bodies plus message attributes (names, types, values). */
export function sqsPayloadBytes(input: Loose): { messages: number; bytes: number } {
  const entries: Loose[] = Array.isArray(input.Entries) ? (input.Entries as Loose[]) : [input];
  let bytes = 0;
  for (const e of entries) {
    bytes += typeof e.MessageBody === "string" ? utf8(e.MessageBody) : 0;
    for (const [name, attr] of Object.entries(asLoose(e.MessageAttributes))) {
      const a = asLoose(attr);
      bytes += utf8(name) + utf8(String(a.DataType ?? "")) + utf8(String(a.StringValue ?? "")) + (a.BinaryValue instanceof Uint8Array ? a.BinaryValue.byteLength : 0);
    }
  }
  return { messages: entries.length, bytes };
}

/** 64 KiB chunks SQS bills for a request of `bytes` (at least 1). */
export const sqsChunks = (bytes: number) => Math.max(1, Math.ceil(bytes / (64 * 1024)));

/** Size of a PutEvents entry as AWS computes it: Source, DetailType, Detail, Resources (UTF-8) and 14 bytes for Time. */
export function eventEntryBytes(entry: Loose): number {
  const s = (v: unknown) => (typeof v === "string" ? utf8(v) : 0);
  const resources = Array.isArray(entry.Resources) ? entry.Resources.reduce<number>((n, r) => n + s(r), 0) : 0;
  return s(entry.Source) + s(entry.DetailType) + s(entry.Detail) + resources + (entry.Time === undefined ? 0 : 14);
}

// ---------------------------------------------------------------------------------------------
// Recording requests and invocations
// ---------------------------------------------------------------------------------------------

/** Who made a request: a function of the app, or "outside" (pollers, the harness). */
export type Caller = FunctionKey | "outside";

/** One SDK request as the usage middleware saw it. */
export type CallRecord = {
  caller: Caller;
  /** "tick" for requests made while handling step-deadline timers (timer function, orchestrator on ticks). */
  tag?: "tick";
  service: string;
  operation: string;
  error?: string;
  entity?: string;
  rru?: number;
  wru?: number;
  gsiWru?: number;
  conditionalFailure?: boolean;
  queue?: QueueRole;
  messages?: number;
  bytes?: number;
  chunks?: number;
  entries?: number;
};

/** One handler invocation. */
export type InvocationRecord = {
  fn: FunctionKey;
  tag?: "tick";
  records: number;
  ms: number;
  sdkMs: number;
  /** SDK calls by "Service.Operation". */
  calls: Record<string, number>;
};

type Ctx = { caller: Caller; tag?: "tick"; inflight: number; busySince: number; sdkMs: number; calls: Record<string, number> };

const CAPACITY_OPS = new Set(["GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchGetItem", "BatchWriteItem"]);
const READ_OPS = new Set(["GetItem", "Query", "Scan", "BatchGetItem"]);

type Middleware = (next: (args: { input: Loose }) => Promise<{ output: Loose }>, context: { clientName?: string; commandName?: string }) => (args: { input: Loose }) => Promise<{ output: Loose }>;
type StackClient = { middlewareStack: { add(mw: never, options: { step: "initialize"; name: string; override?: boolean }): void; remove(name: string): boolean } };

/**
 * Records every SDK request of the clients it is attached to (who made it, DynamoDB capacity by entity,
 * SQS and EventBridge payload chunks) and every handler invocation run through `runAs`/`wrapConsumer`.
 * DynamoDB requests ask for `ReturnConsumedCapacity: INDEXES`, which changes nothing but the answer.
 */
export function createUsageRecorder(queueRoleOf: (url: string) => QueueRole | undefined) {
  const als = new AsyncLocalStorage<Ctx>();
  let calls: CallRecord[] = [];
  let invocations: InvocationRecord[] = [];

  const enter = (ctx: Ctx | undefined) => {
    if (!ctx) return;
    if (ctx.inflight++ === 0) ctx.busySince = performance.now();
  };
  const leave = (ctx: Ctx | undefined) => {
    if (!ctx) return;
    if (--ctx.inflight === 0) ctx.sdkMs += performance.now() - ctx.busySince;
  };

  const middleware: Middleware = (next, context) => async (args) => {
    const ctx = als.getStore();
    const service = (context.clientName ?? "unknown").replace(/Client$/, "");
    const operation = (context.commandName ?? "unknown").replace(/Command$/, "");
    const input = service === "DynamoDB" && CAPACITY_OPS.has(operation) ? { ...args.input, ReturnConsumedCapacity: "INDEXES" } : args.input;
    const record: CallRecord = { caller: ctx?.caller ?? "outside", ...(ctx?.tag ? { tag: ctx.tag } : {}), service, operation };
    if (ctx) ctx.calls[`${service}.${operation}`] = (ctx.calls[`${service}.${operation}`] ?? 0) + 1;
    enter(ctx);
    try {
      const result = await next({ ...args, input });
      describe(record, input, result.output ?? {});
      return result;
    } catch (error) {
      record.error = (error as { name?: string }).name ?? "Error";
      describe(record, input, {});
      throw error;
    } finally {
      leave(ctx);
      calls.push(record);
    }
  };

  function describe(record: CallRecord, input: Loose, output: Loose): void {
    const { service, operation } = record;
    if (service === "DynamoDB") {
      record.entity = entityOfRequest(operation, input);
      const units = consumedUnits(output);
      if (READ_OPS.has(operation)) record.rru = units;
      else if (CAPACITY_OPS.has(operation)) {
        if (record.error === "ConditionalCheckFailedException") {
          // AWS bills a failed conditional write like the write (≥ 1 WRU); the emulator reports nothing.
          record.conditionalFailure = true;
          record.wru = operation === "PutItem" ? writeUnits(itemSize(asLoose(input.Item))) : 1;
        } else {
          record.wru = record.error ? 0 : units;
        }
        record.gsiWru = record.error ? 0 : gsiWriteUnits(operation, input, output);
      }
    } else if (service === "SQS") {
      const role = typeof input.QueueUrl === "string" ? queueRoleOf(input.QueueUrl) : undefined;
      if (role) record.queue = role;
      if (operation === "SendMessage" || operation === "SendMessageBatch") {
        const { messages, bytes } = sqsPayloadBytes(input);
        Object.assign(record, { messages, bytes, chunks: sqsChunks(bytes) });
      } else if (operation === "ReceiveMessage") {
        const msgs = Array.isArray(output.Messages) ? (output.Messages as Loose[]) : [];
        const bytes = msgs.reduce<number>((n, m) => n + (typeof m.Body === "string" ? utf8(m.Body) : 0), 0);
        Object.assign(record, { messages: msgs.length, bytes, chunks: sqsChunks(bytes) });
      }
    } else if (service === "EventBridge" && operation === "PutEvents") {
      const entries: Loose[] = Array.isArray(input.Entries) ? (input.Entries as Loose[]) : [];
      record.entries = entries.length;
      record.chunks = entries.reduce<number>((n, e) => n + sqsChunks(eventEntryBytes(e)), 0);
    }
  }

  /** Runs `f` as an invocation of `fn` (requests inside are attributed to it) and records its duration. */
  async function runAs<T>(fn: FunctionKey, records: number, f: () => Promise<T>, tag?: "tick"): Promise<T> {
    const ctx: Ctx = { caller: fn, ...(tag ? { tag } : {}), inflight: 0, busySince: 0, sdkMs: 0, calls: {} };
    const start = performance.now();
    try {
      return await als.run(ctx, f);
    } finally {
      invocations.push({ fn, ...(tag ? { tag } : {}), records, ms: performance.now() - start, sdkMs: ctx.sdkMs, calls: ctx.calls });
    }
  }

  return {
    /** Adds the middleware to an SDK client (a DocumentClient shares its base client's stack). */
    attach(client: StackClient): () => void {
      client.middlewareStack.add(middleware as never, { step: "initialize", name: "benchUsageRecorder", override: true });
      return () => void client.middlewareStack.remove("benchUsageRecorder");
    },
    runAs,
    /** Wraps a queue consumer so every invocation runs as its function (a crew-events batch of ticks only is tagged "tick"). */
    wrapConsumer(role: QueueRole, handler: SqsHandler, onDone?: (event: SQSEvent, response: SQSBatchResponse) => void): SqsHandler {
      const fn = QUEUE_CONSUMERS[role].fn;
      return async (event: SQSEvent, context: Context) => {
        const ticks = role === "timers" || (role === "crewEvents" && event.Records.every((r) => isTick(r.body)));
        const response = await runAs(fn, event.Records.length, () => handler(event, context), ticks ? "tick" : undefined);
        onDone?.(event, response);
        return response;
      };
    },
    /** The records so far, and a fresh start. */
    take(): { calls: CallRecord[]; invocations: InvocationRecord[] } {
      const out = { calls, invocations };
      calls = [];
      invocations = [];
      return out;
    },
    peekInvocations: (): readonly InvocationRecord[] => invocations,
  };
}

function isTick(body: string): boolean {
  try {
    return (JSON.parse(body) as { type?: unknown }).type === "crew.tick";
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// From records to a per-claim profile (pure)
// ---------------------------------------------------------------------------------------------

const LLM_FUNCTIONS: readonly FunctionKey[] = ["worker", "intakeExtract"];

/**
 * Per-claim averages of the requests and invocations made by the app's functions (requests from
 * outside any handler — pollers, the harness — are left out; `tick` selects the timer path instead).
 */
export function summarise(
  kind: ClaimKind,
  claims: number,
  data: { calls: readonly CallRecord[]; invocations: readonly InvocationRecord[]; busDeliveries: Readonly<Record<string, number>>; apiRequests: number },
  options: { tick: boolean; latency?: Readonly<Record<string, number>> } = { tick: false },
): ClaimProfile {
  if (!(claims > 0)) throw new RangeError(`summarise: claims must be > 0, got ${String(claims)}`);
  const mine = (tag: "tick" | undefined) => (options.tick ? tag === "tick" : tag === undefined);
  const per = (n: number) => n / claims;
  const requests: Record<string, Record<string, number>> = {};
  const dynamo: Record<string, DynamoUsage> = {};
  const sqsSends: Partial<Record<QueueRole, QueueUsage>> = {};
  const events = { requests: 0, entries: 0, chunks: 0 };
  for (const c of data.calls) {
    if (c.caller === "outside" || !mine(c.tag)) continue;
    const ops = (requests[c.service] ??= {});
    ops[c.operation] = (ops[c.operation] ?? 0) + per(1);
    if (c.service === "DynamoDB") {
      const u = (dynamo[c.entity ?? "other"] ??= { reads: 0, writes: 0, rru: 0, wru: 0, gsiWru: 0, conditionalFailures: 0 });
      if (READ_OPS.has(c.operation)) u.reads += per(1);
      else u.writes += per(1);
      u.rru += per(c.rru ?? 0);
      u.wru += per(c.wru ?? 0);
      u.gsiWru += per(c.gsiWru ?? 0);
      if (c.conditionalFailure) u.conditionalFailures += per(1);
    } else if (c.service === "SQS" && c.queue && (c.operation === "SendMessage" || c.operation === "SendMessageBatch")) {
      const u = (sqsSends[c.queue] ??= { requests: 0, chunks: 0, messages: 0 });
      u.requests += per(1);
      u.chunks += per(c.chunks ?? 1);
      u.messages += per(c.messages ?? 1);
    } else if (c.service === "EventBridge" && c.operation === "PutEvents") {
      events.requests += per(1);
      events.entries += per(c.entries ?? 0);
      events.chunks += per(c.chunks ?? 0);
    }
  }
  const invocations: Partial<Record<FunctionKey, InvocationUsage>> = {};
  for (const inv of data.invocations) {
    if (!mine(inv.tag)) continue;
    const u = (invocations[inv.fn] ??= { invocations: 0, records: 0, handlerMs: 0, sdkMs: 0, awsEstimateMs: 0, llmCalls: 0 });
    u.invocations += per(1);
    u.records += per(inv.records);
    u.handlerMs += per(inv.ms);
    u.sdkMs += per(inv.sdkMs);
    u.awsEstimateMs += per(estimateAwsMs(Math.max(0, inv.ms - inv.sdkMs), FUNCTION_MEMORY_MB[inv.fn], inv.calls, options.latency ?? AWS_LATENCY_MS));
    if (LLM_FUNCTIONS.includes(inv.fn)) u.llmCalls += per(inv.records);
  }
  const busDeliveries = options.tick ? {} : Object.fromEntries(Object.entries(data.busDeliveries).map(([k, v]) => [k, per(v)]));
  return { kind, claims, requests, dynamo, sqsSends, events, busDeliveries, apiRequests: options.tick ? 0 : per(data.apiRequests), invocations };
}

// ---------------------------------------------------------------------------------------------
// Claims
// ---------------------------------------------------------------------------------------------

const DAY_MS = 86_400_000;
/** The amount every bench claim asks for (≤ 500 EUR: no escalation) and the order amount behind it (room for any ledger). */
export const CLAIM_EUR = 299.99;
export const ORDER_EUR = 10_000;

/** Orders `ord_b<s|f><n>` for `count` claims of `kind`, electronics, bought 3 days before `nowMs`. */
export function benchOrders(kind: ClaimKind, count: number, nowMs: number, offset = 0): Order[] {
  const tag = kind === "structured" ? "s" : "f";
  return Array.from({ length: count }, (_, i) => ({
    order_id: `ord_b${tag}${String(offset + i + 1).padStart(6, "0")}`,
    purchase_date: new Date(nowMs - 3 * DAY_MS).toISOString(),
    category: "electronics",
    amount: ORDER_EUR,
    currency: "EUR" as const,
  }));
}

/** The request body of a claim on `order`: structured JSON, or the free text of SPEC §1. */
export function claimBody(kind: ClaimKind, orderId: string): Record<string, unknown> {
  return kind === "structured"
    ? { claim: { order_id: orderId, amount_eur: CLAIM_EUR, category: "electronics", reason: "The screen is dead on arrival" } }
    : { claim_text: `I bought order ${orderId} for ${CLAIM_EUR} EUR, the screen is dead` };
}

// ---------------------------------------------------------------------------------------------
// The local stack run
// ---------------------------------------------------------------------------------------------

/** One timed phase on the local stack. */
export type PhaseResult = {
  kind: ClaimKind;
  mode: "sequential" | "concurrent";
  claims: number;
  inFlight: number;
  wallMs: number;
  latenciesMs: number[];
  profile: ClaimProfile;
  /** Requests made outside handlers during the phase (pollers, drain checks), by "Service.Operation". */
  outside: Record<string, number>;
  /** The countRequests counter for the phase (every request of the stack's clients). */
  counted: RequestCounts;
  /** Records per invocation of each queue consumer. */
  batchFill: Partial<Record<FunctionKey, number>>;
};

const QUEUE_ROLES = Object.keys(QUEUE_CONSUMERS) as QueueRole[];
const SETTLE_MS = 60_000;

type BenchStack = {
  stack: LocalStack;
  recorder: ReturnType<typeof createUsageRecorder>;
  counter: ReturnType<typeof createRequestCounter>;
  bus: Record<string, number>;
  decided: Map<string, (at: number) => void>;
  stop(): Promise<void>;
};

async function startBenchStack(orders: readonly Order[]): Promise<BenchStack> {
  const clock = systemClock();
  const config = loadConfig(CONFIG_PATH, clock.now());
  const llm = createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility });
  const bus: Record<string, number> = {};
  const decided = new Map<string, (at: number) => void>();
  let urls: Record<string, QueueRole> = {};
  const recorder = createUsageRecorder((url) => urls[url]);
  const onKernelDone = (event: SQSEvent, response: SQSBatchResponse) => {
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    const at = performance.now();
    for (const r of event.Records) {
      if (failed.has(r.messageId)) continue;
      const claimId = (JSON.parse(r.body) as { claim_id?: string }).claim_id;
      if (claimId) decided.get(claimId)?.(at);
    }
  };
  const stack = await startLocalStack({
    configPath: CONFIG_PATH,
    clock,
    llm,
    orders: [...config.orders, ...orders],
    logLevel: "SILENT",
    sweepEveryMs: 0,
    settleTimeoutMs: SETTLE_MS,
    onBusEvent: (rule) => {
      bus[rule] = (bus[rule] ?? 0) + 1;
    },
    wrapHandler: (role, handler) => recorder.wrapConsumer(role, handler, role === "proposals" ? onKernelDone : undefined),
  });
  urls = Object.fromEntries(QUEUE_ROLES.map((role) => [stack.queues[role].url, role]));
  const counter = createRequestCounter();
  const detach = [stack.clients.dynamo, stack.clients.sqs, stack.clients.events].flatMap((client) => [
    recorder.attach(client as unknown as StackClient),
    countRequests(client as never, counter),
  ]);
  recorder.take();
  return {
    stack, recorder, counter, bus, decided,
    async stop() {
      for (const d of detach) d();
      await stack.stop();
    },
  };
}

/** Submits one claim through the intake-api handler; returns its id and the submit instant. */
async function submitThroughApi(b: BenchStack, body: Record<string, unknown>): Promise<{ claimId: string; at: number }> {
  const at = performance.now();
  const response = await b.recorder.runAs("intakeApi", 1, () =>
    b.stack.handlers.intakeApi(apiEvent("POST", "/claims", { body: JSON.stringify(body), headers: { "content-type": "application/json" } })),
  );
  const parsed = typeof response === "object" && response.statusCode === 202 && typeof response.body === "string" ? (JSON.parse(response.body) as { claim_id?: string }) : {};
  if (!parsed.claim_id) throw new Error(`pipeline bench: POST /claims answered ${JSON.stringify(response).slice(0, 300)}`);
  return { claimId: parsed.claim_id, at };
}

function waitDecided(b: BenchStack, claimId: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      b.decided.delete(claimId);
      reject(new Error(`pipeline bench: claim ${claimId} was not decided within ${SETTLE_MS / 1000} s`));
    }, SETTLE_MS);
    b.decided.set(claimId, (at) => {
      clearTimeout(timer);
      b.decided.delete(claimId);
      resolve(at);
    });
  });
}

const opsOf = (calls: readonly CallRecord[], pick: (c: CallRecord) => boolean) => {
  const out: Record<string, number> = {};
  for (const c of calls) if (pick(c)) out[`${c.service}.${c.operation}`] = (out[`${c.service}.${c.operation}`] ?? 0) + 1;
  return out;
};

/** Runs `orders.length` claims of `kind` with `inFlight` claims at a time; each slot submits, waits for DECIDED, submits the next. */
async function runPhase(b: BenchStack, kind: ClaimKind, orders: readonly Order[], inFlight: number): Promise<PhaseResult> {
  await b.stack.drained();
  keepTicks(b.recorder.take());
  b.counter.reset();
  for (const k of Object.keys(b.bus)) delete b.bus[k];
  const bodies = orders.map((o) => claimBody(kind, o.order_id));
  const latencies: number[] = [];
  const ids: string[] = [];
  let next = 0;
  const started = performance.now();
  let lastDecided = started;
  const slot = async () => {
    while (next < bodies.length) {
      const body = bodies[next++]!;
      // The claim id is known only once intake answers; the kernel runs several queue hops later, so the
      // waiter registered right after is always in place before the claim can be decided.
      const { claimId, at } = await submitThroughApi(b, body);
      ids.push(claimId);
      const decidedAt = await waitDecided(b, claimId);
      latencies.push(decidedAt - at);
      lastDecided = Math.max(lastDecided, decidedAt);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, slot));
  const wallMs = lastDecided - started;
  await b.stack.drained();
  const { calls, invocations } = b.recorder.take();
  const counted = b.counter.snapshot();
  for (const claimId of ids) {
    const record: ClaimRecord | undefined = await b.stack.deps.claims.getClaim(claimId);
    if (record?.status !== "DECIDED" || record.verdict !== "ACCEPT") {
      throw new Error(`pipeline bench: claim ${claimId} (${kind}) ended ${record?.status ?? "missing"} ${record?.verdict ?? ""} ${record?.reason_code ?? ""}, expected DECIDED ACCEPT`);
    }
  }
  const untagged = invocations.filter((i) => i.tag === undefined);
  const apiRequests = untagged.filter((i) => i.fn === "intakeApi").length;
  const profile = summarise(kind, ids.length, { calls, invocations, busDeliveries: { ...b.bus }, apiRequests }, { tick: false });
  const batchFill: Partial<Record<FunctionKey, number>> = {};
  for (const [fn, u] of Object.entries(profile.invocations) as [FunctionKey, InvocationUsage][]) batchFill[fn] = u.records / u.invocations;
  keepTicks({ calls, invocations });
  return {
    kind, mode: inFlight === 1 ? "sequential" : "concurrent", claims: ids.length, inFlight, wallMs, latenciesMs: latencies, profile,
    outside: opsOf(calls, (c) => c.caller === "outside"), counted, batchFill,
  };
}

let timerCalls: CallRecord[] = [];
let timerInvocations: InvocationRecord[] = [];

/** Timers of earlier phases fire during later ones: their records are tagged and kept for the timer path. */
function keepTicks(taken: { calls: readonly CallRecord[]; invocations: readonly InvocationRecord[] }): void {
  timerCalls.push(...taken.calls.filter((c) => c.tag === "tick"));
  timerInvocations.push(...taken.invocations.filter((i) => i.tag === "tick"));
}

/** Waits until every step-deadline timer of the run has fired and its tick was handled, then profiles that path per claim. */
async function timerPath(b: BenchStack, claims: number, expectedTimers: number, maxWaitMs: number): Promise<{ profile: ClaimProfile; fired: number; waitedMs: number }> {
  const start = performance.now();
  const fired = () => [...timerInvocations, ...b.recorder.peekInvocations()].filter((i) => i.fn === "timer").reduce((n, i) => n + i.records, 0);
  while (fired() < expectedTimers && performance.now() - start < maxWaitMs) {
    await new Promise((r) => setTimeout(r, 1000));
  }
  // The ticks the timers forwarded are in crew-events: drained() waits until the orchestrator handled them.
  await b.stack.drained();
  const rest = b.recorder.take();
  const calls = [...timerCalls, ...rest.calls.filter((c) => c.tag === "tick")];
  const invocations = [...timerInvocations, ...rest.invocations.filter((i) => i.tag === "tick")];
  const firedCount = invocations.filter((i) => i.fn === "timer").reduce((n, i) => n + i.records, 0);
  if (firedCount < expectedTimers) throw new Error(`pipeline bench: only ${firedCount} of ${expectedTimers} step timers fired within ${Math.round(maxWaitMs / 1000)} s`);
  const profile = summarise("structured", claims, { calls, invocations, busDeliveries: {}, apiRequests: 0 }, { tick: true });
  return { profile, fired: firedCount, waitedMs: performance.now() - start };
}

/** Bytes stored per claim by entity (orders, which are reference data, left out). */
async function storedBytes(b: BenchStack, claims: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  let start: Record<string, unknown> | undefined;
  do {
    const page = await b.stack.clients.dynamo.send(new ScanCommand({ TableName: "claims-local", ...(start ? { ExclusiveStartKey: start } : {}) }));
    for (const item of page.Items ?? []) {
      const entity = entityOf(item.pk, item.sk);
      if (entity === "order") continue;
      out[entity] = (out[entity] ?? 0) + itemSize(item) / claims;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
}

/** Sizes of one stack run. */
export type StackRunOptions = { sequential: number; concurrent: number; inFlight: number; timers: boolean };

/** What a stack run measured. */
export type StackRun = {
  phases: PhaseResult[];
  timer?: { profile: ClaimProfile; fired: number; waitedMs: number };
  stored: Record<string, number>;
  file: AwsRequestsFile;
};

/** The default sizes: 20 claims one at a time and 100 with 10 in flight, per kind; timers waited for. */
export function stackRunOptions(env: Readonly<Record<string, string | undefined>> = process.env): StackRunOptions {
  const num = (name: string, fallback: number, min: number) => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new RangeError(`pipeline bench: ${name} must be an integer ≥ ${min}, got "${raw}"`);
    return n;
  };
  return {
    sequential: num("PIPELINE_BENCH_SEQUENTIAL", 20, 1),
    concurrent: num("PIPELINE_BENCH_CONCURRENT", 100, 1),
    inFlight: num("PIPELINE_BENCH_IN_FLIGHT", 10, 2),
    timers: env.PIPELINE_BENCH_TIMERS !== "0",
  };
}

const machine = () => `node ${process.version}, ${cpus()[0]?.model ?? "cpu"} × ${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GB`;

/** Runs the four phases on one local stack (then the timers), writes bench/out/aws-requests.json, returns what it measured. */
export async function runOnStack(options: StackRunOptions = stackRunOptions()): Promise<StackRun> {
  timerCalls = [];
  timerInvocations = [];
  const now = Date.now();
  const plan: { kind: ClaimKind; n: number; inFlight: number; offset: number }[] = [
    { kind: "structured", n: options.sequential, inFlight: 1, offset: 0 },
    { kind: "free_text", n: options.sequential, inFlight: 1, offset: 0 },
    { kind: "structured", n: options.concurrent, inFlight: options.inFlight, offset: options.sequential },
    { kind: "free_text", n: options.concurrent, inFlight: options.inFlight, offset: options.sequential },
  ];
  const ordersOf = (p: (typeof plan)[number]) => benchOrders(p.kind, p.n, now, p.offset);
  const b = await startBenchStack(plan.flatMap(ordersOf));
  try {
    const phases: PhaseResult[] = [];
    for (const p of plan) phases.push(await runPhase(b, p.kind, ordersOf(p), p.inFlight));
    const claims = phases.reduce((n, p) => n + p.claims, 0);
    const timers = phases.reduce((n, p) => n + (p.profile.sqsSends.timers?.messages ?? 0) * p.claims, 0);
    const timer = options.timers ? await timerPath(b, claims, Math.round(timers), 200_000) : undefined;
    const stored = await storedBytes(b, claims);
    const find = (kind: ClaimKind, mode: PhaseResult["mode"]) => phases.find((p) => p.kind === kind && p.mode === mode)!.profile;
    const file: AwsRequestsFile = {
      recordedAt: new Date().toISOString(),
      machine: machine(),
      note: `Local stack (dynalite, fauxqs, local EventBridge; production handlers), rules model, system clock. Sequential: ${options.sequential} claims per kind, one at a time. Concurrent: ${options.concurrent} claims per kind, ${options.inFlight} in flight.${timer ? ` Timer path: ${timer.fired} step timers of ${claims} claims, waited ${Math.round(timer.waitedMs / 1000)} s.` : " Timer path not measured (PIPELINE_BENCH_TIMERS=0)."}`,
      sequential: { structured: find("structured", "sequential"), free_text: find("free_text", "sequential") },
      concurrent: { structured: find("structured", "concurrent"), free_text: find("free_text", "concurrent") },
      ...(timer ? { timerPath: timer.profile } : {}),
      storedBytesPerClaim: stored,
    };
    await mkdir(dirname(AWS_REQUESTS_FILE), { recursive: true });
    await writeFile(AWS_REQUESTS_FILE, `${JSON.stringify(file, null, 2)}\n`, "utf8");
    return { phases, ...(timer ? { timer } : {}), stored, file };
  } finally {
    await b.stop();
  }
}

/** Counts the AWS requests per claim on the local stack and writes bench/out/aws-requests.json (what cost.ts reads). */
export async function countAwsRequests(options?: StackRunOptions): Promise<AwsRequestsFile> {
  return (await runOnStack(options)).file;
}

// ---------------------------------------------------------------------------------------------
// The in-process pipeline, for the ratio
// ---------------------------------------------------------------------------------------------

/** A claim repository that notes when each claim becomes DECIDED or NEEDS_REVIEW. */
function timedClaims(): { repo: ClaimRepository; finalAt: Map<string, number> } {
  const inner = createInMemoryClaimRepository();
  const finalAt = new Map<string, number>();
  const repo: ClaimRepository = {
    createClaim: (record, idem) => inner.createClaim(record, idem),
    getClaim: (id) => inner.getClaim(id),
    findStalledClaims: (before, limit) => inner.findStalledClaims(before, limit),
    async updateClaim(id, patch, onlyFrom) {
      const result = await inner.updateClaim(id, patch, onlyFrom);
      if (result.changed && (patch.status === "DECIDED" || patch.status === "NEEDS_REVIEW")) finalAt.set(id, performance.now());
      return result;
    },
  };
  return { repo, finalAt };
}

/** One in-process measurement: claims/s for `n` claims submitted then drained, and per-claim latency. */
export type InProcessResult = { kind: ClaimKind; mode: "sequential" | "batch"; claims: number; wallMs: number; latenciesMs: number[] };

/** Runs `n` claims of `kind` in a fresh in-process pipeline: one at a time (submit, drain) or all submitted then drained. */
export async function runInProcess(kind: ClaimKind, n: number, mode: InProcessResult["mode"]): Promise<InProcessResult> {
  const clock = systemClock();
  const config = loadConfig(CONFIG_PATH, clock.now());
  const orders = benchOrders(kind, n, clock.now());
  const llm = createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility });
  const { repo, finalAt } = timedClaims();
  const p = createInProcessPipeline({ agent: config.agent, orders, llm, clock, overrides: { claims: repo } });
  const submitted: { id: string; at: number }[] = [];
  const started = performance.now();
  for (const o of orders) {
    const at = performance.now();
    const r = await p.submit(claimBody(kind, o.order_id));
    if (!r.ok) throw new Error(`pipeline bench: the in-process pipeline refused a claim: ${r.code}`);
    submitted.push({ id: r.claimId, at });
    if (mode === "sequential") await p.drain();
  }
  if (mode === "batch") await p.drain();
  const wallMs = performance.now() - started;
  const latenciesMs: number[] = [];
  for (const s of submitted) {
    const record = await repo.getClaim(s.id);
    const at = finalAt.get(s.id);
    if (record?.status !== "DECIDED" || record.verdict !== "ACCEPT" || at === undefined) {
      throw new Error(`pipeline bench: in-process claim ${s.id} (${kind}) ended ${record?.status ?? "missing"} ${record?.verdict ?? ""}, expected DECIDED ACCEPT`);
    }
    latenciesMs.push(at - s.at);
  }
  return { kind, mode, claims: n, wallMs, latenciesMs };
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

const sortedOf = (xs: readonly number[]) => [...xs].sort((a, b) => a - b);
const p = (xs: readonly number[], q: number) => quantile(sortedOf(xs), q);
const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;

/** Runs the stack phases and the in-process comparison; writes aws-requests.json; returns the markdown section. */
export async function run(): Promise<string> {
  const options = stackRunOptions();
  const stackRun = await runOnStack(options);
  const kinds: ClaimKind[] = ["structured", "free_text"];
  const rounds = 5;
  const inProcess: Record<string, InProcessResult[]> = {};
  for (const kind of kinds) {
    for (const mode of ["sequential", "batch"] as const) {
      const list: InProcessResult[] = [];
      await runInProcess(kind, 20, mode); // warm-up
      for (let i = 0; i < rounds; i++) list.push(await runInProcess(kind, mode === "sequential" ? options.sequential : options.concurrent, mode));
      inProcess[`${kind}/${mode}`] = list;
    }
  }
  const medianOf = (xs: number[]) => p(xs, 0.5);

  const throughputRows: TableRow[] = kinds.map((kind) => {
    const conc = stackRun.phases.find((ph) => ph.kind === kind && ph.mode === "concurrent")!;
    const seq = stackRun.phases.find((ph) => ph.kind === kind && ph.mode === "sequential")!;
    const ipBatch = inProcess[`${kind}/batch`]!;
    const ipSeq = inProcess[`${kind}/sequential`]!;
    const stackCps = (conc.claims / conc.wallMs) * 1000;
    const ipCps = medianOf(ipBatch.map((r) => (r.claims / r.wallMs) * 1000));
    const ipSeqP50 = medianOf(ipSeq.map((r) => p(r.latenciesMs, 0.5)));
    const ipSeqP95 = medianOf(ipSeq.map((r) => p(r.latenciesMs, 0.95)));
    return {
      claim: kind,
      [`stack claims/s (${conc.inFlight} in flight)`]: r1(stackCps),
      "in-process claims/s": Math.round(ipCps),
      "in-process ÷ stack (throughput)": `${Math.round(ipCps / stackCps)}×`,
      "stack p50 ms (one at a time)": r1(p(seq.latenciesMs, 0.5)),
      "stack p95 ms (one at a time)": r1(p(seq.latenciesMs, 0.95)),
      "in-process p50 / p95 ms (one at a time)": `${r2(ipSeqP50)} / ${r2(ipSeqP95)}`,
      "stack ÷ in-process (p50 latency)": `${Math.round(p(seq.latenciesMs, 0.5) / ipSeqP50)}×`,
      [`stack p50 / p95 ms (${conc.inFlight} in flight)`]: `${r1(p(conc.latenciesMs, 0.5))} / ${r1(p(conc.latenciesMs, 0.95))}`,
    };
  });

  const requestRows = (mode: PhaseResult["mode"]) => {
    const keys = new Set<string>();
    const byKind: Record<string, Record<string, number>> = {};
    for (const kind of kinds) {
      const prof = stackRun.phases.find((ph) => ph.kind === kind && ph.mode === mode)!.profile;
      const flat: Record<string, number> = {};
      for (const [service, ops] of Object.entries(prof.requests)) for (const [op, n] of Object.entries(ops)) flat[`${service} ${op}`] = n;
      byKind[kind] = flat;
      for (const k of Object.keys(flat)) keys.add(k);
    }
    const timerFlat: Record<string, number> = {};
    if (stackRun.timer) for (const [service, ops] of Object.entries(stackRun.timer.profile.requests)) for (const [op, n] of Object.entries(ops)) timerFlat[`${service} ${op}`] = n;
    for (const k of Object.keys(timerFlat)) keys.add(k);
    const rows: TableRow[] = [...keys].sort().map((k) => ({
      "service operation": k,
      structured: r2(byKind.structured?.[k] ?? 0),
      "free text": r2(byKind.free_text?.[k] ?? 0),
      "+ timer path (both)": r2(timerFlat[k] ?? 0),
    }));
    const total = (o: Record<string, number> | undefined) => r2(Object.values(o ?? {}).reduce((a, b) => a + b, 0));
    rows.push({ "service operation": "**total**", structured: total(byKind.structured), "free text": total(byKind.free_text), "+ timer path (both)": total(timerFlat) });
    return rows;
  };

  const byFunctionRows: TableRow[] = [];
  for (const kind of kinds) {
    const conc = stackRun.phases.find((ph) => ph.kind === kind && ph.mode === "concurrent")!;
    const seq = stackRun.phases.find((ph) => ph.kind === kind && ph.mode === "sequential")!;
    for (const [fn, u] of Object.entries(seq.profile.invocations) as [FunctionKey, InvocationUsage][]) {
      const c = conc.profile.invocations[fn];
      byFunctionRows.push({
        claim: kind,
        function: fn,
        "records/claim": r2(u.records),
        "invocations/claim (one at a time)": r2(u.invocations),
        "records/invocation under load": c ? r2(c.records / c.invocations) : "",
        "handler ms/claim local (one at a time)": r1(u.handlerMs),
        "of which SDK calls ms": r1(u.sdkMs),
        "AWS estimate ms/claim": r1(u.awsEstimateMs),
      });
    }
  }
  if (stackRun.timer) {
    for (const [fn, u] of Object.entries(stackRun.timer.profile.invocations) as [FunctionKey, InvocationUsage][]) {
      byFunctionRows.push({ claim: "timer path", function: fn, "records/claim": r2(u.records), "invocations/claim (one at a time)": r2(u.invocations), "records/invocation under load": r2(u.records / u.invocations), "handler ms/claim local (one at a time)": r1(u.handlerMs), "of which SDK calls ms": r1(u.sdkMs), "AWS estimate ms/claim": r1(u.awsEstimateMs) });
    }
  }

  const dynamoRows: TableRow[] = [];
  for (const kind of kinds) {
    const prof = stackRun.phases.find((ph) => ph.kind === kind && ph.mode === "concurrent")!.profile;
    for (const [entity, u] of Object.entries(prof.dynamo).sort(([a], [b]) => a.localeCompare(b))) {
      dynamoRows.push({ claim: kind, entity, "reads/claim": r2(u.reads), "RRU/claim": r2(u.rru), "writes/claim": r2(u.writes), "WRU/claim": r2(u.wru), "gsi1 WRU/claim": r2(u.gsiWru), "failed conditions/claim": r2(u.conditionalFailures) });
    }
  }

  const outsideRows: TableRow[] = stackRun.phases.map((ph) => ({
    phase: `${ph.kind} ${ph.mode}`,
    claims: ph.claims,
    "all requests counted (countRequests)": ph.counted.total,
    "by handlers / claim": r2(Object.values(ph.profile.requests).flatMap((o) => Object.values(o)).reduce((a, b) => a + b, 0)),
    "outside handlers (pollers, drain checks)": Object.entries(ph.outside).map(([k, v]) => `${k} ${v}`).join(", "),
  }));

  const ratioDefs = [
    "### Pipeline on the local stack vs in process (bench/pipeline.bench.ts)",
    "",
    "Definitions:",
    `- **local stack**: \`startLocalStack\` (dynalite, fauxqs, local EventBridge; the production handlers of functions/ behind one poller per queue with the infra batch sizes, 2 receive loops each), rules model, system clock. Claims enter through the intake-api handler with API Gateway v2 events (\`POST /claims\`; no HTTP server, no authorizer). A claim's **latency** = from just before the intake-api call to the moment the kernel handler finished the batch holding its proposal (its last step: the claim record is DECIDED then). Every claim is ACCEPT (299.99 EUR on a 10 000 EUR electronics order bought 3 days earlier, one order per claim) and checked afterwards.`,
    `- **one at a time**: ${options.sequential} claims per kind, each submitted after the previous one was decided. **In flight**: ${options.concurrent} claims per kind, ${options.inFlight} slots each submitting its next claim when its last one is decided; **claims/s** = claims ÷ (last DECIDED − first submit).`,
    `- **in process**: \`createInProcessPipeline\` (in-memory ports, same services, same rules model, system clock); one at a time = submit + drain per claim; claims/s = ${options.concurrent} claims submitted then drained. Median of ${rounds} fresh pipelines after a warm-up.`,
    "- **free text** adds the extraction queue and the intake-extract function (one rules-model extraction) before the crew.",
    "",
    formatTable(throughputRows),
    "",
    "#### AWS requests per claim made by the handlers (SDK middleware on the stack's three clients; one at a time)",
    "",
    "Counted by an `initialize`-step middleware that also attributes each request to the handler invocation it ran in (AsyncLocalStorage) and reads DynamoDB consumed capacity; `countRequests` (adapters/aws) counts the same clients as a cross-check. Requests made outside any handler — the pollers' ReceiveMessage/DeleteMessageBatch (Lambda's event source mapping on AWS, priced in cost.ts per invocation) and the harness's drain checks — are listed separately below. The **timer path** is the two step-deadline timers of a claim: each fires 120 s after its step was requested, goes through the timer function into crew-events, and the orchestrator finds the step done.",
    "",
    formatTable(requestRows("sequential")),
    "",
    "Under load (in flight) the counts are:",
    "",
    formatTable(requestRows("concurrent")),
    "",
    "#### Invocations and handler time per claim, by function",
    "",
    "`AWS estimate` = handler time outside SDK calls × (1769 MB ÷ the function's memory, its CPU share; a conservative bound) + per SDK call a typical in-region latency (DynamoDB 6 ms, Query 8, BatchWriteItem 10, SQS 12, EventBridge 20: assumptions). Local times include dynalite/fauxqs running in the same process.",
    "",
    formatTable(byFunctionRows),
    "",
    "#### DynamoDB per claim by entity (in flight; capacity units as the emulator reports them with `ReturnConsumedCapacity`, gsi1 writes estimated from the written item)",
    "",
    formatTable(dynamoRows),
    "",
    "#### Cross-check",
    "",
    formatTable(outsideRows),
    "",
    `Wrote ${AWS_REQUESTS_FILE.replace(/^.*\/bench\//, "bench/")}${stackRun.timer ? ` (timer path: ${stackRun.timer.fired} timers fired after waiting ${Math.round(stackRun.timer.waitedMs / 1000)} s)` : ""}.`,
  ];
  return ratioDefs.join("\n");
}
