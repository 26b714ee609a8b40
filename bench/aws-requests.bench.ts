// What each claim asks of AWS, counted on the local stack through the production handlers (issues 4, 13):
// requests by service and operation, DynamoDB capacity by entity, queue sends and event-source batch
// fill, handler invocations with their time and their log output at INFO (the level Lambda runs them
// at), one client GET, the step-deadline timer firing after the claim is decided, and what stays stored.
// Writes bench/out/aws-requests.json, which bench/cost.ts prices.
import { spawnSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, totalmem } from "node:os";
import { dirname } from "node:path";
import { gzipSync } from "node:zlib";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { countRequests, createRequestCounter } from "../adapters/aws/index.ts";
import type { RequestCounts } from "../adapters/aws/index.ts";
import { eventSourceBatch, TIMER_BATCHING_WINDOW_SECONDS } from "../app/manifest.ts";
import { benchOrders } from "./lib/claims.ts";
import { envIntReader, formatTable } from "./lib/harness.ts";
import type { TableRow } from "./lib/harness.ts";
import { AWS_REQUESTS_FILE, DEPLOYED_LOGGING, withOwnCpu } from "./lib/profile.ts";
import type {
  AwsRequestsFile,
  ClaimKind,
  ClaimProfile,
  FunctionKey,
  InvocationUsage,
  LogSample,
  StoredUsage,
} from "./lib/profile.ts";
import { checkPhase, runPhase, startBenchStack } from "./lib/stack.ts";
import type { BenchStack } from "./lib/stack.ts";
import { entityOf, itemSize, summarise } from "./lib/usage.ts";
import type { CallRecord, InvocationRecord, UsageRecorder } from "./lib/usage.ts";

/** Sizes of one run. */
export type AwsRequestsOptions = {
  sequential: number;
  concurrent: number;
  inFlight: number;
  polls: number;
  timers: boolean;
};

/** Defaults: 20 claims one at a time and 60 with 10 in flight per kind, 20 GETs, timers waited for; AWS_REQUESTS_* override them. */
export function awsRequestsOptions(
  env: Readonly<Record<string, string | undefined>> = process.env,
): AwsRequestsOptions {
  const num = envIntReader("aws-requests", env);
  const options = {
    sequential: num("AWS_REQUESTS_SEQUENTIAL", 20, 1),
    concurrent: num("AWS_REQUESTS_CONCURRENT", 60, 1),
    inFlight: num("AWS_REQUESTS_IN_FLIGHT", 10, 2),
    polls: num("AWS_REQUESTS_POLLS", 20, 1),
    timers: env.AWS_REQUESTS_TIMERS !== "0",
  };
  if (options.polls > options.concurrent)
    throw new RangeError(
      `aws-requests bench: AWS_REQUESTS_POLLS (${options.polls}) must not exceed AWS_REQUESTS_CONCURRENT (${options.concurrent})`,
    );
  return options;
}

/** The level the handlers log at on AWS: Powertools' default, and Lambda's default application log level with the JSON format (infra/lambda.ts). */
export const AWS_LOG_LEVEL = "INFO";

/** How long the timer path may take to fire: the step deadline (120 s), the timers' batching window, and slack. */
const TIMER_WAIT_MS = 140_000 + TIMER_BATCHING_WINDOW_SECONDS * 1000;

type Taken = { calls: CallRecord[]; invocations: InvocationRecord[] };

/** One measured phase. */
type PhaseResult = {
  kind: ClaimKind;
  mode: "warm-up" | "sequential" | "concurrent";
  claims: number;
  claimIds: string[];
  profile: ClaimProfile;
  outside: Record<string, number>;
  counted: RequestCounts;
};

const opsOf = (calls: readonly CallRecord[], pick: (c: CallRecord) => boolean) => {
  const out: Record<string, number> = {};
  for (const c of calls)
    if (pick(c)) out[`${c.service}.${c.operation}`] = (out[`${c.service}.${c.operation}`] ?? 0) + 1;
  return out;
};

