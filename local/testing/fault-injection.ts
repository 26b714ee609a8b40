// Fault injection for the local stack's tests: ports that crash right after the N-th side-effecting
// call of a claim succeeded (the work is done, the process dies), handler invocations that die with
// them (every later port call of the invocation fails and its response is lost), a whole-stack crash
// (`killAll`: every invocation so far dies at once), every SQS send duplicated on the wire, a clock that
// moves, and the invariants every fault must leave intact: no claim lost, one verdict per proposal, no
// refund executed twice, no ledger above its order.
import { AsyncLocalStorage } from "node:async_hooks";
import { readFile } from "node:fs/promises";
import { GetQueueAttributesCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import type { SendMessageBatchRequestEntry, SQSClient } from "@aws-sdk/client-sqs";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { frozenClock } from "../../core/crew/index.ts";
import type { Clock, StoredVerdict } from "../../pipeline/ports.ts";
import { verdictPublished } from "../../pipeline/decide/publication.ts";
import type { FunctionKey, QueueRole } from "../../app/manifest.ts";
import type { LocalStackOptions } from "../stack-options.ts";
import type { SqsHandler } from "../../functions/consumers/sqs-consumer.ts";
import { parseAuditDetails } from "../../core/history/audit-events.ts";
import { DETAIL_TYPES } from "../../core/kernel/events.ts";
import { InjectedCrashError, InvariantViolationError, LocalStackError } from "../errors.ts";
import { LOCAL_TABLE_NAME } from "../stack.ts";
import type { LocalStack } from "../stack.ts";
import { readOrder } from "../../core/kernel/order-view.ts";
import { scannedVerdictRecord } from "../../adapters/aws/dynamo-verdicts.ts";

/** The side-effecting methods of each port a handler gets; a crash is injected right after one of them succeeded. */
export const SIDE_EFFECTS = {
  claims: ["createClaim", "updateClaim"],
  sessions: ["saveSession", "clearOutbox"],
  verdicts: ["putVerdictOnce", "recordExecution", "markPublished"],
  ledger: ["reserve"],
  audit: ["append", "appendAll"],
  queues: ["sendAgentSteps", "sendProposal", "sendCrewEvents", "scheduleTimer", "requestExtraction"],
  publisher: ["publish"],
} as const;

/**
 * With `payments` (the chaos runs on the emulators): the refund's side effects too — the provider's refund (a crash
 * right after it: the provider did the work, the settlement does not know it), the settlement's writes, and a CLOSE's
 * release of the reservation.
 */
export const PAYMENT_SIDE_EFFECTS = {
  payments: ["refund"],
  settlements: ["create", "update"],
  ledger: ["releaseRefund"],
} as const;

type EffectPort = keyof typeof SIDE_EFFECTS;
type PaymentEffectPort = keyof typeof PAYMENT_SIDE_EFFECTS;

/** One side-effecting operation, e.g. `verdicts.putVerdictOnce`. */
export type SideEffect =
  | { [P in EffectPort]: `${P}.${(typeof SIDE_EFFECTS)[P][number]}` }[EffectPort]
  | { [P in PaymentEffectPort]: `${P}.${(typeof PAYMENT_SIDE_EFFECTS)[P][number]}` }[PaymentEffectPort];

/** A side-effecting call that succeeded. */
export interface EffectCall {
  readonly fn: FunctionKey;
  readonly op: SideEffect;
  readonly claimId: string;
}

/** Crash right after the `occurrence`-th successful `op` that `fn` makes for a claim. */
export interface CrashPoint {
  readonly fn: FunctionKey;
  readonly op: SideEffect;
  readonly occurrence: number;
}

/** Ports a wrapper sees (every method of these is refused once the invocation died). */
const WRAPPED_PORTS = [
  "claims",
  "sessions",
  "verdicts",
  "ledger",
  "audit",
  "queues",
  "publisher",
  "reviews",
  "orders",
  "llm",
] as const;

/** One handler invocation (one "process"): dead after a crash. */
interface Invocation {
  dead: boolean;
  crash?: string;
}

/** The stack's "process": its port calls on the wire, and who waits for them to end once it died. */
interface Generation extends Invocation {
  inFlight: number;
  idle?: () => void;
}

/** A FaultInjector: hooks for the local stack, crash plans per claim, and what happened. */
export interface FaultInjector {
  /** For `LocalStackOptions.wrapDeps`: counts side-effecting calls per claim and crashes where planned. */
  wrapDeps(fn: FunctionKey, deps: PipelineDeps): PipelineDeps;
  /** For `LocalStackOptions.wrapHandler`: each invocation is one process; one that crashed loses its response. */
  wrapHandler(role: QueueRole, handler: SqsHandler): SqsHandler;
  /** Runs `work` as one invocation (submissions through intake). */
  invoke<T>(work: () => Promise<T>): Promise<T>;
  /** Crash `claimId`'s flow once, right after `point`. */
  planCrash(claimId: string, point: CrashPoint): void;
  /** Every side-effecting call that succeeded, in order. */
  readonly calls: readonly EffectCall[];
  /** The crashes that fired, by claim. */
  readonly fired: ReadonlyMap<string, CrashPoint>;
  /**
   * A whole-stack crash: every invocation of the handlers wrapped so far dies at once (each later port call fails,
   * a call in flight loses its answer, a batch response is lost). Handlers wrapped afterwards (a restarted stack) live.
   * Resolves once the calls already on the wire have ended (so the emulators can be stopped under no request).
   */
  killAll(reason: string): Promise<void>;
  /** Runs `work` outside every invocation (what it starts, e.g. a restarted stack's timers, belongs to none). */
  outside<T>(work: () => T): T;
  /** How many times `killAll` ran: a request that spans a change got no answer. */
  readonly kills: number;
}

/** Options of `createFaultInjector`. */
export interface FaultInjectorOptions {
  /** Sees every side-effecting call right after it succeeded (before a planned crash); it may `killAll`. */
  readonly onEffect?: (call: EffectCall) => void;
  /** Also wrap the payment ports (`payments`, `settlements`) and count PAYMENT_SIDE_EFFECTS. */
  readonly payments?: boolean;
}

/** The crash points of one traced claim: every occurrence of every side-effecting call, in first-seen order. */
export function crashPointsOf(calls: readonly EffectCall[], claimId: string): CrashPoint[] {
  const seen = new Map<string, number>();
  const points: CrashPoint[] = [];
  for (const call of calls) {
    if (call.claimId !== claimId) continue;
    const key = `${call.fn}|${call.op}`;
    const occurrence = (seen.get(key) ?? 0) + 1;
    seen.set(key, occurrence);
    points.push({ fn: call.fn, op: call.op, occurrence });
  }
  return points;
}

/** `worker sendCrewEvents#2` */
export function describePoint(point: CrashPoint): string {
  return `${point.fn} ${point.op}#${point.occurrence}`;
}

/** Creates an injector; without plans it only records the calls (a trace run). */
export function createFaultInjector(options: FaultInjectorOptions = {}): FaultInjector {
  const als = new AsyncLocalStorage<Invocation>();
  // The stack's "process": what wrapDeps / wrapHandler wrapped belongs to the generation of the moment, and dies with it.
  let generation: Generation = { dead: false, inFlight: 0 };
  let kills = 0;
  const calls: EffectCall[] = [];
  const plans = new Map<string, CrashPoint>();
  const fired = new Map<string, CrashPoint>();
  const counts = new Map<string, number>();
  const claimOfKey = new Map<string, string>();

  const claimOf = (op: SideEffect, args: readonly unknown[]): string => {
    const [a] = args as [unknown];
    const field = (v: unknown, k: string) =>
      typeof v === "object" && v !== null ? (v as Record<string, unknown>)[k] : undefined;
    switch (op) {
      case "claims.createClaim":
        return String(field(a, "claim_id"));
      case "sessions.saveSession":
        return String(field(a, "claimId"));
      case "verdicts.putVerdictOnce": {
        const claimId = String(field(a, "claim_id"));
        claimOfKey.set(String(field(a, "idempotency_key")), claimId);
        return claimId;
      }
      case "verdicts.recordExecution":
      case "verdicts.markPublished":
        return claimOfKey.get(String(a)) ?? `unknown-verdict:${String(a)}`;
      case "ledger.reserve":
        return String(args[1]);
      case "ledger.releaseRefund":
        return String(args[1]);
      case "settlements.create":
      case "settlements.update":
        return String(field(a, "claim_id"));
      case "payments.refund":
        return String(field(a, "claimId"));
      case "audit.append":
        return String(field(field(a, "details"), "claim_id") ?? String(field(a, "dfid")).replace(/^dfid_/, ""));
      case "audit.appendAll": {
        const first = (a as unknown[])[0];
        return String(field(field(first, "details"), "claim_id") ?? String(field(first, "dfid")).replace(/^dfid_/, ""));
      }
      case "queues.sendAgentSteps":
        return String(field((a as unknown[])[0], "claim_id"));
      case "queues.sendProposal":
        return String(field(a, "claim_id"));
      case "publisher.publish":
        return String(field(field((a as unknown[])[0], "detail"), "claim_id"));
      default:
        return String(a); // updateClaim, clearOutbox, sendCrewEvents, scheduleTimer, requestExtraction take the claim id first
    }
  };

  const wrapPort = <T extends object>(
    fn: FunctionKey,
    name: (typeof WRAPPED_PORTS)[number] | PaymentEffectPort,
    port: T,
    gen: Generation,
  ): T => {
    const effects: readonly string[] = [
      ...(name in SIDE_EFFECTS ? SIDE_EFFECTS[name as EffectPort] : []),
      ...(options.payments && name in PAYMENT_SIDE_EFFECTS ? PAYMENT_SIDE_EFFECTS[name as PaymentEffectPort] : []),
    ];
    return new Proxy(port, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop);
        if (typeof value !== "function" || typeof prop !== "string") return value;
        const method = value as (...a: unknown[]) => unknown;
        return async (...args: unknown[]) => {
          const invocation = als.getStore();
          if (invocation?.dead)
            throw new InjectedCrashError(`${fn}: ${name}.${prop} after the process died (${invocation.crash})`);
          if (gen.dead) throw new InjectedCrashError(`${fn}: ${name}.${prop} after the stack died (${gen.crash})`);
          gen.inFlight++;
          let result: unknown;
          try {
            result = await method.apply(target, args);
          } finally {
            if (--gen.inFlight === 0) gen.idle?.();
          }
          if (gen.dead)
            throw new InjectedCrashError(`${fn}: ${name}.${prop} lost its answer: the stack died (${gen.crash})`);
          if (!effects.includes(prop)) return result;
          const op = `${name}.${prop}` as SideEffect;
          const claimId = claimOf(op, args);
          calls.push({ fn, op, claimId });
          options.onEffect?.({ fn, op, claimId });
          if (gen.dead)
            throw new InjectedCrashError(`the stack died right after ${fn} ${op} of ${claimId} (${gen.crash})`);
          const key = `${claimId}|${fn}|${op}`;
          const occurrence = (counts.get(key) ?? 0) + 1;
          counts.set(key, occurrence);
          const plan = plans.get(claimId);
          if (plan && !fired.has(claimId) && plan.fn === fn && plan.op === op && plan.occurrence === occurrence) {
            fired.set(claimId, plan);
            const crash = `injected crash of ${claimId} after ${describePoint(plan)}`;
            if (invocation) Object.assign(invocation, { dead: true, crash });
            throw new InjectedCrashError(crash);
          }
          return result;
        };
      },
    });
  };

  return {
    wrapDeps(fn, deps) {
      const wrapped: PipelineDeps = { ...deps };
      for (const name of WRAPPED_PORTS)
        (wrapped as unknown as Record<string, object>)[name] = wrapPort(fn, name, deps[name], generation);
      if (options.payments)
        for (const name of ["payments", "settlements"] as const) {
          const port = deps[name];
          if (port) (wrapped as unknown as Record<string, object>)[name] = wrapPort(fn, name, port, generation);
        }
      return wrapped;
    },
    wrapHandler(role, handler) {
      const gen = generation;
      return async (event, context) => {
        const invocation: Invocation = { dead: false };
        const result = await als.run(invocation, () => handler(event, context));
        if (gen.dead)
          throw new InjectedCrashError(
            `the ${role} consumer died with the stack (${gen.crash}); its batch response is lost`,
          );
        if (invocation.dead)
          throw new InjectedCrashError(`the ${role} consumer died (${invocation.crash}); its batch response is lost`);
        return result;
      };
    },
    invoke: (work) => als.run({ dead: false }, work),
    planCrash(claimId, point) {
      plans.set(claimId, point);
    },
    calls,
    fired,
    killAll(reason) {
      const killed = generation;
      Object.assign(killed, { dead: true, crash: reason });
      generation = { dead: false, inFlight: 0 };
      kills++;
      return killed.inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => (killed.idle = resolve));
    },
    outside: (work) => als.exit(work),
    get kills() {
      return kills;
    },
  };
}

