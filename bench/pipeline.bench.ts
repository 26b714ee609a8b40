// The pipeline on the local stack beside the same pipeline in process (issues 4, 13): CPU per claim of
// each, taking turns round by round, and what the stack gives a caller — claims per second and
// submit-to-decided latency, one at a time and with claims in flight. Rules model, system clock.
// The stack: dynalite, fauxqs and the local bus in this process, the production handlers behind one
// poller per queue with the infra batch sizes; claims enter through the intake-api handler (lib/stack.ts).
import { systemClock } from "../core/crew/index.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { loadConfig } from "../functions/composition/config-file.ts";
import { CONFIG_PATH } from "../local/testing/stack-fixture.ts";
import { createInMemoryClaimRepository } from "../pipeline/in-memory.ts";
import { createInProcessPipeline } from "../pipeline/in-process.ts";
import type { ClaimRepository } from "../pipeline/ports.ts";
import { benchOrders, claimBody } from "./lib/claims.ts";
import { compare, envIntReader, formatTable, interleave, quantileOf, ratioText } from "./lib/harness.ts";
import type { Contender, ContenderResult, TableRow } from "./lib/harness.ts";
import type { ClaimKind } from "./lib/profile.ts";
import { checkPhase, runPhase, startBenchStack } from "./lib/stack.ts";
import type { BenchStack, Phase } from "./lib/stack.ts";

/** Sizes of one run. */
export type PipelineBenchOptions = { rounds: number; claims: number; inFlight: number; sequential: number };

/** Defaults: 3 timed rounds (after one warm-up round) of 50 claims with 10 in flight and 10 one at a time, per kind; PIPELINE_BENCH_* override them. */
export function pipelineBenchOptions(
  env: Readonly<Record<string, string | undefined>> = process.env,
): PipelineBenchOptions {
  const num = envIntReader("pipeline", env);
  return {
    rounds: num("PIPELINE_BENCH_ROUNDS", 3, 1),
    claims: num("PIPELINE_BENCH_CLAIMS", 50, 1),
    inFlight: num("PIPELINE_BENCH_IN_FLIGHT", 10, 2),
    sequential: num("PIPELINE_BENCH_SEQUENTIAL", 10, 1),
  };
}

/** A claim repository that notes when each claim becomes DECIDED or NEEDS_REVIEW. */
function timedClaims(): { repo: ClaimRepository; finalAt: Map<string, number> } {
  const inner = createInMemoryClaimRepository();
  const finalAt = new Map<string, number>();
  const repo: ClaimRepository = {
    createClaim: (record, idem) => inner.createClaim(record, idem),
    getClaim: (id) => inner.getClaim(id),
    listClaims: (query) => inner.listClaims(query),
    async updateClaim(id, patch, onlyFrom) {
      const result = await inner.updateClaim(id, patch, onlyFrom);
      if (result.changed && (patch.status === "DECIDED" || patch.status === "NEEDS_REVIEW"))
        finalAt.set(id, performance.now());
      return result;
    },
  };
  return { repo, finalAt };
}

/** One in-process round: `n` claims of `kind` submitted and drained one at a time ("sequential") or all submitted then drained ("batch"). */
export type InProcessResult = {
  kind: ClaimKind;
  mode: "sequential" | "batch";
  claims: number;
  wallMs: number;
  latenciesMs: number[];
};

/**
 * A fresh in-process pipeline (in-memory ports, the same services, the rules model) with an order per
 * claim: `run()` submits and drains (the part that is timed), `result()` then checks every claim ended
 * DECIDED ACCEPT and gives each one's latency. Call each once.
 */
export function inProcessRound(
  kind: ClaimKind,
  n: number,
  mode: InProcessResult["mode"],
): { run: () => Promise<void>; result: () => Promise<InProcessResult> } {
  const clock = systemClock();
  const config = loadConfig(CONFIG_PATH, clock.now());
  const orders = benchOrders(kind, n, clock.now());
  const llm = createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility });
  const { repo, finalAt } = timedClaims();
  const p = createInProcessPipeline({ agent: config.agent, orders, llm, clock, overrides: { claims: repo } });
  const submitted: { id: string; at: number }[] = [];
  let wallMs = 0;
  return {
    async run() {
      const started = performance.now();
      for (const o of orders) {
        const at = performance.now();
        const r = await p.submit(claimBody(kind, o.order_id));
        if (!r.ok) throw new Error(`pipeline bench: the in-process pipeline refused a claim: ${r.code}`);
        submitted.push({ id: r.claimId, at });
        if (mode === "sequential") await p.drain();
      }
      if (mode === "batch") await p.drain();
      wallMs = performance.now() - started;
    },
    async result() {
      const latenciesMs: number[] = [];
      for (const s of submitted) {
        const record = await repo.getClaim(s.id);
        const at = finalAt.get(s.id);
        if (record?.status !== "DECIDED" || record.verdict !== "ACCEPT" || at === undefined) {
          throw new Error(
            `pipeline bench: in-process claim ${s.id} (${kind}) ended ${record?.status ?? "missing"} ${record?.verdict ?? ""}, expected DECIDED ACCEPT`,
          );
        }
        latenciesMs.push(at - s.at);
      }
      if (latenciesMs.length !== n)
        throw new Error(`pipeline bench: ${latenciesMs.length} of ${n} in-process claims were submitted`);
      return { kind, mode, claims: n, wallMs, latenciesMs };
    },
  };
}

