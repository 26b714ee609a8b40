// A local EventBridge PutEvents (and DescribeEventBus) endpoint (AWS JSON 1.1) that the real @aws-sdk/client-eventbridge
// can call: validates like AWS, builds the event envelope, journals every accepted entry to
// `<dataDir>/events.jsonl`, and delivers matching events to in-process rule targets with retries
// and an in-memory dead-letter list. Every request must carry a valid SigV4 signature of the bus's keys
// (loopback is not a boundary); it sends no CORS headers, so no web page can call it.
import { randomUUID } from "node:crypto";
import { closeSync, openSync, writeSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { EventBridgeEvent } from "aws-lambda";
import { BUS_NAME, RULE_PATTERNS } from "../../app/manifest.ts";
import { BusConfigError, BusIoError, InvalidEventPatternError, RequestError } from "./errors.ts";
import { matchesPattern, validatePattern } from "./matcher.ts";
import { newSigningKeys, registerEndpointKeys } from "../auth/keys.ts";
import { createSignatureCheck } from "../auth/sigv4.ts";
import type { SigningKeys } from "../auth/sigv4.ts";
import type { EventPattern } from "./matcher.ts";
import { registerInProcessHandler } from "../in-process/handlers.ts";
import type { InProcessRequestHandler } from "../in-process/handlers.ts";
import { buildEvent, busNameOf, entrySize, isObject } from "./entries.ts";
import type { EntryFailure, PutEventsEntryInput } from "./entries.ts";

/** The event a rule target receives: the full EventBridge envelope. */
export type BusEvent = EventBridgeEvent<string, Record<string, unknown>>;

/** An in-process rule target (plays a Lambda or queue target); a throw counts as a failed delivery. */
type BusTarget = (event: BusEvent) => Promise<void> | void;

/** Test hook: return a failure to make a valid entry fail (e.g. `InternalFailure`), undefined to accept it. */
type EntryFailureHook = (entry: PutEventsEntryInput, index: number) => EntryFailure | undefined;

/** A delivery that failed every attempt. */
type DeadLetter = {
  readonly ruleName: string;
  readonly targetId: string;
  readonly event: BusEvent;
  readonly error: string;
  readonly attempts: number;
  readonly failedAt: string;
};

/** A rule on a bus: a name, the bus it listens on and its pattern. */
type BusRule = { readonly name: string; readonly eventBusName: string; readonly pattern: EventPattern };

/** Counters of the bus since it started. */
type BusStats = {
  readonly accepted: number;
  readonly failedEntries: number;
  readonly deliveries: number;
  readonly failedAttempts: number;
  readonly deadLettered: number;
};

/** Options of `startLocalBus`. */
export type LocalBusOptions = {
  /** Directory for `events.jsonl`; without it nothing is written to disk. */
  readonly dataDir?: string;
  /** Rules by name; defaults to RULE_PATTERNS on the `claims` bus. */
  readonly rules?: Readonly<
    Record<string, EventPattern | { readonly pattern: EventPattern; readonly eventBusName?: string }>
  >;
  /** Buses that exist; defaults to `claims` and `default`. */
  readonly busNames?: readonly string[];
  readonly account?: string;
  readonly region?: string;
  readonly now?: () => Date;
  readonly newId?: () => string;
  /** Attempts per target delivery before the event is dead-lettered (default 3). */
  readonly maxAttempts?: number;
  /** Delay before retry number `attempt` (1-based), in ms (default 20 · 2^(attempt-1)). */
  readonly retryDelayMs?: (attempt: number) => number;
  readonly failureHook?: EntryFailureHook;
  /** Called when a delivery is dead-lettered (e.g. to log it). */
  readonly onDeadLetter?: (dead: DeadLetter) => void;
  /** The keys requests must be signed with (default: random; `localClientConfig(bus.endpoint)` signs with them). */
  readonly keys?: SigningKeys;
};

/** A running local bus. */
export type LocalBus = {
  /** http://127.0.0.1:<port> — give it to EventBridgeClient as `endpoint`. */
  readonly endpoint: string;
  /** `<dataDir>/events.jsonl`, when a data directory was given. */
  readonly journalPath: string | undefined;
  /** Adds or replaces a rule; throws InvalidEventPatternError for a pattern the matcher rejects. */
  putRule(name: string, pattern: EventPattern, eventBusName?: string): void;
  /**
   * Registers a target on a rule; returns a function that removes it. `onMatched` runs synchronously for each event
   * the rule matches, before the PutEvents that carried it answers (a durable queue's write: local/payment-deliveries.ts).
   */
  addTarget(
    ruleName: string,
    target: BusTarget,
    options?: { readonly id?: string; readonly onMatched?: (event: BusEvent) => void },
  ): () => void;
  setFailureHook(hook: EntryFailureHook | undefined): void;
  rules(): readonly BusRule[];
  /** The deliveries that failed every attempt, oldest first (the last MAX_DEAD_LETTERS_KEPT). */
  deadLetters(): readonly DeadLetter[];
  stats(): BusStats;
  /** Resolves when every delivery started so far has finished (delivered or dead-lettered). */
  settled(): Promise<void>;
  /** Stops accepting requests, waits for deliveries and the journal, closes the server. */
  stop(): Promise<void>;
};

const TARGET_PREFIX = "AWSEvents.";
const MAX_ENTRIES = 10;
const MAX_REQUEST_ENTRY_BYTES = 256 * 1024;
/** Dead letters kept for `deadLetters()` (the most recent; `stats.deadLettered` counts them all). */
export const MAX_DEAD_LETTERS_KEPT = 1000;
const MAX_BODY_BYTES = 4 * 1024 * 1024;
const JSON_11 = "application/x-amz-json-1.1";
const utf8 = new TextDecoder();

/** A target and, optionally, what it does synchronously when the rule matches, before PutEvents answers. */
type TargetEntry = { readonly target: BusTarget; readonly onMatched?: ((event: BusEvent) => void) | undefined };
type Rule = BusRule & { readonly targets: Map<string, TargetEntry> };

/** Starts the local PutEvents endpoint on 127.0.0.1 (random port). */
export async function startLocalBus(options: LocalBusOptions = {}): Promise<LocalBus> {
  const account = options.account ?? "000000000000";
  const region = options.region ?? "us-east-1";
  const now = options.now ?? (() => new Date());
  const newId = options.newId ?? randomUUID;
  const maxAttempts = options.maxAttempts ?? 3;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw new BusConfigError(`maxAttempts must be a positive integer, got ${maxAttempts}`);
  const retryDelayMs = options.retryDelayMs ?? ((attempt: number) => 20 * 2 ** (attempt - 1));
  const busNames = new Set(options.busNames ?? [BUS_NAME, "default"]);
  let failureHook = options.failureHook;

  const journalPath = options.dataDir === undefined ? undefined : join(options.dataDir, "events.jsonl");
  if (options.dataDir !== undefined) {
    try {
      await mkdir(options.dataDir, { recursive: true });
    } catch (error) {
      throw new BusIoError(`cannot create the data directory ${options.dataDir}`, error);
    }
  }

  const rules = new Map<string, Rule>();
  const putRule = (name: string, pattern: EventPattern, eventBusName: string = BUS_NAME) => {
    const check = validatePattern(pattern);
    if (!check.ok) throw new InvalidEventPatternError(`rule "${name}": ${check.message}`);
    if (!busNames.has(eventBusName))
      throw new BusConfigError(
        `rule "${name}" names the event bus "${eventBusName}", which does not exist (buses: ${[...busNames].join(", ")})`,
      );
    const existing = rules.get(name);
    rules.set(name, { name, eventBusName, pattern, targets: existing?.targets ?? new Map() });
  };
  for (const [name, def] of Object.entries(options.rules ?? RULE_PATTERNS)) {
    if (isRuleDef(def)) putRule(name, def.pattern, def.eventBusName);
    else putRule(name, def);
  }

  const stats = { accepted: 0, failedEntries: 0, deliveries: 0, failedAttempts: 0, deadLettered: 0 };
  const dead: DeadLetter[] = [];
  const pending = new Set<Promise<void>>();
  let journalFd: number | undefined;
  let stopping = false;

  // One descriptor for the bus's life, opened at the first event (append mode, owner-only), and one synchronous
  // write per PutEvents: the lines are in the OS's hands before the request answers, as an append per request did,
  // without an open and a close in libuv's pool for every event (issue 37: ~3 per claim on the full path).
  const appendJournal = (lines: string): void => {
    if (journalPath === undefined || lines === "") return;
    journalFd ??= openSync(journalPath, "a", 0o600);
    writeSync(journalFd, lines);
  };

  const deliver = async (rule: Rule, targetId: string, target: BusTarget, event: BusEvent): Promise<void> => {
    await new Promise<void>((resolve) => setImmediate(resolve)); // deliver after PutEvents answers, like AWS
    let lastError: unknown;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      try {
        await target(structuredClone(event));
        stats.deliveries++;
        return;
      } catch (error) {
        lastError = error;
        stats.failedAttempts++;
        if (attempt < maxAttempts) await sleep(retryDelayMs(attempt));
      }
    }
    const letter: DeadLetter = {
      ruleName: rule.name,
      targetId,
      event,
      attempts: maxAttempts,
      failedAt: now().toISOString(),
      error: lastError instanceof Error ? `${lastError.name}: ${lastError.message}` : String(lastError),
    };
    dead.push(letter);
    // The latest ones only: a bus that stays up (claims serve) must not keep every failure it ever had.
    if (dead.length > MAX_DEAD_LETTERS_KEPT) dead.splice(0, dead.length - MAX_DEAD_LETTERS_KEPT);
    stats.deadLettered++;
    options.onDeadLetter?.(letter);
  };

  const dispatch = (busName: string, event: BusEvent) => {
    for (const rule of rules.values()) {
      if (rule.eventBusName !== busName || rule.targets.size === 0) continue;
      if (!matchesPattern(rule.pattern, event)) continue;
      for (const [targetId, { target, onMatched }] of rule.targets) {
        onMatched?.(event);
        const task = deliver(rule, targetId, target, event).finally(() => pending.delete(task));
        pending.add(task);
      }
    }
  };

  const putEvents = async (body: unknown): Promise<unknown> => {
    if (!isObject(body) || !Array.isArray(body.Entries)) {
      throw new RequestError(
        400,
        "ValidationException",
        "1 validation error detected: Value null at 'entries' failed to satisfy constraint: Member must not be null",
      );
    }
    const entries: unknown[] = body.Entries;
    if (entries.length < 1 || entries.length > MAX_ENTRIES) {
      const bound = entries.length < 1 ? "greater than or equal to 1" : `less than or equal to ${MAX_ENTRIES}`;
      throw new RequestError(
        400,
        "ValidationException",
        `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length ${bound}`,
      );
    }
    const inputs = entries.map((e) => (isObject(e) ? (e as PutEventsEntryInput) : {}));
    const total = inputs.reduce((sum, e) => sum + entrySize(e), 0);
    if (total > MAX_REQUEST_ENTRY_BYTES) {
      throw new RequestError(400, "ValidationException", "Total size of the entries in the request is over the limit.");
    }

    const results: Array<{ EventId: string } | { ErrorCode: string; ErrorMessage: string }> = [];
    const accepted: Array<{ busName: string; event: BusEvent }> = [];
    inputs.forEach((input, index) => {
      const outcome = buildEvent(input, { account, region, now, newId, busNames });
      const failure = outcome.ok ? failureHook?.(input, index) : outcome.failure;
      if (failure) {
        results.push({ ErrorCode: failure.errorCode, ErrorMessage: failure.errorMessage });
      } else if (outcome.ok) {
        results.push({ EventId: outcome.event.id });
        accepted.push(outcome);
      }
    });

    try {
      appendJournal(accepted.map(({ event }) => `${JSON.stringify(event)}\n`).join(""));
    } catch (error) {
      throw new RequestError(
        500,
        "InternalException",
        `the local bus could not write its journal: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    stats.accepted += accepted.length;
    const failedCount = results.length - accepted.length;
    stats.failedEntries += failedCount;
    for (const { busName, event } of accepted) dispatch(busName, event);
    return { FailedEntryCount: failedCount, Entries: results };
  };

  const keys = options.keys ?? newSigningKeys();
  const checkSignature = createSignatureCheck(keys);
  /** The answer to one request that passed (or, in-process, needs no) signature check. */
  const answer = async (method: string, target: string | undefined, raw: string): Promise<Answer> => {
    try {
      if (stopping) throw new RequestError(503, "ServiceUnavailableException", "the local bus is stopping");
      if (method !== "POST" || target === undefined || !target.startsWith(TARGET_PREFIX)) {
        throw new RequestError(
          400,
          "UnknownOperationException",
          `unknown operation: expected POST with X-Amz-Target ${TARGET_PREFIX}PutEvents, got ${method} ${target ?? "(no X-Amz-Target)"}`,
        );
      }
      const operation = target.slice(TARGET_PREFIX.length);
      if (operation !== "PutEvents" && operation !== "DescribeEventBus") {
        throw new RequestError(
          400,
          "UnknownOperationException",
          `the local bus implements only PutEvents and DescribeEventBus, not ${operation}`,
        );
      }
      let body: unknown;
      try {
        body = raw.length === 0 ? {} : JSON.parse(raw);
      } catch {
        throw new RequestError(400, "SerializationException", "the request body is not valid JSON");
      }
      if (operation === "DescribeEventBus") {
        // As AWS answers it: the bus's name and ARN, or ResourceNotFoundException for a bus that does not exist.
        const name = busNameOf((body as { Name?: unknown } | null)?.Name);
        if (!busNames.has(name))
          throw new RequestError(400, "ResourceNotFoundException", `Event bus ${name} does not exist.`);
        return { status: 200, body: { Name: name, Arn: `arn:aws:events:${region}:${account}:event-bus/${name}` } };
      }
      return { status: 200, body: await putEvents(body) };
    } catch (error) {
      return errorAnswer(error);
    }
  };
  const server = createServer((req, res) => {
    void handle(req, res);
  });
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    let out: Answer;
    try {
      if (stopping) throw new RequestError(503, "ServiceUnavailableException", "the local bus is stopping");
      const bytes = await readBody(req);
      const refusal = checkSignature({
        method: req.method ?? "GET",
        url: req.url ?? "/",
        headers: req.headers,
        body: bytes,
      });
      if (refusal) throw new RequestError(403, refusal.type, refusal.message);
      out = await answer(req.method ?? "GET", headerValue(req.headers["x-amz-target"]), bytes.toString("utf8"));
    } catch (error) {
      out = errorAnswer(error);
    }
    send(res, out);
  };
  // This process's own EventBridge clients call `answer` directly (no port, so no signature to check: they stamp).
  const requestHandler: InProcessRequestHandler = {
    metadata: { handlerProtocol: "http/1.1" },
    async handle(request) {
      const body = request.body;
      // TextDecoder reads the bytes: the SDK's JSON body is a Uint8Array whose string methods warn (Buffer.from calls one).
      const raw = typeof body === "string" ? body : body instanceof Uint8Array ? utf8.decode(body) : "";
      const out = await answer(request.method, request.headers["x-amz-target"], raw);
      // The answer reaches the caller a turn later, as over a socket: deliveries start before the caller resumes.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const { headers, payload } = wire(out);
      return {
        response: { statusCode: out.status, headers: headers as Record<string, string>, body: Buffer.from(payload) },
      };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
  };

  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) => reject(new BusIoError("the local bus could not listen on 127.0.0.1", error)));
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const unregisterKeys = registerEndpointKeys(`http://127.0.0.1:${port}`, keys);
  const unregisterHandler = registerInProcessHandler(`http://127.0.0.1:${port}`, requestHandler);
  const unregister = () => {
    unregisterKeys();
    unregisterHandler();
  };

  const settled = async () => {
    while (pending.size > 0) await Promise.allSettled([...pending]);
  };

  return {
    endpoint: `http://127.0.0.1:${port}`,
    journalPath,
    putRule,
    addTarget(ruleName, target, targetOptions) {
      const rule = rules.get(ruleName);
      if (!rule)
        throw new BusConfigError(`no rule named "${ruleName}" (rules: ${[...rules.keys()].join(", ") || "none"})`);
      const id = targetOptions?.id ?? `target-${rule.targets.size + 1}`;
      if (rule.targets.has(id)) throw new BusConfigError(`rule "${ruleName}" already has a target with id "${id}"`);
      rule.targets.set(id, { target, onMatched: targetOptions?.onMatched });
      return () => {
        rule.targets.delete(id);
      };
    },
    setFailureHook(hook) {
      failureHook = hook;
    },
    rules: () => [...rules.values()].map(({ name, eventBusName, pattern }) => ({ name, eventBusName, pattern })),
    deadLetters: () => [...dead],
    stats: () => ({ ...stats }),
    settled,
    async stop() {
      stopping = true;
      unregister();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await settled();
      if (journalFd !== undefined) closeSync(journalFd);
      journalFd = undefined;
    },
  };
}

function isRuleDef(def: unknown): def is { readonly pattern: EventPattern; readonly eventBusName?: string } {
  return (
    isObject(def) && isObject(def.pattern) && Object.keys(def).every((k) => k === "pattern" || k === "eventBusName")
  );
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES)
      throw new RequestError(413, "ValidationException", `the request body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** What the bus answers: a status and a JSON body (an error's type in `x-amzn-errortype` too). */
type Answer = { readonly status: number; readonly body: unknown; readonly errorType?: string };

function errorAnswer(error: unknown): Answer {
  const e =
    error instanceof RequestError
      ? error
      : new RequestError(500, "InternalException", error instanceof Error ? error.message : String(error));
  return { status: e.status, body: { __type: e.type, message: e.message }, errorType: e.type };
}

function wire(answer: Answer): { headers: Record<string, string | number>; payload: string } {
  const payload = JSON.stringify(answer.body);
  const headers: Record<string, string | number> = {
    "content-type": JSON_11,
    "content-length": Buffer.byteLength(payload),
    "x-amzn-requestid": randomUUID(),
  };
  if (answer.errorType !== undefined) headers["x-amzn-errortype"] = answer.errorType;
  return { headers, payload };
}

function send(res: ServerResponse, answer: Answer): void {
  const { headers, payload } = wire(answer);
  res.writeHead(answer.status, headers);
  res.end(payload);
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