/** A clock that moves one millisecond on every reading (so no two steps share an instant), and `advance`s on demand. */
export function tickingClock(startMs: number): Clock & { advance(ms: number): number } {
  const clock = frozenClock(startMs);
  return { now: () => clock.advance(1), advance: (ms) => clock.advance(ms) };
}

/** A message the stack sent to a queue. */
export interface SentMessage {
  readonly queueUrl: string;
  readonly body: string;
  readonly groupId?: string;
  readonly dedupeId?: string;
}

/** What `recordSends` saw and did. */
export interface RecordedSends {
  /** Every message as its producer sent it (FIFO ones SQS dropped as duplicates included), in order. */
  readonly sent: readonly SentMessage[];
  /** Copies sent, by queue URL (zero without `duplicate`). */
  readonly copies: ReadonlyMap<string, number>;
  /** Messages SQS delivers at least once for `queueUrl`: every send to a standard queue, each deduplication id of a FIFO one (times two with copies). */
  deliverable(queueUrl: string): number;
  /** Sends each recorded message once more (FIFO: under a fresh deduplication id, so SQS delivers it). */
  resendAll(): Promise<number>;
}

/**
 * Records every SendMessage / SendMessageBatch of `sqs`; with `duplicate`, sends each one twice:
 * the copy follows the original at once, FIFO copies under their own deduplication id
 * (`<id>#dup`) so the queue delivers both, like a producer that retried after its answer was lost.
 */