/** Bytes, items and gsi1 entries stored per claim by entity (orders, reference data, left out). */
async function storedPerClaim(b: BenchStack, claims: number): Promise<Record<string, StoredUsage>> {
  const out: Record<string, StoredUsage> = {};
  let start: Record<string, unknown> | undefined;
  do {
    const page = await b.stack.clients.dynamo.send(
      new ScanCommand({ TableName: "claims-local", ...(start ? { ExclusiveStartKey: start } : {}) }),
    );
    for (const item of page.Items ?? []) {
      const entity = entityOf(item.pk, item.sk);
      if (entity === "order") continue;
      const u = (out[entity] ??= {
        items: 0,
        bytes: 0,
        indexItems: 0,
        indexBytes: 0,
        expiringItems: 0,
        expiringBytes: 0,
      });
      const size = itemSize(item);
      u.items += 1 / claims;
      u.bytes += size / claims;
      if (typeof item.expires_at === "number") {
        u.expiringItems = (u.expiringItems ?? 0) + 1 / claims;
        u.expiringBytes = (u.expiringBytes ?? 0) + size / claims;
      }
      if (item.gsi1pk !== undefined) {
        u.indexItems += 1 / claims;
        u.indexBytes += size / claims;
      }
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
}

function gitCommit(): string {
  const head = spawnSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" });
  if (head.status !== 0) return "unknown";
  const dirty = spawnSync("git", ["diff", "--quiet", "HEAD", "--", "."], { encoding: "utf8" }).status !== 0;
  return `${head.stdout.trim()}${dirty ? "+dirty" : ""}`;
}

const machine = () =>
  `node ${process.version}, ${cpus()[0]?.model ?? "cpu"} × ${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GB`;

/** What one run measured, beside the file it wrote. */
export type AwsRequestsRun = {
  file: AwsRequestsFile;
  phases: PhaseResult[];
  timersFired: number;
  timersWaitedMs: number;
};

/** Runs the four phases, the GETs and the timers on one recording stack, and writes the profile to `outFile` (default bench/out/aws-requests.json). */
export async function countAwsRequests(
  options: AwsRequestsOptions = awsRequestsOptions(),
  outFile: string = AWS_REQUESTS_FILE,
): Promise<AwsRequestsRun> {
  const now = Date.now();
  // A few claims of each kind first warm the JIT up (their requests are left out; their timers are not).
  const warmUp = 5;
  const plan: { kind: ClaimKind; mode: PhaseResult["mode"]; n: number; inFlight: number; offset: number }[] = [
    { kind: "structured", mode: "warm-up", n: warmUp, inFlight: 1, offset: options.sequential + options.concurrent },
    { kind: "free_text", mode: "warm-up", n: warmUp, inFlight: 1, offset: options.sequential + options.concurrent },
    { kind: "structured", mode: "sequential", n: options.sequential, inFlight: 1, offset: 0 },
    { kind: "free_text", mode: "sequential", n: options.sequential, inFlight: 1, offset: 0 },
    {
      kind: "structured",
      mode: "concurrent",
      n: options.concurrent,
      inFlight: options.inFlight,
      offset: options.sequential,
    },
    {
      kind: "free_text",
      mode: "concurrent",
      n: options.concurrent,
      inFlight: options.inFlight,
      offset: options.sequential,
    },
  ];
  const ordersOf = (p: (typeof plan)[number]) => benchOrders(p.kind, p.n, now, p.offset);
  // Metrics on, as on Lambda: their EMF lines are log lines too (functions/observability/metrics.ts writes them locally only when asked).
  const metricsFlag = process.env.POWERTOOLS_METRICS_DISABLED;
  process.env.POWERTOOLS_METRICS_DISABLED = "false";
  const b = await startBenchStack(plan.flatMap(ordersOf), { record: true, logLevel: AWS_LOG_LEVEL }).finally(() => {
    if (metricsFlag === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
    else process.env.POWERTOOLS_METRICS_DISABLED = metricsFlag;
  });
  const recorder = b.recorder as UsageRecorder;
  const restoreLogs = recorder.captureLogs();
  const counter = createRequestCounter();
  const uncount = [b.stack.clients.dynamo, b.stack.clients.sqs, b.stack.clients.events].map((client) =>
    countRequests(client as never, counter),
  );
  // The timers' event source requests (the local poller plays it with the deployed batching window), from here on.
  const timerPoller = () => b.stack.pollers.timers.stats;
  const timerPollerAtStart = { receives: timerPoller().receivesWithMessages, deletes: timerPoller().deleteCalls };
  // Timers of earlier phases fire during later ones: their records are set aside for the timer path.
  const ticks: Taken = { calls: [], invocations: [] };
  const take = (): Taken => {
    const t = recorder.take();
    ticks.calls.push(...t.calls.filter((c) => c.tag === "tick"));
    ticks.invocations.push(...t.invocations.filter((i) => i.tag === "tick"));
    return t;
  };
  try {
    const phases: PhaseResult[] = [];
    for (const p of plan) {
      await b.stack.drained();
      take();
      counter.reset();
      b.resetBus();
      const phase = await runPhase(b, p.kind, ordersOf(p), p.inFlight);
      const { calls, invocations } = take();
      await checkPhase(b, phase);
      const apiRequests = invocations.filter((i) => i.tag === undefined && i.fn === "intakeApi").length;
      const profile = summarise(p.kind, phase.claimIds.length, {
        calls,
        invocations,
        busDeliveries: { ...b.bus },
        apiRequests,
      });
      phases.push({
        kind: p.kind,
        mode: p.mode,
        claims: phase.claimIds.length,
        claimIds: phase.claimIds,
        profile,
        outside: opsOf(calls, (c) => c.caller === "outside"),
        counted: counter.snapshot(),
      });
    }

    const measured = phases.filter((p) => p.mode !== "warm-up");

    // A client's GET on a decided claim, priced per GET.
    take();
    const decided = phases
      .find((p) => p.kind === "structured" && p.mode === "concurrent")!
      .claimIds.slice(0, options.polls);
    for (const id of decided) {
      const status = await b.poll(id);
      if (status !== "DECIDED")
        throw new Error(`aws-requests bench: GET /claims/${id} answered ${status}, expected DECIDED`);
    }
    const polled = take();
    const poll = summarise(
      "structured",
      decided.length,
      { ...polled, busDeliveries: {}, apiRequests: decided.length },
      "poll",
    );

    // The step timers: wait until every one sent has fired and its tick was handled.
    const claims = phases.reduce((n, p) => n + p.claims, 0);
    const expected = Math.round(phases.reduce((n, p) => n + (p.profile.sqsSends.timers?.messages ?? 0) * p.claims, 0));
    const started = performance.now();
    const timerRuns = () => [...ticks.invocations, ...recorder.peekInvocations()].filter((i) => i.fn === "timer");
    const fired = () => timerRuns().reduce((n, i) => n + i.records, 0);
    const timerInvocations = () => timerRuns().length;
    if (options.timers) {
      while (fired() < expected && performance.now() - started < TIMER_WAIT_MS)
        await new Promise((r) => setTimeout(r, 1000));
      await b.stack.drained();
      take();
      if (fired() < expected)
        throw new Error(
          `aws-requests bench: only ${fired()} of ${expected} step timers fired within ${TIMER_WAIT_MS / 1000} s`,
        );
    }
    const timersWaitedMs = performance.now() - started;
    const timerPath = options.timers
      ? withEventSource(summarise("structured", claims, { ...ticks, busDeliveries: {}, apiRequests: 0 }, "tick"), {
          receives: (timerPoller().receivesWithMessages - timerPollerAtStart.receives) / claims,
          deletes: (timerPoller().deleteCalls - timerPollerAtStart.deletes) / claims,
        })
      : undefined;

    // CLAIMS_STEP_TIMERS as the stack read it: lazy (the default) sends no timer for a claim decided in seconds.
    const stepTimers = b.stack.deps.settings.stepTimers ?? "lazy";
    const stepTimersNote =
      stepTimers === "lazy"
        ? " Step timers lazy (CLAIMS_STEP_TIMERS, the default): the crew's start arms none, the sweep arms the first of a claim still open after its cutoff; CLAIMS_STEP_TIMERS=eager measures the timer the start arms."
        : " Step timers eager (CLAIMS_STEP_TIMERS=eager): the crew's start arms each claim's timer.";
    const stored = await storedPerClaim(b, claims);
    const { text, outsideLines } = recorder.logs();
    const joined = text.join("\n");
    const logs: LogSample = {
      level: AWS_LOG_LEVEL,
      lines: text.length,
      bytes: Buffer.byteLength(joined) - Math.max(0, text.length - 1),
      gzipBytes: gzipSync(joined).length,
      outsideLines,
    };
    const find = (kind: ClaimKind, mode: PhaseResult["mode"]) =>
      measured.find((p) => p.kind === kind && p.mode === mode)!.profile;
    const file: AwsRequestsFile = {
      recordedAt: new Date().toISOString(),
      commit: gitCommit(),
      machine: machine(),
      note: `Local stack (dynalite, fauxqs, local EventBridge; production handlers logging at ${AWS_LOG_LEVEL}), rules model, system clock; ${warmUp} warm-up claims per kind first.${stepTimersNote} Sequential: ${options.sequential} claims per kind, one at a time. Concurrent: ${options.concurrent} claims per kind, ${options.inFlight} in flight. ${decided.length} GETs on decided claims.${options.timers ? ` Timer path: ${fired()} step timers of ${claims} claims, waited ${Math.round(timersWaitedMs / 1000)} s; their event source gathered for up to ${TIMER_BATCHING_WINDOW_SECONDS} s: ${timerInvocations()} invocations, ${timerPoller().receivesWithMessages - timerPollerAtStart.receives} receives that returned timers, ${timerPoller().deleteCalls - timerPollerAtStart.deletes} DeleteMessageBatch calls.` : " Timer path not measured (AWS_REQUESTS_TIMERS=0)."}`,
      sequential: { structured: find("structured", "sequential"), free_text: find("free_text", "sequential") },
      concurrent: {
        structured: withOwnCpu(find("structured", "concurrent"), find("structured", "sequential")),
        free_text: withOwnCpu(find("free_text", "concurrent"), find("free_text", "sequential")),
      },
      ...(timerPath ? { timerPath } : {}),
      poll,
      stored,
      logs,
      logging: DEPLOYED_LOGGING,
    };
    await mkdir(dirname(outFile), { recursive: true });
    await writeFile(outFile, `${JSON.stringify(file, null, 2)}\n`, "utf8");
    return { file, phases: measured, timersFired: fired(), timersWaitedMs };
  } finally {
    restoreLogs();
    for (const u of uncount) u();
    await b.stop();
  }
}

/**
 * The timer path with the SQS requests its windowed event source made per claim: the receives that returned
 * timers (a timer's arrival ends a long poll) and the DeleteMessageBatch calls (bench/cost.ts prices them).
 */
function withEventSource(path: ClaimProfile, perClaim: { receives: number; deletes: number }): ClaimProfile {
  const timer = path.invocations.timer;
  if (!timer) return path;
  return {
    ...path,
    invocations: {
      ...path.invocations,
      timer: { ...timer, eventSourceReceives: perClaim.receives, eventSourceDeletes: perClaim.deletes },
    },
  };
}

const r2 = (x: number) => Math.round(x * 100) / 100;
const r1 = (x: number) => Math.round(x * 10) / 10;
const flat = (p: ClaimProfile | undefined) => {
  const out: Record<string, number> = {};
  for (const [service, ops] of Object.entries(p?.requests ?? {}))
    for (const [op, n] of Object.entries(ops)) out[`${service} ${op}`] = n;
  return out;
};
const total = (o: Record<string, number>) => r2(Object.values(o).reduce((a, b) => a + b, 0));

/** The markdown section of one run. */
export function report(run: AwsRequestsRun): string {
  const { file } = run;
  const requestRows = (mode: "sequential" | "concurrent"): TableRow[] => {
    const cols = {
      structured: flat(file[mode].structured),
      "free text": flat(file[mode].free_text),
      "+ timer path": flat(file.timerPath),
      "one GET": flat(file.poll),
    };
    const keys = [...new Set(Object.values(cols).flatMap((c) => Object.keys(c)))].sort();
    const rows: TableRow[] = keys.map((k) => ({
      "service operation": k,
      ...Object.fromEntries(Object.entries(cols).map(([name, c]) => [name, r2(c[k] ?? 0)])),
    }));
    rows.push({
      "service operation": "**total**",
      ...Object.fromEntries(Object.entries(cols).map(([name, c]) => [name, total(c)])),
    });
    return rows;
  };
  const byFunctionRows: TableRow[] = [];
  const fnRow = (claim: string, fn: FunctionKey, u: InvocationUsage, loaded?: InvocationUsage): TableRow => ({
    claim,
    function: fn,
    "records/claim": r2(u.records),
    "invocations/claim (one at a time)": r2(u.invocations),
    "records/invocation under load": loaded ? r2(loaded.records / loaded.invocations) : "",
    "handler ms/claim (local wall)": r1(u.handlerMs),
    "of which SDK ms": r1(u.sdkMs),
    "own CPU ms/claim": r2(u.cpuMs),
    "log lines/claim (success lines)": `${r2(u.logLines)} (${r2(u.successLines ?? 0)})`,
    "log bytes/claim": Math.round(u.logBytes),
    "EMF metric lines / bytes per claim": `${r2(u.metricLines ?? 0)} / ${Math.round(u.metricBytes ?? 0)}`,
    "data-key lookups/claim (new keys; invocations with a lookup; subjects found per invocation / per function)": `${r2(u.keyLookups ?? 0)} (${r2(u.keysMade ?? 0)}; ${r2(u.keyInvocations ?? 0)}; ${r2(u.keyDecryptsPerInvocation ?? 0)} / ${r2(u.keyDecryptsPerFunction ?? 0)})`,
  });
  for (const kind of ["structured", "free_text"] as const) {
    for (const [fn, u] of Object.entries(file.sequential[kind].invocations) as [FunctionKey, InvocationUsage][])
      byFunctionRows.push(fnRow(kind, fn, u, file.concurrent[kind].invocations[fn]));
  }
  for (const [fn, u] of Object.entries(file.timerPath?.invocations ?? {}) as [FunctionKey, InvocationUsage][])
    byFunctionRows.push(fnRow("timer path", fn, u, u));
  for (const [fn, u] of Object.entries(file.poll.invocations) as [FunctionKey, InvocationUsage][])
    byFunctionRows.push(fnRow("one GET", fn, u));

  const dynamoRows: TableRow[] = [];
  for (const kind of ["structured", "free_text"] as const) {
    for (const [entity, u] of Object.entries(file.concurrent[kind].dynamo).sort(([a], [b]) => a.localeCompare(b))) {
      dynamoRows.push({
        claim: kind,
        entity,
        "reads/claim": r2(u.reads),
        "RRU/claim": r2(u.rru),
        "writes/claim": r2(u.writes),
        "WRU/claim": r2(u.wru),
        "gsi1 WRU/claim": r2(u.gsiWru),
        "failed conditions/claim": r2(u.conditionalFailures),
      });
    }
  }
  const storedRows: TableRow[] = Object.entries(file.stored)
    .sort(([, a], [, b]) => b.bytes - a.bytes)
    .map(([entity, u]) => ({
      entity,
      "items/claim": r2(u.items),
      "bytes/claim": Math.round(u.bytes),
      "gsi1 entries/claim": r2(u.indexItems),
      "gsi1 bytes/claim": Math.round(u.indexBytes),
      "of which with a TTL (items / bytes)": `${r2(u.expiringItems ?? 0)} / ${Math.round(u.expiringBytes ?? 0)}`,
    }));
  const crossRows: TableRow[] = run.phases.map((ph) => ({
    phase: `${ph.kind} ${ph.mode}`,
    claims: ph.claims,
    "all requests counted (countRequests)": ph.counted.total,
    "by handlers / claim": total(flat(ph.profile)),
    "outside handlers (pollers, drain checks)": Object.entries(ph.outside)
      .map(([k, v]) => `${k} ${v}`)
      .join(", "),
  }));

  return [
    "## AWS requests per claim (bench/aws-requests.bench.ts)",
    "",
    `${file.note} Recorded ${file.recordedAt} at ${file.commit} on ${file.machine}; written to \`bench/out/aws-requests.json\` for bench/cost.ts.`,
    "",
    "- Counted by an `initialize`-step SDK middleware on the stack's three clients that attributes each request to the handler invocation it ran in (AsyncLocalStorage) and reads DynamoDB consumed capacity (`ReturnConsumedCapacity: INDEXES`); `countRequests` (adapters/aws) counts the same clients as a cross-check. The pollers' ReceiveMessage/DeleteMessageBatch (Lambda's event source mapping on AWS; cost.ts prices one of each per invocation, and the timers' as their windowed poller made them) and the harness's drain checks are outside any handler and listed apart.",
    `- **Timer path**: the step-deadline timer of each claim fires 120 s after its step was requested and waits in the timers' event source, which gathers timers for up to ${TIMER_BATCHING_WINDOW_SECONDS} s into batches of up to ${eventSourceBatch("timers").size} (app/manifest.ts; the local poller plays it as Lambda does: the window opens at a batch's first record, and as many batches gather at once as Lambda may invoke); the timer function finds each claim final with nothing left in its session and drops its timer (before issue 13: a crew.tick through crew-events, and the orchestrator found the step done). **One GET**: \`GET /claims/{id}\` on a decided claim through the intake-api handler, as a polling client causes it (per GET).`,
    `- **Log lines**: what the handlers' Powertools loggers wrote at ${file.logs.level}, captured from stdout/stderr and attributed to the invocation that wrote them (${file.logs.lines} lines, ${file.logs.bytes} bytes, ${file.logs.gzipBytes} gzipped; ${file.logs.outsideLines} outside any invocation).`,
    "",
    "### Requests per claim, one at a time",
    "",
    formatTable(requestRows("sequential")),
    "",
    "### Requests per claim under load (in flight)",
    "",
    formatTable(requestRows("concurrent")),
    "",
    "### Invocations, handler time and log output per claim, by function",
    "",
    formatTable(byFunctionRows),
    "",
    "### DynamoDB per claim by entity (under load; capacity as dynalite reports it, gsi1 writes estimated from the written item)",
    "",
    formatTable(dynamoRows),
    "",
    "### Stored per claim after the run",
    "",
    formatTable(storedRows),
    "",
    "### Cross-check",
    "",
    formatTable(crossRows),
  ].join("\n");
}

/** Counts on the local stack, writes bench/out/aws-requests.json, returns the markdown section. */
export async function run(): Promise<string> {
  return report(await countAwsRequests());
}
