// Counting what a claim costs on the local stack: an SDK middleware on the stack's clients records every
// request (who made it, DynamoDB capacity by entity, SQS and EventBridge billing chunks), the handler
// wrappers record every invocation with its time and the Powertools log lines it wrote, and `summarise`
// turns the records into a per-claim profile (lib/profile.ts) for the cost model.
import { AsyncLocalStorage } from "node:async_hooks";
import type { Context, SQSBatchResponse, SQSEvent } from "aws-lambda";
import { itemBytes, valueBytes } from "../../adapters/aws/compact.ts";
import type { SqsHandler } from "../../functions/consumers/sqs-consumer.ts";
import { LLM_FUNCTIONS, QUEUE_CONSUMERS } from "./profile.ts";
import type {
  ClaimKind,
  ClaimProfile,
  DynamoUsage,
  FunctionKey,
  InvocationUsage,
  QueueRole,
  QueueUsage,
} from "./profile.ts";

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
  // An orchestrator step (session version + its audit events) lives in the audit partition: counted as the session.
  if (p.startsWith("DFID#") && s.startsWith("AUDIT#~SESSION")) return "session";
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
    const values = Object.values(asLoose(input.ExpressionAttributeValues)).filter(
      (v): v is string => typeof v === "string",
    );
    const strings = values.map(
      (v) =>
        [v, values.find((w) => w !== v && (w.startsWith("SESSION") || w.startsWith("AUDIT#~SESSION"))) ?? ""] as const,
    );
    for (const [v, sk] of strings) {
      const e = entityOf(v, sk);
      if (e !== "other") return e;
    }
    return "other";
  }
  if (operation === "BatchWriteItem" || operation === "BatchGetItem") {
    for (const requests of Object.values(asLoose(input.RequestItems))) {
      const first = asLoose(Array.isArray(requests) ? requests[0] : asLoose(requests).Keys);
      const inner = asLoose(
        asLoose(first.PutRequest).Item ?? asLoose(first.DeleteRequest).Key ?? (Array.isArray(first) ? first[0] : first),
      );
      if (inner.pk !== undefined) return entityOf(inner.pk, inner.sk);
    }
  }
  return "other";
}