export function recordSends(sqs: SQSClient, options: { duplicate: boolean }): RecordedSends {
  const sent: SentMessage[] = [];
  const copies = new Map<string, number>();
  const resent = new WeakSet<object>();
  let resends = 0;
  const dup = (id: string | undefined) => (id === undefined ? undefined : `${id.slice(0, 120)}#dup`);
  const record = (url: string, e: { MessageBody?: string; MessageGroupId?: string; MessageDeduplicationId?: string }) =>
    sent.push({
      queueUrl: url,
      body: e.MessageBody ?? "",
      ...(e.MessageGroupId ? { groupId: e.MessageGroupId } : {}),
      ...(e.MessageDeduplicationId ? { dedupeId: e.MessageDeduplicationId } : {}),
    });
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const input = args.input as {
        QueueUrl?: string;
        MessageBody?: string;
        MessageGroupId?: string;
        MessageDeduplicationId?: string;
        Entries?: SendMessageBatchRequestEntry[];
      };
      if (input.QueueUrl === undefined || resent.has(args.input as object)) return result;
      const url = input.QueueUrl;
      if (context.commandName === "SendMessageCommand" && input.MessageBody !== undefined) {
        record(url, input);
        if (!options.duplicate) return result;
        await next({
          ...args,
          input: { ...input, MessageDeduplicationId: dup(input.MessageDeduplicationId) } as typeof args.input,
        });
        copies.set(url, (copies.get(url) ?? 0) + 1);
      } else if (context.commandName === "SendMessageBatchCommand" && input.Entries) {
        for (const e of input.Entries) record(url, e);
        if (!options.duplicate) return result;
        await next({
          ...args,
          input: {
            ...input,
            Entries: input.Entries.map((e) => ({ ...e, MessageDeduplicationId: dup(e.MessageDeduplicationId) })),
          } as typeof args.input,
        });
        copies.set(url, (copies.get(url) ?? 0) + input.Entries.length);
      }
      return result;
    },
    { step: "initialize", name: "recordSends" },
  );
  return {
    sent,
    copies,
    deliverable(queueUrl) {
      const mine = sent.filter((m) => m.queueUrl === queueUrl);
      const distinct = mine.some((m) => m.dedupeId !== undefined)
        ? new Set(mine.map((m) => m.dedupeId)).size
        : mine.length;
      return distinct * (options.duplicate ? 2 : 1);
    },
    async resendAll() {
      const originals = [...sent];
      for (const m of originals) {
        resends++;
        const command = new SendMessageCommand({
          QueueUrl: m.queueUrl,
          MessageBody: m.body,
          ...(m.groupId ? { MessageGroupId: m.groupId, MessageDeduplicationId: `resend-${resends}` } : {}),
        });
        resent.add(command.input);
        await sqs.send(command);
      }
      return originals.length;
    },
  };
}