/** A contender running in-process rounds (built before each sample, checked after it); every round's result is kept. */
function inProcessContender(
  kind: ClaimKind,
  n: number,
  mode: InProcessResult["mode"],
  results: InProcessResult[],
): Contender {
  let round: ReturnType<typeof inProcessRound> | undefined;
  return {
    name: `in-process ${kind} ${mode}`,
    unitsPerOp: n,
    opsPerSample: 1,
    before: () => void (round = inProcessRound(kind, n, mode)),
    op: () => round!.run(),
    after: async () => void results.push(await round!.result()),
  };
}

/** A contender running stack phases on fresh orders (checked after each sample); every phase is kept. */
function stackContender(
  b: BenchStack,
  kind: ClaimKind,
  inFlight: number,
  nextOrders: () => ReturnType<typeof benchOrders>,
  phases: Phase[],
  n: number,
): Contender {
  let last: Phase | undefined;
  return {
    name: `stack ${kind} ${inFlight === 1 ? "one at a time" : `${inFlight} in flight`}`,
    unitsPerOp: n,
    opsPerSample: 1,
    op: async () => (last = await runPhase(b, kind, nextOrders(), inFlight)),
    after: async () => {
      await checkPhase(b, last!);
      phases.push(last!);
    },
  };
}

type KindResult = {
  kind: ClaimKind;
  measured: {
    stackLoad: ContenderResult;
    inProcessBatch: ContenderResult;
    stackSeq: ContenderResult;
    inProcessSeq: ContenderResult;
  };
  stackLoad: Phase[];
  stackSeq: Phase[];
  inProcessBatch: InProcessResult[];
  inProcessSeq: InProcessResult[];
};

const ms = (ns: number) => Number((ns / 1e6).toFixed(ns >= 1e8 ? 0 : ns >= 1e7 ? 1 : 2));
const r1 = (x: number) => Math.round(x * 10) / 10;