/** The clauses of an update expression by keyword (`SET`, `REMOVE`, `ADD`, `DELETE`). */
export function updateClauses(expression: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /\b(SET|REMOVE|ADD|DELETE)\b/gi;
  const marks = [...expression.matchAll(re)].map((m) => ({
    kw: m[1]!.toUpperCase(),
    at: m.index ?? 0,
    len: m[0].length,
  }));
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
  // Placeholders resolved first: the claims store moves its entry with `SET #gpk = :gpk` (names: gsi1pk).
  const names = asLoose(input.ExpressionAttributeNames);
  const expression = (typeof input.UpdateExpression === "string" ? input.UpdateExpression : "").replace(
    /#\w+/g,
    (token) => (typeof names[token] === "string" ? (names[token] as string) : token),
  );
  const clauses = updateClauses(expression);
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

/**
 * Read units AWS bills for one read: what the emulator reports, but never less than one read's minimum — AWS bills a
 * GetItem of a missing item, and a Query or Scan that finds nothing, the minimum of its consistency (1 strongly
 * consistent, 0.5 eventually: docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html);
 * dynalite reports 0 for an empty Query. A BatchGetItem is taken as reported.
 */
export function readUnits(operation: string, input: Loose, reported: number): number {
  if (operation === "BatchGetItem") return reported;
  return Math.max(reported, input.ConsistentRead === true ? 1 : 0.5);
}

/** Bytes SQS bills for a send: message bodies plus message attributes (names, types, values). */
export function sqsPayloadBytes(input: Loose): { messages: number; bytes: number } {
  const entries: Loose[] = Array.isArray(input.Entries) ? (input.Entries as Loose[]) : [input];
  let bytes = 0;
  for (const e of entries) {
    bytes += typeof e.MessageBody === "string" ? utf8(e.MessageBody) : 0;
    for (const [name, attr] of Object.entries(asLoose(e.MessageAttributes))) {
      const a = asLoose(attr);
      bytes +=
        utf8(name) +
        utf8(String(a.DataType ?? "")) +
        utf8(String(a.StringValue ?? "")) +
        (a.BinaryValue instanceof Uint8Array ? a.BinaryValue.byteLength : 0);
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

/** Marks the records of a path priced apart: "tick" for step-deadline timers (the timer function, the orchestrator on ticks), "poll" for a client's GET. */
export type Tag = "tick" | "poll";

/** One SDK request as the usage middleware saw it. */
export type CallRecord = {
  caller: Caller;
  tag?: Tag;
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
  tag?: Tag;
  records: number;
  ms: number;
  sdkMs: number;
  /** Process CPU time while no SDK call of the invocation was in flight: its own work when it runs alone. */
  cpuMs: number;
  /** SDK calls by "Service.Operation". */
  calls: Record<string, number>;
  /** Powertools log lines written during the invocation, and their UTF-8 bytes without newlines. */
  logLines: number;
  logBytes: number;
  /** Of those, success lines (with `sample_rate`: sampled on AWS). */
  successLines: number;
  successBytes: number;
  /** CloudWatch Embedded Metric Format lines (Powertools Metrics) written during the invocation, and their bytes. */
  metricLines: number;
  metricBytes: number;
  /**
   * The vault's data-key lookups during the invocation (`DataKeyStore.key`, one per seal or open): how many read the
   * key item, how many made a new key (a fresh subject's without a read), and the subjects whose existing key was found (a KMS Decrypt on AWS in a container that has not
   * unwrapped it yet). Absent: none.
   */
  keyLookups?: number;
  keysMade?: number;
  keySubjectsFound?: readonly string[];
  /** The subjects whose key the invocation made (its container then holds the key unwrapped). */
  keySubjectsMade?: readonly string[];
};

type Ctx = {
  caller: Caller;
  tag?: Tag;
  inflight: number;
  busySince: number;
  sdkMs: number;
  cpuMark: number;
  cpuUs: number;
  calls: Record<string, number>;
  logLines: number;
  logBytes: number;
  successLines: number;
  successBytes: number;
  metricLines: number;
  metricBytes: number;
  keyLookups: number;
  keysMade: number;
  keySubjectsFound: Set<string>;
  keySubjectsMade: Set<string>;
};

/** True for an Embedded Metric Format line (Powertools Metrics: JSON with the `_aws` metadata CloudWatch turns into metrics). */
export function isMetricLogLine(line: string): boolean {
  return line.startsWith("{") && line.includes('"_aws":');
}

/** True for a success line (functions/observability/logger.ts writes `sample_rate` on each). */
export function isSuccessLogLine(line: string): boolean {
  return line.includes('"sample_rate":');
}

const cpuNowUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** The handlers' log lines: Powertools JSON with the service name the local stack gives them (`claims-<function>`). */
export function isHandlerLogLine(line: string): boolean {
  if (!line.startsWith("{") || !line.includes('"service":"claims-')) return false;
  try {
    const parsed = JSON.parse(line) as { service?: unknown; level?: unknown };
    return (
      typeof parsed.service === "string" && parsed.service.startsWith("claims-") && typeof parsed.level === "string"
    );
  } catch {
    return false;
  }
}

const CAPACITY_OPS = new Set([
  "GetItem",
  "PutItem",
  "UpdateItem",
  "DeleteItem",
  "Query",
  "Scan",
  "BatchGetItem",
  "BatchWriteItem",
]);
const READ_OPS = new Set(["GetItem", "Query", "Scan", "BatchGetItem"]);

type Middleware = (
  next: (args: { input: Loose }) => Promise<{ output: Loose }>,
  context: { clientName?: string; commandName?: string },
) => (args: { input: Loose }) => Promise<{ output: Loose }>;
type StackClient = {
  middlewareStack: {
    add(mw: never, options: { step: "initialize"; name: string; override?: boolean }): void;
    remove(name: string): boolean;
  };
};

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
    if (ctx.inflight++ === 0) {
      ctx.busySince = performance.now();
      ctx.cpuUs += cpuNowUs() - ctx.cpuMark;
    }
  };
  const leave = (ctx: Ctx | undefined) => {
    if (!ctx) return;
    if (--ctx.inflight === 0) {
      ctx.sdkMs += performance.now() - ctx.busySince;
      ctx.cpuMark = cpuNowUs();
    }
  };

  let logText: string[] = [];
  let outsideLogLines = 0;

  /** Attributes a log line to the invocation it was written in (the same async context as its SDK calls). */
  function noteLog(line: string): void {
    const ctx = als.getStore();
    logText.push(line);
    if (!ctx) {
      outsideLogLines++;
      return;
    }
    if (isMetricLogLine(line)) {
      ctx.metricLines++;
      ctx.metricBytes += utf8(line);
      return;
    }
    ctx.logLines++;
    ctx.logBytes += utf8(line);
    if (isSuccessLogLine(line)) {
      ctx.successLines++;
      ctx.successBytes += utf8(line);
    }
  }

  const middleware: Middleware = (next, context) => async (args) => {
    const ctx = als.getStore();
    const service = (context.clientName ?? "unknown").replace(/Client$/, "");
    const operation = (context.commandName ?? "unknown").replace(/Command$/, "");
    const input =
      service === "DynamoDB" && CAPACITY_OPS.has(operation)
        ? { ...args.input, ReturnConsumedCapacity: "INDEXES" }
        : args.input;
    const record: CallRecord = {
      caller: ctx?.caller ?? "outside",
      ...(ctx?.tag ? { tag: ctx.tag } : {}),
      service,
      operation,
    };
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
      if (READ_OPS.has(operation)) record.rru = readUnits(operation, input, units);
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
  async function runAs<T>(fn: FunctionKey, records: number, f: () => Promise<T>, tag?: Tag): Promise<T> {
    const ctx: Ctx = {
      caller: fn,
      ...(tag ? { tag } : {}),
      inflight: 0,
      busySince: 0,
      sdkMs: 0,
      cpuMark: cpuNowUs(),
      cpuUs: 0,
      calls: {},
      logLines: 0,
      logBytes: 0,
      successLines: 0,
      successBytes: 0,
      metricLines: 0,
      metricBytes: 0,
      keyLookups: 0,
      keysMade: 0,
      keySubjectsFound: new Set(),
      keySubjectsMade: new Set(),
    };
    const start = performance.now();
    try {
      return await als.run(ctx, f);
    } finally {
      if (ctx.inflight === 0) ctx.cpuUs += cpuNowUs() - ctx.cpuMark;
      invocations.push({
        fn,
        ...(tag ? { tag } : {}),
        records,
        ms: performance.now() - start,
        sdkMs: ctx.sdkMs,
        cpuMs: ctx.cpuUs / 1000,
        calls: ctx.calls,
        logLines: ctx.logLines,
        logBytes: ctx.logBytes,
        successLines: ctx.successLines,
        successBytes: ctx.successBytes,
        metricLines: ctx.metricLines,
        metricBytes: ctx.metricBytes,
        keyLookups: ctx.keyLookups,
        keysMade: ctx.keysMade,
        keySubjectsFound: [...ctx.keySubjectsFound].filter((s) => !ctx.keySubjectsMade.has(s)),
        keySubjectsMade: [...ctx.keySubjectsMade],
      });
    }
  }

  /**
   * Takes over stdout and stderr: the handlers' Powertools lines (they write through a Console on
   * process.stdout/stderr) are counted against their invocation and kept off the terminal; anything
   * else passes through. Returns the function that gives the streams back.
   */
  function captureLogs(): () => void {
    const streams = [process.stdout, process.stderr];
    const originals = streams.map((s) => s.write);
    streams.forEach((stream, i) => {
      const original = originals[i]!;
      stream.write = ((chunk: unknown, ...rest: unknown[]) => {
        const text =
          typeof chunk === "string"
            ? chunk
            : chunk instanceof Uint8Array
              ? Buffer.from(chunk).toString("utf8")
              : undefined;
        const lines = text?.split("\n").filter((l) => l.length > 0) ?? [];
        if (lines.length > 0 && lines.every((l) => isHandlerLogLine(l) || isMetricLogLine(l))) {
          for (const line of lines) noteLog(line);
          const done = rest.find((r): r is () => void => typeof r === "function");
          done?.();
          return true;
        }
        return (original as (...a: unknown[]) => boolean).call(stream, chunk, ...rest);
      }) as typeof stream.write;
    });
    return () => streams.forEach((stream, i) => void (stream.write = originals[i]!));
  }

  return {
    /** Adds the middleware to an SDK client (a DocumentClient shares its base client's stack). */
    attach(client: StackClient): () => void {
      client.middlewareStack.add(middleware as never, {
        step: "initialize",
        name: "benchUsageRecorder",
        override: true,
      });
      return () => void client.middlewareStack.remove("benchUsageRecorder");
    },
    runAs,
    captureLogs,
    /** Counts one data-key lookup against the invocation it runs in (outside any invocation: not counted). */
    noteKeyLookup(subject: string, outcome: "made" | "put" | "found" | "none" | "erased"): void {
      const ctx = als.getStore();
      if (!ctx) return;
      // A fresh subject's key is put without a read of its item: a key made, no lookup.
      if (outcome !== "put") ctx.keyLookups += 1;
      if (outcome === "made" || outcome === "put") {
        ctx.keysMade += 1;
        ctx.keySubjectsMade.add(subject);
      }
      if (outcome === "found") ctx.keySubjectsFound.add(subject);
    },
    /** Every log line captured so far (for their compressed size) and how many were written outside any invocation. */
    logs: (): { text: readonly string[]; outsideLines: number } => ({ text: logText, outsideLines: outsideLogLines }),
    /** Wraps a queue consumer so every invocation runs as its function (a crew-events batch of ticks only is tagged "tick"). */
    wrapConsumer(
      role: QueueRole,
      handler: SqsHandler,
      onDone?: (event: SQSEvent, response: SQSBatchResponse) => void,
    ): SqsHandler {
      const fn = QUEUE_CONSUMERS[role].fn;
      return async (event: SQSEvent, context: Context) => {
        const ticks = role === "timers" || (role === "crewEvents" && event.Records.every((r) => isTick(r.body)));
        const response = await runAs(
          fn,
          event.Records.length,
          () => handler(event, context),
          ticks ? "tick" : undefined,
        );
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
    /** Forgets the captured log text (the per-invocation counts live in the invocation records). */
    resetLogs(): void {
      logText = [];
      outsideLogLines = 0;
    },
    peekInvocations: (): readonly InvocationRecord[] => invocations,
  };
}

/** What {@link createUsageRecorder} returns. */
export type UsageRecorder = ReturnType<typeof createUsageRecorder>;

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

/**
 * Per-claim averages of the requests and invocations made by the app's functions with the given tag
 * (none: the claims themselves; "tick": their timer path; "poll": clients' GETs). Requests from outside
 * any handler — pollers, the harness — are left out.
 */
export function summarise(
  kind: ClaimKind,
  claims: number,
  data: {
    calls: readonly CallRecord[];
    invocations: readonly InvocationRecord[];
    busDeliveries: Readonly<Record<string, number>>;
    apiRequests: number;
  },
  tag?: Tag,
): ClaimProfile {
  if (!(claims > 0)) throw new RangeError(`summarise: claims must be > 0, got ${String(claims)}`);
  const mine = (t: Tag | undefined) => t === tag;
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
      const u = (dynamo[c.entity ?? "other"] ??= {
        reads: 0,
        writes: 0,
        rru: 0,
        wru: 0,
        gsiWru: 0,
        conditionalFailures: 0,
      });
      if (READ_OPS.has(c.operation)) u.reads += per(1);
      else u.writes += per(1);
      u.rru += per(c.rru ?? 0);
      u.wru += per(c.wru ?? 0);
      u.gsiWru += per(c.gsiWru ?? 0);
      if (c.conditionalFailure) u.conditionalFailures += per(1);
    } else if (
      c.service === "SQS" &&
      c.queue &&
      (c.operation === "SendMessage" || c.operation === "SendMessageBatch")
    ) {
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
  // Per function: the subjects whose existing key it found, and those it made (one container per function and claim).
  const keysFound = new Map<FunctionKey, Set<string>>();
  const keysMadeBy = new Map<FunctionKey, Set<string>>();
  for (const inv of data.invocations) {
    if (!mine(inv.tag)) continue;
    const found = keysFound.get(inv.fn) ?? new Set<string>();
    for (const s of inv.keySubjectsFound ?? []) found.add(s);
    keysFound.set(inv.fn, found);
    const made = keysMadeBy.get(inv.fn) ?? new Set<string>();
    for (const s of inv.keySubjectsMade ?? []) made.add(s);
    keysMadeBy.set(inv.fn, made);
    const u = (invocations[inv.fn] ??= {
      invocations: 0,
      records: 0,
      handlerMs: 0,
      sdkMs: 0,
      cpuMs: 0,
      calls: {},
      llmCalls: 0,
      logLines: 0,
      logBytes: 0,
      successLines: 0,
      successBytes: 0,
      metricLines: 0,
      metricBytes: 0,
    });
    u.invocations += per(1);
    u.records += per(inv.records);
    u.handlerMs += per(inv.ms);
    u.sdkMs += per(inv.sdkMs);
    u.cpuMs += per(inv.cpuMs);
    for (const [op, n] of Object.entries(inv.calls)) u.calls[op] = (u.calls[op] ?? 0) + per(n);
    if (LLM_FUNCTIONS.includes(inv.fn)) u.llmCalls += per(inv.records);
    u.logLines += per(inv.logLines);
    u.logBytes += per(inv.logBytes);
    u.successLines = (u.successLines ?? 0) + per(inv.successLines ?? 0);
    u.successBytes = (u.successBytes ?? 0) + per(inv.successBytes ?? 0);
    u.metricLines = (u.metricLines ?? 0) + per(inv.metricLines ?? 0);
    u.metricBytes = (u.metricBytes ?? 0) + per(inv.metricBytes ?? 0);
    if ((inv.keyLookups ?? 0) + (inv.keysMade ?? 0) > 0) {
      u.keyLookups = (u.keyLookups ?? 0) + per(inv.keyLookups ?? 0);
      u.keysMade = (u.keysMade ?? 0) + per(inv.keysMade ?? 0);
      u.keyDecryptsPerInvocation = (u.keyDecryptsPerInvocation ?? 0) + per(inv.keySubjectsFound?.length ?? 0);
      u.keyInvocations = (u.keyInvocations ?? 0) + per(1);
    }
  }
  for (const [fn, found] of keysFound) {
    const u = invocations[fn];
    const made = keysMadeBy.get(fn) ?? new Set<string>();
    if (u?.keyLookups !== undefined) u.keyDecryptsPerFunction = per([...found].filter((s) => !made.has(s)).length);
  }
  const busDeliveries =
    tag === undefined ? Object.fromEntries(Object.entries(data.busDeliveries).map(([k, v]) => [k, per(v)])) : {};
  return {
    kind,
    claims,
    requests,
    dynamo,
    sqsSends,
    events,
    busDeliveries,
    apiRequests: tag === "tick" ? 0 : per(data.apiRequests),
    invocations,
  };
}