/** What the invariants were checked on, and the at-least-once duplicates they allow. */
export interface InvariantReport {
  readonly claims: number;
  readonly decided: number;
  readonly needsReview: number;
  /** ClaimVerdict events in the journal and how many of them repeat a verdict_id already published. */
  readonly verdictEvents: number;
  readonly duplicateVerdictEvents: number;
  /** RefundExecuted events and how many repeat an execution_id already published. */
  readonly refundEvents: number;
  readonly duplicateRefundEvents: number;
  /** Orders with a ledger entry. */
  readonly ledgers: number;
}

/** Expected dead letters by queue (default none anywhere). */
export interface InvariantOptions {
  readonly deadLetters?: Partial<Record<QueueRole, number>>;
}

type JournalEvent = { "detail-type": string; source: string; detail: Record<string, unknown> };

/** Every event the local bus accepted, from `events.jsonl` (the stack must have a data directory). */
export async function readJournal(stack: LocalStack): Promise<JournalEvent[]> {
  const path = stack.bus.local.journalPath;
  if (path === undefined)
    throw new LocalStackError("NO_JOURNAL", "the stack has no data directory, so the bus keeps no events.jsonl");
  const text = await readFile(path, "utf8").catch((e: NodeJS.ErrnoException) =>
    e.code === "ENOENT" ? "" : Promise.reject(e),
  );
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as JournalEvent);
}