/** Runs the comparison for both kinds on one stack and returns the markdown section. */
export async function run(options: PipelineBenchOptions = pipelineBenchOptions()): Promise<string> {
  const kinds: ClaimKind[] = ["structured", "free_text"];
  const now = Date.now();
  const rounds = options.rounds + 1; // one warm-up round
  // One order per claim: for each kind, `rounds` blocks for the in-flight phases, then `rounds` for the one-at-a-time ones.
  const orders = Object.fromEntries(
    kinds.map((kind) => [kind, benchOrders(kind, rounds * (options.claims + options.sequential), now)]),
  );
  const b = await startBenchStack(kinds.flatMap((kind) => orders[kind]!));
  const results: KindResult[] = [];
  try {
    for (const kind of kinds) {
      const all = orders[kind]!;
      const block = (start: number, size: number) => {
        let taken = 0;
        return () => all.slice(start + size * taken, start + size * ++taken);
      };
      const loadOrders = block(0, options.claims);
      const seqOrders = block(rounds * options.claims, options.sequential);
      const r: Omit<KindResult, "measured"> = {
        kind,
        stackLoad: [],
        stackSeq: [],
        inProcessBatch: [],
        inProcessSeq: [],
      };
      const measured = await interleave(
        [
          stackContender(b, kind, options.inFlight, loadOrders, r.stackLoad, options.claims),
          inProcessContender(kind, options.claims, "batch", r.inProcessBatch),
          stackContender(b, kind, 1, seqOrders, r.stackSeq, options.sequential),
          inProcessContender(kind, options.sequential, "sequential", r.inProcessSeq),
        ],
        { rounds: options.rounds, warmupRounds: 1 },
      );
      const [stackLoad, inProcessBatch, stackSeq, inProcessSeq] = measured as [
        ContenderResult,
        ContenderResult,
        ContenderResult,
        ContenderResult,
      ];
      // The warm-up round's phases are not part of the figures.
      results.push({
        ...r,
        stackLoad: r.stackLoad.slice(1),
        stackSeq: r.stackSeq.slice(1),
        inProcessBatch: r.inProcessBatch.slice(1),
        inProcessSeq: r.inProcessSeq.slice(1),
        measured: { stackLoad, inProcessBatch, stackSeq, inProcessSeq },
      });
    }
  } finally {
    await b.stop();
  }

  const cpuRows: TableRow[] = results.flatMap(({ kind, measured: m }) => [
    {
      claim: kind,
      mode: `${options.claims} claims, ${options.inFlight} in flight (in process: submitted, then drained)`,
      "stack CPU ms/claim (low)": ms(m.stackLoad.lowCpuNs),
      "in-process CPU ms/claim (low)": ms(m.inProcessBatch.lowCpuNs),
      "stack ÷ in-process (per-round range)": ratioText(compare(m.stackLoad, m.inProcessBatch)),
    },
    {
      claim: kind,
      mode: `${options.sequential} claims one at a time`,
      "stack CPU ms/claim (low)": ms(m.stackSeq.lowCpuNs),
      "in-process CPU ms/claim (low)": ms(m.inProcessSeq.lowCpuNs),
      "stack ÷ in-process (per-round range)": ratioText(compare(m.stackSeq, m.inProcessSeq)),
    },
  ]);
  const callerRows: TableRow[] = results.flatMap((k): TableRow[] => {
    const cps = (phases: readonly { claimIds?: string[]; claims?: number; wallMs: number }[]) =>
      phases.map((p) => ((p.claimIds?.length ?? p.claims ?? 0) / p.wallMs) * 1000);
    const lat = (phases: readonly { latenciesMs: number[] }[]) => phases.flatMap((p) => p.latenciesMs);
    const range = (xs: number[]) => `${r1(Math.min(...xs))}–${r1(Math.max(...xs))}`;
    const pq = (xs: number[], q: number) => r1(quantileOf(xs, q));
    return [
      {
        claim: k.kind,
        mode: `${options.inFlight} in flight`,
        "stack claims/s (rounds)": range(cps(k.stackLoad)),
        "stack p50 / p95 ms": `${pq(lat(k.stackLoad), 0.5)} / ${pq(lat(k.stackLoad), 0.95)}`,
        "in-process claims/s (rounds)": range(cps(k.inProcessBatch)),
      },
      {
        claim: k.kind,
        mode: "one at a time",
        "stack claims/s (rounds)": range(cps(k.stackSeq)),
        "stack p50 / p95 ms": `${pq(lat(k.stackSeq), 0.5)} / ${pq(lat(k.stackSeq), 0.95)}`,
        "in-process claims/s (rounds)": range(cps(k.inProcessSeq)),
        "in-process p50 / p95 ms": `${Number(quantileOf(lat(k.inProcessSeq), 0.5).toFixed(2))} / ${Number(quantileOf(lat(k.inProcessSeq), 0.95).toFixed(2))}`,
      },
    ];
  });

  return [
    "## Pipeline: local stack beside in process (bench/pipeline.bench.ts)",
    "",
    "Definitions:",
    "- **local stack**: `startLocalStack` — dynalite, fauxqs and the local EventBridge in this process, the production handlers of functions/ behind one poller per queue with the infra batch sizes (2 receive loops each), rules model, system clock, handler logs off. Claims enter through the intake-api handler with API Gateway v2 events (`POST /claims`; no HTTP server, no authorizer). A claim is **decided** when the kernel handler has finished the batch holding its proposal (the record is DECIDED then); every claim is an ACCEPT on its own order and is checked after each sample.",
    "- **in process**: `createInProcessPipeline` — the same services on in-memory ports, same rules model; built before each sample, checked after it.",
    `- **Timing**: per claim kind, four contenders take turns (${options.rounds} rounds after one warm-up round, the order rotating): the stack with ${options.inFlight} claims in flight (${options.claims} claims, each slot submitting its next claim when its last one is decided, until the stack is drained), the in-process pipeline on ${options.claims} claims (all submitted, then drained), and both one at a time (${options.sequential} claims). **CPU ms/claim** = process CPU time (\`process.cpuUsage\`: handlers, emulators, pollers, GC — everything the stack costs this machine) ÷ claims; **low** = the lowest round, the quoted figure; the ratio is quoted from the low ends with the per-round range in brackets.`,
    "- **claims/s** = claims ÷ (last decided − first submit), wall time, per round (range over the rounds); **latency** = submit to decided, over every claim of the timed rounds. These are wall-clock figures on a shared machine.",
    "- **free text** adds the extraction queue and the intake-extract function (one rules-model extraction) before the crew.",
    "",
    "### CPU per claim",
    "",
    formatTable(cpuRows),
    "",
    "### What a caller sees (wall time)",
    "",
    formatTable(callerRows),
  ].join("\n");
}
