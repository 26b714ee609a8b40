// `claims serve` driven over HTTP like a client (issue 13): a child process started as a user starts it,
// claims POSTed with an Idempotency-Key and polled with GET /claims/{id} until final, `inFlight` at a
// time; what a caller sees (claims per second, submit-to-final latency as polled) and what the server's
// process tree spends per claim in CPU, beside the same claims through the in-process pipeline, the two
// taking turns round by round. Rules model, system clock, structured claims, every one an ACCEPT on its
// own order.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Order } from "../core/integrity/index.ts";
import { benchOrders, claimBody } from "./lib/claims.ts";
import { compare, envIntReader, formatTable, interleave, processMeter, quantileOf, ratioText } from "./lib/harness.ts";
import type { Contender, ContenderResult, TableRow } from "./lib/harness.ts";
import { startServe, writeServeConfig } from "./lib/serve.ts";
import type { ServeProcess } from "./lib/serve.ts";
import { inProcessRound } from "./pipeline.bench.ts";
import type { InProcessResult } from "./pipeline.bench.ts";

/** The goal of issue 13 for the local stack over HTTP at 10 claims in flight. */
export const HTTP_GOAL = { claimsPerSecond: 20, p95Ms: 1000 } as const;

/** Sizes of one run. */
export type HttpBenchOptions = { rounds: number; claims: number; inFlight: number; sequential: number };

/** Defaults: 3 timed rounds (after one warm-up round) of 60 claims with 10 in flight and 10 one at a time; HTTP_BENCH_* override them. */
export function httpBenchOptions(env: Readonly<Record<string, string | undefined>> = process.env): HttpBenchOptions {
  const num = envIntReader("http", env);
  return {
    rounds: num("HTTP_BENCH_ROUNDS", 3, 1),
    claims: num("HTTP_BENCH_CLAIMS", 60, 1),
    inFlight: num("HTTP_BENCH_IN_FLIGHT", 10, 2),
    sequential: num("HTTP_BENCH_SEQUENTIAL", 10, 1),
  };
}

/** How a client polls: first after 50 ms, then doubling up to every 250 ms. */
export const POLL_DELAYS_MS = { first: 50, max: 250 } as const;

/** One HTTP phase: the claims, each one's latency (POST sent → final status read), wall time, and the requests made. */
export type HttpPhase = { claimIds: string[]; latenciesMs: number[]; wallMs: number; gets: number };