async function scanTable(stack: LocalStack): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await stack.clients.dynamo.send(
      new ScanCommand({
        TableName: LOCAL_TABLE_NAME,
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

async function queueDepth(sqs: SQSClient, url: string): Promise<number> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
      ],
    }),
  );
  const a = out.Attributes ?? {};
  return (
    Number(a.ApproximateNumberOfMessages ?? 0) +
    Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
    Number(a.ApproximateNumberOfMessagesDelayed ?? 0)
  );
}

const group = <T>(items: readonly T[], key: (t: T) => string) => {
  const map = new Map<string, T[]>();
  for (const item of items) map.set(key(item), [...(map.get(key(item)) ?? []), item]);
  return map;
};

/**
 * Waits for the stack to drain, then checks, from the bus journal (`events.jsonl`) and the stores:
 * every submitted claim is DECIDED or NEEDS_REVIEW (none lost); each decided claim has exactly one
 * stored verdict, settled and published, and exactly one distinct ClaimVerdict verdict_id on the bus,
 * the one its record names (repeats of that id are at-least-once publishing: counted, allowed); a
 * claim in review has none; RefundExecuted execution_ids are one per claim and only for claims the
 * ledger holds, with the amount reserved; every ledger entry adds up and stays within its order; the
 * audit holds each claim's receipt (and extraction), and a decided claim's proposal, kernel verdict
 * and executed refund exactly once; no work queue holds anything and no DLQ holds more than
 * `deadLetters` says. Throws
 * InvariantViolationError listing every violation.
 */
export async function assertInvariants(
  stack: LocalStack,
  submittedClaims: readonly string[],
  options: InvariantOptions = {},
): Promise<InvariantReport> {
  await stack.drained();
  const violations: string[] = [];
  const submitted = new Set(submittedClaims);
  const records = new Map<string, ClaimRecord>();
  for (const id of submitted) {
    const record = await stack.deps.claims.getClaim(id);
    if (!record) violations.push(`claim ${id} was submitted but is not stored`);
    else if (record.status !== "DECIDED" && record.status !== "NEEDS_REVIEW")
      violations.push(`claim ${id} is lost in ${record.status}`);
    if (record) records.set(id, record);
  }

  const journal = (await readJournal(stack)).filter((e) => typeof e.detail.claim_id === "string");
  const verdictEvents = journal.filter((e) => e["detail-type"] === DETAIL_TYPES.verdict);
  const refundEvents = journal.filter((e) => e["detail-type"] === DETAIL_TYPES.refund);
  const items = await scanTable(stack);
  const verdicts = items
    .filter((i) => i.sk === "VERDICT")
    .map((i) => ({
      claim_id: String(i.claim_id),
      execution: i.execution as StoredVerdict["execution"],
      published: i.published === true,
      verdict_id: scannedVerdictRecord(i).verdict_id,
    }));
  // Every ledger (real refunds under LEDGER, a simulation's under LEDGER#SIM#…) that holds a refund.
  const ledgers = items
    .filter((i) => String(i.sk).startsWith("LEDGER"))
    .map((i) => ({
      order_id: String(i.pk).replace(/^ORDER#/, ""),
      refunded_cents: Number(i.refunded_cents ?? 0),
      claims: (i.claims ?? {}) as Record<string, number>,
    }))
    .filter((l) => Object.keys(l.claims).length > 0);

  for (const [claimId] of group(journal, (e) => String(e.detail.claim_id))) {
    if (!submitted.has(claimId)) violations.push(`the bus carries events for ${claimId}, which was not submitted`);
  }
  const verdictsByClaim = group(verdictEvents, (e) => String(e.detail.claim_id));
  const storedByClaim = group(verdicts, (v) => v.claim_id);
  const refundsByClaim = group(refundEvents, (e) => String(e.detail.claim_id));
  const onLedger = new Map<string, { order_id: string; cents: number }>();
  for (const entry of ledgers)
    for (const [claimId, cents] of Object.entries(entry.claims)) {
      if (onLedger.has(claimId))
        violations.push(
          `claim ${claimId} is on the ledgers of ${onLedger.get(claimId)!.order_id} and ${entry.order_id}`,
        );
      onLedger.set(claimId, { order_id: entry.order_id, cents });
    }

  for (const [claimId, record] of records) {
    const ids = [...new Set((verdictsByClaim.get(claimId) ?? []).map((e) => String(e.detail.verdict_id)))];
    const stored = storedByClaim.get(claimId) ?? [];
    if (record.status === "DECIDED") {
      if (ids.length !== 1)
        violations.push(
          `claim ${claimId} (DECIDED) has ${ids.length} distinct ClaimVerdict verdict_ids on the bus: ${ids.join(", ") || "none"}`,
        );
      else if (ids[0] !== record.verdict_id)
        violations.push(
          `claim ${claimId} records verdict ${record.verdict_id ?? "none"} but the bus published ${ids[0]}`,
        );
      if (stored.length !== 1) violations.push(`claim ${claimId} (DECIDED) has ${stored.length} stored verdicts`);
      for (const v of stored) {
        if (v.execution === "PENDING")
          violations.push(`claim ${claimId}: stored verdict ${v.verdict_id} is still PENDING execution`);
        // Published: marked on its item, or proven by this claim recorded DECIDED with it (that update follows the publish).
        if (!verdictPublished({ ...v, record: { verdict_id: v.verdict_id } }, record))
          violations.push(
            `claim ${claimId}: stored verdict ${v.verdict_id} is neither marked published nor the claim's`,
          );
      }
    } else if (ids.length > 0 || stored.length > 0) {
      violations.push(
        `claim ${claimId} is ${record.status} but has ${stored.length} stored verdict(s) and ClaimVerdict ids ${ids.join(", ")}`,
      );
    }
    const executions = [...new Set((refundsByClaim.get(claimId) ?? []).map((e) => String(e.detail.execution_id)))];
    const reserved = onLedger.get(claimId);
    if (executions.length > 1)
      violations.push(
        `claim ${claimId} was refunded under ${executions.length} execution_ids: ${executions.join(", ")}`,
      );
    if (executions.length > 0 && !reserved)
      violations.push(`claim ${claimId} has a RefundExecuted event but no ledger reservation`);
    if (reserved && executions.length === 0)
      violations.push(
        `claim ${claimId} holds ${reserved.cents} cents on ${reserved.order_id} but no RefundExecuted event was published`,
      );
    if (reserved && record.claim && reserved.order_id !== record.claim.order_id)
      violations.push(
        `claim ${claimId} is reserved on ${reserved.order_id}, not on its order ${record.claim.order_id}`,
      );
    if ((record.executed === true) !== (reserved !== undefined))
      violations.push(
        `claim ${claimId} says executed=${String(record.executed)} but the ledger ${reserved ? "holds" : "does not hold"} it`,
      );
    for (const e of refundsByClaim.get(claimId) ?? []) {
      if (reserved && Math.round(Number(e.detail.amount_eur) * 100) !== reserved.cents)
        violations.push(
          `claim ${claimId}: RefundExecuted says ${String(e.detail.amount_eur)} EUR, the ledger ${reserved.cents} cents`,
        );
      if (e.detail.verdict_id !== record.verdict_id)
        violations.push(
          `claim ${claimId}: RefundExecuted names verdict ${String(e.detail.verdict_id)}, the claim ${record.verdict_id ?? "none"}`,
        );
    }
  }

  // The audit (the report is built from it, docs/audit.md) holds every step once a claim is final: a crash
  // must not lose the kernel's verdict or refund, nor repeat them under another instant.
  for (const [claimId, record] of records) {
    const audit = await stack.deps.audit.byDfid(record.dfid);
    const of = (type: string) => audit.filter((e) => e.event_type === type);
    const need = (type: string, count: number, what = "") => {
      const n = of(type).length;
      if (n !== count)
        violations.push(`claim ${claimId}: the audit holds ${n} ${type} event(s)${what}, expected ${count}`);
    };
    if (of("CLAIM_RECEIVED").length === 0) violations.push(`claim ${claimId}: the audit holds no CLAIM_RECEIVED`);
    if ("claim_text" in record.input && record.claim && of("CLAIM_EXTRACTED").length === 0)
      violations.push(`claim ${claimId}: the audit holds no CLAIM_EXTRACTED`);
    if (record.status === "DECIDED") {
      // Triage decides without a proposal: CLAIM_TRIAGED stands for PROPOSAL_SUBMITTED (docs/kernel.md), never both.
      const triaged = of("CLAIM_TRIAGED").length > 0;
      need(triaged ? "CLAIM_TRIAGED" : "PROPOSAL_SUBMITTED", 1);
      if (triaged) need("PROPOSAL_SUBMITTED", 0, " beside CLAIM_TRIAGED");
      need("KERNEL_VERDICT", 1);
      const ids = of("KERNEL_VERDICT").map((e) => {
        const read = parseAuditDetails(e);
        return read.ok && read.parsed.type === "KERNEL_VERDICT" ? read.parsed.details.verdict_id : "(unreadable)";
      });
      if (ids.some((id) => id !== record.verdict_id))
        violations.push(
          `claim ${claimId}: the audit's KERNEL_VERDICT names ${ids.join(", ")}, the claim ${record.verdict_id ?? "none"}`,
        );
      need("CLAIM_REFUND_EXECUTED", record.executed === true ? 1 : 0);
    } else if (of("CLAIM_NEEDS_REVIEW").length === 0) {
      violations.push(`claim ${claimId}: NEEDS_REVIEW but the audit holds no CLAIM_NEEDS_REVIEW`);
    }
  }

  for (const entry of ledgers) {
    const sum = Object.values(entry.claims).reduce((a, b) => a + b, 0);
    if (sum !== entry.refunded_cents)
      violations.push(
        `ledger ${entry.order_id}: refunded_cents ${entry.refunded_cents} ≠ the sum of its claims ${sum}`,
      );
    const order = await stack.deps.orders.getOrder(entry.order_id);
    const reading = order ? readOrder(order) : undefined;
    const cents = reading?.ok ? { cents: reading.view.total.minor } : undefined;
    if (!cents) violations.push(`ledger ${entry.order_id} has no readable order`);
    else if (entry.refunded_cents > cents.cents)
      violations.push(`ledger ${entry.order_id} refunded ${entry.refunded_cents} cents of an order of ${cents.cents}`);
    for (const claimId of Object.keys(entry.claims))
      if (!submitted.has(claimId))
        violations.push(`ledger ${entry.order_id} holds ${claimId}, which was not submitted`);
  }

  for (const role of Object.keys(stack.queues) as QueueRole[]) {
    const queue = stack.queues[role];
    if (role !== "timers") {
      const depth = await queueDepth(stack.clients.sqs, queue.url);
      if (depth > 0) violations.push(`queue ${role} still holds ${depth} message(s)`);
    }
    const dead = queue.dlq ? await queueDepth(stack.clients.sqs, queue.dlq.url) : 0;
    const allowed = options.deadLetters?.[role] ?? 0;
    if (dead !== allowed) violations.push(`the ${role} DLQ holds ${dead} message(s), expected ${allowed}`);
  }

  if (violations.length > 0) throw new InvariantViolationError(violations);
  const distinct = (events: JournalEvent[], field: string) => new Set(events.map((e) => String(e.detail[field]))).size;
  const decided = [...records.values()].filter((r) => r.status === "DECIDED").length;
  return {
    claims: records.size,
    decided,
    needsReview: records.size - decided,
    verdictEvents: verdictEvents.length,
    duplicateVerdictEvents: verdictEvents.length - distinct(verdictEvents, "verdict_id"),
    refundEvents: refundEvents.length,
    duplicateRefundEvents: refundEvents.length - distinct(refundEvents, "execution_id"),
    ledgers: ledgers.length,
  };
}

/**
 * The queue settings of a stack under fault injection: every queue's messages redelivered soon (`fast`), and no
 * batching window on the timers (app/queues.ts gives them 60 s): a step deadline that comes due, or a redelivered
 * timer, is handled at once, not after the timers' poller has spent a minute filling a batch.
 */
export function fastQueues(fast: {
  readonly visibilityTimeoutS: number;
  readonly maxReceives?: number;
}): NonNullable<LocalStackOptions["queues"]> {
  return {
    crewEvents: fast,
    agentSteps: fast,
    proposals: fast,
    extraction: fast,
    timers: { ...fast, batchingWindowMs: 0 },
  };
}