/** Submits one claim per order, `inFlight` at a time (a slot submits its next claim once its last one is final), polling each until final. */
export async function httpPhase(
  serve: ServeProcess,
  orders: readonly Order[],
  inFlight: number,
  key: string,
): Promise<HttpPhase> {
  const claimIds: string[] = [];
  const latenciesMs: number[] = [];
  let gets = 0;
  let next = 0;
  const started = performance.now();
  let lastFinal = started;
  const slot = async () => {
    while (next < orders.length) {
      const i = next++;
      const order = orders[i]!;
      const at = performance.now();
      const posted = await serve.api("POST", "/claims", claimBody("structured", order.order_id), {
        "idempotency-key": `${key}-${order.order_id}`,
      });
      const claimId = posted.body.claim_id;
      if (posted.status !== 202 || typeof claimId !== "string")
        throw new Error(
          `http bench: POST /claims answered ${posted.status} ${JSON.stringify(posted.body).slice(0, 300)}`,
        );
      claimIds.push(claimId);
      for (let wait: number = POLL_DELAYS_MS.first; ; wait = Math.min(POLL_DELAYS_MS.max, wait * 2)) {
        await sleep(wait);
        const got = await serve.api("GET", `/claims/${claimId}`);
        gets++;
        if (got.status !== 200) throw new Error(`http bench: GET /claims/${claimId} answered ${got.status}`);
        if (got.body.status === "DECIDED" || got.body.status === "NEEDS_REVIEW") {
          // The full path (issue 37): every claim an ACCEPT whose refund was executed (reserved and sent to be paid).
          if (got.body.verdict !== "ACCEPT" || got.body.executed !== true)
            throw new Error(
              `http bench: claim ${claimId} ended ${String(got.body.status)} ${String(got.body.verdict)} ${String(got.body.reason_code)} executed=${String(got.body.executed)}, expected DECIDED ACCEPT with its refund executed`,
            );
          const now = performance.now();
          latenciesMs.push(now - at);
          lastFinal = Math.max(lastFinal, now);
          break;
        }
        if (performance.now() - at > 120_000)
          throw new Error(`http bench: claim ${claimId} was not final within 120 s`);
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, slot));
  return { claimIds, latenciesMs, wallMs: lastFinal - started, gets };
}

/** Clock ticks per second of /proc times (USER_HZ). */
const TICKS_PER_SECOND = 100;

/** The threads of `claims serve` the table tells apart (local/dynalite-worker.mjs and local/sqs-worker.mjs name theirs in /proc); V8's and libuv's helpers are "other". */
export const SERVE_THREADS = ["main", "dynalite", "fauxqs", "handlers", "other"] as const;
export type ServeThread = (typeof SERVE_THREADS)[number];

/** CPU nanoseconds by thread of process `pid` from its tasks' stat lines ([tid, line]): the thread whose id is the pid is "main". */
export function threadCpuNs(pid: number, tasks: readonly (readonly [number, string])[]): Record<ServeThread, number> {
  const out = Object.fromEntries(SERVE_THREADS.map((t) => [t, 0])) as Record<ServeThread, number>;
  for (const [tid, line] of tasks) {
    const open = line.indexOf("(");
    const close = line.lastIndexOf(")");
    if (open < 0 || close < open) continue;
    const name = line.slice(open + 1, close);
    const f = line.slice(close + 2).split(" ");
    // After the name: state(3) … utime(14) stime(15); f[0] is field 3.
    const ticks = Number(f[11]) + Number(f[12]);
    if (!Number.isFinite(ticks)) continue;
    const thread: ServeThread =
      tid === pid ? "main" : (SERVE_THREADS as readonly string[]).includes(name) ? (name as ServeThread) : "other";
    out[thread] += (ticks / TICKS_PER_SECOND) * 1e9;
  }
  return out;
}

/** The threads of process `pid` now (Linux; none elsewhere). */
function readThreads(pid: number): Record<ServeThread, number> {
  const tasks: [number, string][] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`))
      try {
        tasks.push([Number(tid), readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8")]);
      } catch {
        // the thread ended meanwhile
      }
  } catch {
    // no /proc
  }
  return threadCpuNs(pid, tasks);
}

type Phases = {
  http: HttpPhase[];
  clientCpuNs: number[];
  inProcess: InProcessResult[];
  threads: Record<ServeThread, number>[];
};

/** The server over HTTP as a contender: its process tree's CPU is what a sample costs; this process (the client) is measured apart. */
function httpContender(
  serve: ServeProcess,
  nextOrders: () => Order[],
  inFlight: number,
  n: number,
  kept: Phases,
  label: string,
): Contender {
  let clientStart = 0;
  let threadsStart = readThreads(serve.pid);
  return {
    name: `claims serve over HTTP, ${label}`,
    unitsPerOp: n,
    opsPerSample: 1,
    meter: () => ({ cpuNs: serve.cpuNs(), wallNs: performance.now() * 1e6 }),
    before: () => {
      clientStart = processMeter().cpuNs;
      threadsStart = readThreads(serve.pid);
    },
    op: async () => void kept.http.push(await httpPhase(serve, nextOrders(), inFlight, label.replace(/\W+/g, "-"))),
    after: () => {
      kept.clientCpuNs.push((processMeter().cpuNs - clientStart) / n);
      const now = readThreads(serve.pid);
      kept.threads.push(
        Object.fromEntries(SERVE_THREADS.map((t) => [t, (now[t] - threadsStart[t]) / n])) as Record<
          ServeThread,
          number
        >,
      );
    },
  };
}

function inProcessContender(n: number, mode: InProcessResult["mode"], kept: Phases): Contender {
  let round: ReturnType<typeof inProcessRound> | undefined;
  return {
    name: `in-process pipeline, ${mode}`,
    unitsPerOp: n,
    opsPerSample: 1,
    before: () => void (round = inProcessRound("structured", n, mode)),
    op: () => round!.run(),
    after: async () => void kept.inProcess.push(await round!.result()),
  };
}

const ms = (ns: number) => Number((ns / 1e6).toFixed(ns >= 1e8 ? 0 : ns >= 1e7 ? 1 : 2));
const r1 = (x: number) => Math.round(x * 10) / 10;
/** Each thread's lowest round, `main / dynalite / fauxqs / other` (with the handler thread's when it ran). */
const threadsText = (rounds: readonly Record<ServeThread, number>[]): string => {
  if (rounds.length === 0) return "–";
  const low = (t: ServeThread) => Math.min(...rounds.map((r) => r[t]));
  const shown = SERVE_THREADS.filter((t) => t !== "handlers" || low(t) > 0);
  return shown.map((t) => `${t === "handlers" ? "handlers " : ""}${ms(low(t))}`).join(" / ");
};

/** Runs the HTTP bench (a fresh `claims serve` on a temporary config and data directory) and returns its markdown section. */
export async function run(options: HttpBenchOptions = httpBenchOptions()): Promise<string> {
  const rounds = options.rounds + 1; // one warm-up round
  const dir = mkdtempSync(join(tmpdir(), "claims-http-bench-"));
  const orders = benchOrders("structured", rounds * (options.claims + options.sequential) + 10, Date.now());
  const configPath = join(dir, "config.yaml");
  writeServeConfig(configPath, orders);
  // HTTP_BENCH_NODE_ARGS: node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
  const nodeArgs = process.env.HTTP_BENCH_NODE_ARGS?.split(" ").filter(Boolean);
  const serve = await startServe({ configPath, dataDir: join(dir, "data"), ...(nodeArgs ? { nodeArgs } : {}) });
  const load: Phases = { http: [], clientCpuNs: [], inProcess: [], threads: [] };
  const seq: Phases = { http: [], clientCpuNs: [], inProcess: [], threads: [] };
  let measured: ContenderResult[];
  try {
    // Ten claims first: the server's JIT and the emulators warm up.
    await httpPhase(serve, orders.slice(0, 10), 1, "warm-up");
    const block = (start: number, size: number) => {
      let taken = 0;
      return () => orders.slice(start + size * taken, start + size * ++taken);
    };
    measured = await interleave(
      [
        httpContender(
          serve,
          block(10, options.claims),
          options.inFlight,
          options.claims,
          load,
          `${options.inFlight} in flight`,
        ),
        inProcessContender(options.claims, "batch", load),
        httpContender(
          serve,
          block(10 + rounds * options.claims, options.sequential),
          1,
          options.sequential,
          seq,
          "one at a time",
        ),
        inProcessContender(options.sequential, "sequential", seq),
      ],
      { rounds: options.rounds, warmupRounds: 1 },
    );
  } finally {
    await serve.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  // The warm-up round's phases are not part of the figures.
  for (const p of [load, seq]) {
    p.http.shift();
    p.clientCpuNs.shift();
    p.threads.shift();
    p.inProcess.shift();
  }
  const [httpLoad, inLoad, httpSeq, inSeq] = measured as [
    ContenderResult,
    ContenderResult,
    ContenderResult,
    ContenderResult,
  ];
  const cps = (phases: readonly HttpPhase[]) => phases.map((p) => (p.claimIds.length / p.wallMs) * 1000);
  const lat = (phases: readonly HttpPhase[]) => phases.flatMap((p) => p.latenciesMs);
  const best = Math.max(...cps(load.http));
  const p95 = quantileOf(lat(load.http), 0.95);
  const goalRow: TableRow = {
    goal: `≥ ${HTTP_GOAL.claimsPerSecond} claims/s and p95 < ${HTTP_GOAL.p95Ms} ms at ${options.inFlight} in flight`,
    measured: `${r1(Math.min(...cps(load.http)))}–${r1(best)} claims/s, p95 ${Math.round(p95)} ms`,
    status: best >= HTTP_GOAL.claimsPerSecond && p95 < HTTP_GOAL.p95Ms ? "met" : "MISSED",
  };
  const rows: TableRow[] = [
    {
      mode: `${options.claims} claims, ${options.inFlight} in flight`,
      phases: load.http,
      client: load.clientCpuNs,
      threads: load.threads,
      http: httpLoad,
      inProcess: inLoad,
    },
    {
      mode: `${options.sequential} claims one at a time`,
      phases: seq.http,
      client: seq.clientCpuNs,
      threads: seq.threads,
      http: httpSeq,
      inProcess: inSeq,
    },
  ].map((r) => ({
    mode: r.mode,
    "claims/s (rounds)": `${r1(Math.min(...cps(r.phases)))}–${r1(Math.max(...cps(r.phases)))}`,
    "p50 / p95 ms (polled)": `${Math.round(quantileOf(lat(r.phases), 0.5))} / ${Math.round(quantileOf(lat(r.phases), 0.95))}`,
    "GETs per claim": r1(
      r.phases.reduce((n, p) => n + p.gets, 0) / r.phases.reduce((n, p) => n + p.claimIds.length, 0),
    ),
    "server CPU ms/claim (low)": ms(r.http.lowCpuNs),
    "server CPU by thread, ms/claim (low round): main / dynalite / fauxqs / other": threadsText(r.threads),
    "client CPU ms/claim (low)": ms(Math.min(...r.client)),
    "in-process CPU ms/claim (low)": ms(r.inProcess.lowCpuNs),
    "server ÷ in-process (per-round range)": ratioText(compare(r.http, r.inProcess)),
  }));
  return [
    "## claims serve over HTTP beside the in-process pipeline (bench/http.bench.ts)",
    "",
    "Definitions:",
    "- **claims serve**: `node bin/claims.mjs serve --port 0` as a child process (a temporary data directory; `scenarios/config.yaml` with one order per bench claim added), rules model, system clock, log level ERROR (its one stdout line per HTTP request is kept: that is the product). A client in this process POSTs each claim (`{ claim }`, an `Idempotency-Key`) and polls `GET /claims/{id}` (first after 50 ms, then doubling to every 250 ms) until it reads DECIDED; every claim must be an ACCEPT with its refund executed (the full path). `inFlight` slots each submit their next claim once the last one is final.",
    "- **in process**: `createInProcessPipeline` (in-memory ports, the same services and rules model) on the same number of claims, built before each sample.",
    "- **server CPU by thread**: the same CPU from /proc/<pid>/task: the main thread (HTTP front, handlers, SDK, bus), dynalite's and fauxqs's threads (named in /proc), V8's and libuv's helper threads (GC, compiler, LevelDB's jobs) as other; each the lowest round.",
    `- **Timing**: four contenders take turns (${options.rounds} rounds after a warm-up round, the order rotating). **server CPU** = CPU time of the serve process tree (/proc: the server, its threads, any process it starts) during the sample ÷ claims; **client CPU** = this process's (fetch, polling); **in-process CPU** = this process's; low = the lowest round. **claims/s** = claims ÷ (last final read − first POST), wall; **latency** = POST sent → final status read, so it includes up to one polling interval.`,
    "",
    formatTable([goalRow]),
    "",
    formatTable(rows),
  ].join("\n");
}
