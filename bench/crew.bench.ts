// Crew engine benchmark (issue 2): per delivered step, what the engine costs and how big its
// snapshot is, for (a) the two-phase claims crew, (b) one 64-agent phase with majority voting and
// (c) a 3-level nested crew; each run once with an in-memory session (`deliver` alone) and once
// the way the serverless orchestrator runs it (`stepCrewMany` with a JSON snapshot round trip around every step).
// (a) and (b) are also run with LangGraph.js in the same process, taking turns with ours in CPU time.
import { claimsCrewGraph } from "../core/agents/crew.ts";
import {
  buildCrewGraph,
  createCrewSession,
  createInMemoryMemory,
  frozenClock,
  initialCrewSnapshot,
  stepCrewMany,
} from "../core/crew/index.ts";
import type {
  AgentStepRequestedEvent,
  CrewGraph,
  CrewMemoryAdapter,
  CrewStatus,
  FrozenClock,
  InboundCrewEvent,
  JsonValue,
  OutboundCrewEvent,
} from "../core/crew/index.ts";
import { compare, formatTable, interleave, ratioText, us } from "./lib/harness.ts";
import type { Contender, ContenderResult, TableRow } from "./lib/harness.ts";
import {
  ANALYST_OUTPUT,
  CLAIM_INPUT,
  DECISION_OUTPUT,
  MAJORITY64_AGENTS,
  MAJORITY_OUTPUT,
  cannedAgentOutput,
  prepareLangGraph,
} from "./langgraph-baseline.ts";
import type { LangGraphBench, LangGraphTopology } from "./langgraph-baseline.ts";

/** The three crews of the benchmark. */
export type CrewBenchKey = "claims" | "majority64" | "nested3";

/** How a run drives the engine. */
export type CrewBenchMode = "deliver" | "roundtrip";

/** One benchmark crew: its graph, root input, canned worker and what it must end with. */
export type CrewBenchScenario = {
  key: CrewBenchKey;
  label: string;
  graph: CrewGraph;
  input: JsonValue;
  /** The canned answer the worker gives to a request (an `agent.step.completed`). */
  answer: (req: AgentStepRequestedEvent) => InboundCrewEvent;
  /** Number of `agent.step.completed` events one run delivers. */
  steps: number;
  /** The output `crew.completed` must carry. */
  expectedOutput: JsonValue;
  /** A fresh memory adapter per session (and per step of the pure step), when the crew uses memory. */
  memory?: () => CrewMemoryAdapter;
  /** The LangGraph.js topology built the same way, if there is one. */
  langGraph?: LangGraphTopology;
};

/** The 64 agents of (b) are `voter#0` … `voter#63`; agent i answers like LangGraph's agent i. */
const VOTER_ROLE = "voter";

/** Padded ~200-byte text of a nested-crew agent (canned, depends only on the role). */
const nestedOutput = (role: string): string => `${role}: ${"finding ".repeat(24)}`.slice(0, 200);

const completedFor = (
  req: AgentStepRequestedEvent,
  output: JsonValue,
  extra: Partial<Extract<InboundCrewEvent, { type: "agent.step.completed" }>> = {},
): InboundCrewEvent => ({
  type: "agent.step.completed",
  crewId: req.crewId,
  correlationId: req.correlationId,
  output,
  ...extra,
});

const agentIndex = (agentId: string): number => Number(agentId.slice(agentId.lastIndexOf("#") + 1));

/** (a) The claims crew of core/agents (analyst → decision maker, fixer on fault/stall, step timeouts) on the ~300-byte claim. */
function claimsScenario(): CrewBenchScenario {
  return {
    key: "claims",
    label: "(a) claims crew: analyst → decision maker",
    graph: claimsCrewGraph(),
    input: CLAIM_INPUT as unknown as JsonValue,
    answer: (req) => completedFor(req, req.phaseIndex === 0 ? ANALYST_OUTPUT : DECISION_OUTPUT),
    steps: 2,
    expectedOutput: DECISION_OUTPUT,
    langGraph: "claims",
  };
}

const perm = {
  talk_to: [] as string[],
  delegate_to: [] as string[],
  escalate_to: [] as string[],
  invite: [] as string[],
};

/** (b) One phase of 64 agents voting by strict majority; 40 give MAJORITY_OUTPUT, 24 MINORITY_OUTPUT (~200 bytes each). */
function majorityScenario(): CrewBenchScenario {
  const graph = buildCrewGraph(
    {
      schema_version: "1.0",
      name: "MAJORITY64",
      roles: [
        {
          role: VOTER_ROLE,
          capabilities: { thinking_allowed: true },
          system_prompt: "You are one of 64 reviewers. Read the claim and answer with your proposal.",
          permissions: perm,
          first_input: true,
          final_output: true,
          voting: "majority",
          timeout_ms: 120_000,
        },
      ],
    },
    { schema_version: "1.0", name: "MAJORITY64", agents: [{ role: VOTER_ROLE, amount: MAJORITY64_AGENTS }] },
  );
  return {
    key: "majority64",
    label: "(b) 64 agents, majority vote (40/24)",
    graph,
    input: CLAIM_INPUT as unknown as JsonValue,
    answer: (req) => completedFor(req, cannedAgentOutput(agentIndex(req.agentId))),
    steps: MAJORITY64_AGENTS,
    expectedOutput: MAJORITY_OUTPUT,
    langGraph: "majority64",
  };
}

/**
 * (c) Three levels: CASE = intake → team ×2 (each a TEAM crew, soft memory) → decider.
 * TEAM = planner → squad ×2 (each a SQUAD crew, hard memory: forked, merged on completion).
 * SQUAD = researcher ×2 (unanimous) → writer. Planners write one memory key each.
 * Steps: 1 + 2 × (1 + 2 × (2 + 1)) + 1 = 16.
 */
function nestedScenario(): CrewBenchScenario {
  const role = (name: string, extra: Record<string, unknown> = {}) => ({
    role: name,
    capabilities: { thinking_allowed: true },
    permissions: perm,
    ...extra,
  });
  const squad = {
    schema_version: "1.0",
    name: "SQUAD",
    roles: [
      role("researcher", { first_input: true, voting: "unanimous", timeout_ms: 60_000 }),
      role("writer", { final_output: true, timeout_ms: 60_000 }),
    ],
  };
  const squadCounts = {
    schema_version: "1.0",
    name: "SQUAD",
    agents: [
      { role: "researcher", amount: 2 },
      { role: "writer", amount: 1 },
    ],
  };
  const team = {
    schema_version: "1.0",
    name: "TEAM",
    roles: [
      role("planner", { first_input: true, timeout_ms: 60_000 }),
      role("squad", {
        final_output: true,
        nested_crew: { shape: squad, agents: squadCounts, memory_isolation: "hard" },
      }),
    ],
  };
  const teamCounts = {
    schema_version: "1.0",
    name: "TEAM",
    agents: [
      { role: "planner", amount: 1 },
      { role: "squad", amount: 2 },
    ],
  };
  const graph = buildCrewGraph(
    {
      schema_version: "1.0",
      name: "CASE",
      roles: [
        role("intake", {
          first_input: true,
          system_prompt: "Split the claim into questions for the teams.",
          timeout_ms: 60_000,
        }),
        role("team", { nested_crew: { shape: team, agents: teamCounts, memory_isolation: "soft" } }),
        role("decider", { final_output: true, system_prompt: "Decide from the teams' findings.", timeout_ms: 60_000 }),
      ],
    },
    {
      schema_version: "1.0",
      name: "CASE",
      agents: [
        { role: "intake", amount: 1 },
        { role: "team", amount: 2 },
        { role: "decider", amount: 1 },
      ],
    },
  );
  return {
    key: "nested3",
    label: "(c) 3-level nested crew (16 steps)",
    graph,
    input: CLAIM_INPUT as unknown as JsonValue,
    answer: (req) => {
      if (req.role === "decider") return completedFor(req, DECISION_OUTPUT);
      if (req.role === "planner") {
        return completedFor(req, nestedOutput(req.role), {
          memoryCommands: [{ op: "set", key: `plan:${req.crewId}`, value: "split by evidence" }],
        });
      }
      return completedFor(req, nestedOutput(req.role));
    },
    steps: 16,
    expectedOutput: DECISION_OUTPUT,
    memory: () => createInMemoryMemory(),
  };
}

/** The three benchmark crews, built fresh. */
export function crewBenchScenarios(): CrewBenchScenario[] {
  return [claimsScenario(), majorityScenario(), nestedScenario()];
}

/** What one run did: its final status and output, steps delivered, and (when asked) snapshot sizes. */
export type CrewRunResult = {
  status: CrewStatus;
  output: JsonValue | undefined;
  steps: number;
  /** UTF-8 bytes of `JSON.stringify(snapshot)` after start and after every step (only with `recordSizes`). */
  snapshotBytes: number[];
};

const CLOCK_START_MS = 1_760_000_000_000;

/**
 * One whole run of a crew. Both modes start the crew on the root input and answer
 * every `agent.step.requested` first-in first-out until the crew ends:
 * - `deliver`: `session.deliver(answer)` on the one in-memory session;
 * - `roundtrip`: the pure batch step the orchestrator runs, from `initialCrewSnapshot` and a
 *   `crew.start`; per answer `stepCrewMany(JSON.parse(stored), [answer], { graph, nowMs, memory })` and
 *   `stored = JSON.stringify(next.snapshot)` — load, apply, save, as the orchestrator does.
 *   With `batch` > 1 (informative only) each step takes up to that many answers already requested,
 *   as the orchestrator does with an SQS batch grouped by crew.
 */
export function runCrew(
  scenario: CrewBenchScenario,
  mode: CrewBenchMode,
  opts: { recordSizes?: boolean; clock?: FrozenClock; batch?: number } = {},
): CrewRunResult {
  const batch = opts.batch ?? 1;
  if (!Number.isInteger(batch) || batch < 1)
    throw new RangeError(`runCrew: batch must be an integer >= 1, got ${String(opts.batch)}`);
  if (batch > 1 && opts.recordSizes)
    throw new RangeError("runCrew: snapshot sizes are recorded per step, so not with batch > 1");
  const clock = opts.clock ?? frozenClock(CLOCK_START_MS);
  const queue: AgentStepRequestedEvent[] = [];
  let output: JsonValue | undefined;
  const collect = (events: readonly OutboundCrewEvent[]) => {
    for (const e of events) {
      if (e.type === "agent.step.requested") queue.push(e);
      else if (e.type === "crew.completed") output = e.output;
    }
  };
  const sizes: number[] = [];
  let steps = 0;
  if (mode === "deliver") {
    const memory = scenario.memory?.();
    const session = createCrewSession({
      crewId: "crew-bench",
      graph: scenario.graph,
      clock,
      ...(memory === undefined ? {} : { memory }),
    });
    collect(session.start(scenario.input));
    if (opts.recordSizes) sizes.push(Buffer.byteLength(JSON.stringify(session.snapshot())));
    for (let head = 0; head < queue.length; ) {
      steps++;
      collect(session.deliver(scenario.answer(queue[head++]!)));
      if (opts.recordSizes) sizes.push(Buffer.byteLength(JSON.stringify(session.snapshot())));
    }
    return { status: session.status, output, steps, snapshotBytes: sizes };
  }
  const env = () => {
    const memory = scenario.memory?.(); // a fresh adapter per step: memory travels inside the snapshot
    return { graph: scenario.graph, nowMs: clock.now(), ...(memory === undefined ? {} : { memory }) };
  };
  const start = { type: "crew.start", crewId: "crew-bench", input: scenario.input };
  const started = stepCrewMany(initialCrewSnapshot({ crewId: "crew-bench", graph: scenario.graph }), [start], env());
  for (const r of started.results) collect(r.events);
  let status = started.snapshot.status;
  let stored = JSON.stringify(started.snapshot);
  if (opts.recordSizes) sizes.push(Buffer.byteLength(stored));
  for (let head = 0; head < queue.length; ) {
    const answers: InboundCrewEvent[] = [];
    while (answers.length < batch && head < queue.length) answers.push(scenario.answer(queue[head++]!));
    steps += answers.length;
    const next = stepCrewMany(JSON.parse(stored), answers, env());
    for (const r of next.results) collect(r.events);
    status = next.snapshot.status;
    stored = JSON.stringify(next.snapshot);
    if (opts.recordSizes) sizes.push(Buffer.byteLength(stored));
  }
  return { status, output, steps, snapshotBytes: sizes };
}

/** Throws unless a run completed with the scenario's output after exactly its number of steps. */
export function checkRun(scenario: CrewBenchScenario, mode: CrewBenchMode, result: CrewRunResult): void {
  const problems: string[] = [];
  if (result.status !== "completed") problems.push(`status ${result.status}, expected completed`);
  if (result.output !== scenario.expectedOutput)
    problems.push(`output ${JSON.stringify(result.output)?.slice(0, 80)} is not the expected one`);
  if (result.steps !== scenario.steps) problems.push(`${result.steps} steps delivered, expected ${scenario.steps}`);
  if (problems.length > 0) throw new Error(`crew bench ${scenario.key} (${mode}): ${problems.join("; ")}`);
}

/** Snapshot sizes of one run: after start, median and peak over the steps while running, and the final (terminal) one. */
export function snapshotStats(bytes: readonly number[]): {
  afterStart: number;
  medianRunning: number;
  peak: number;
  final: number;
  writtenPerRun: number;
} {
  if (bytes.length < 2) throw new RangeError("snapshotStats: need the size after start and after at least one step");
  const running = bytes.slice(0, -1);
  const sorted = [...running].sort((x, y) => x - y);
  return {
    afterStart: bytes[0]!,
    medianRunning: sorted[Math.floor((sorted.length - 1) / 2)]!,
    peak: Math.max(...running),
    final: bytes[bytes.length - 1]!,
    writtenPerRun: bytes.reduce((sum, b) => sum + b, 0),
  };
}

/** The (b) snapshot budget from the issue: at most 16 KB. */
export const MAJORITY64_SNAPSHOT_BUDGET_BYTES = 16 * 1024;
/** The per-step goal from the issue: at least this many times cheaper than LangGraph.js. */
export const GOAL_RATIO = 50;

/** Answers per step in the batched round trip of (b): an SQS FIFO batch holds at most 10 messages of a claim's group. */
const BATCH = 10;

/** How a crew is driven in a timed run: one answer per step in memory, a JSON round trip per answer, or per batch of answers. */
type TimedMode = "deliver" | "roundtrip" | "batched";

const MODE_LABEL: Record<TimedMode, string> = {
  deliver: "deliver alone",
  roundtrip: "deliver + JSON snapshot round trip per answer",
  batched: `JSON round trip per ${BATCH} answers (one stepCrewMany with ${BATCH} events)`,
};

/** A contender whose op is one whole run of `scenario` (one unit = one delivered step), checked after each sample. */
export function crewContender(scenario: CrewBenchScenario, mode: TimedMode): Contender {
  const runMode: CrewBenchMode = mode === "deliver" ? "deliver" : "roundtrip";
  const batch = mode === "batched" ? BATCH : 1;
  let last: CrewRunResult | undefined;
  return {
    name: `${scenario.key} ${mode}`,
    unitsPerOp: scenario.steps,
    op: () => (last = runCrew(scenario, runMode, { batch })),
    after: () => checkRun(scenario, runMode, last!), // the timed runs did the whole work
  };
}

/** Rounds of every interleaved comparison of this bench. */
const ROUNDS = 21;

/** Where a round-trip step goes: medians over every step of `runs` runs of JSON.parse, stepCrewMany (load, apply, save), JSON.stringify (simple timers). */
function roundTripBreakdown(
  scenario: CrewBenchScenario,
  runs: number,
): { stringify: number; parse: number; resume: number } {
  const clock = frozenClock(CLOCK_START_MS);
  const t = { stringify: [] as number[], parse: [] as number[], resume: [] as number[] };
  for (let r = 0; r < runs; r++) {
    const env = () => {
      const memory = scenario.memory?.();
      return { graph: scenario.graph, nowMs: clock.now(), ...(memory === undefined ? {} : { memory }) };
    };
    const start = { type: "crew.start", crewId: "crew-bench", input: scenario.input };
    const first = stepCrewMany(initialCrewSnapshot({ crewId: "crew-bench", graph: scenario.graph }), [start], env());
    const queue = first.results[0]!.events.filter(
      (e): e is AgentStepRequestedEvent => e.type === "agent.step.requested",
    );
    let stored = JSON.stringify(first.snapshot);
    for (let head = 0; head < queue.length; head++) {
      const answer = scenario.answer(queue[head]!);
      const t0 = process.hrtime.bigint();
      const parsed: unknown = JSON.parse(stored);
      const t1 = process.hrtime.bigint();
      const next = stepCrewMany(parsed, [answer], env());
      const snap = next.snapshot;
      const t2 = process.hrtime.bigint();
      stored = JSON.stringify(snap);
      const t3 = process.hrtime.bigint();
      t.parse.push(Number(t1 - t0) / 1000);
      t.resume.push(Number(t2 - t1) / 1000);
      t.stringify.push(Number(t3 - t2) / 1000);
      for (const e of next.results[0]!.events) if (e.type === "agent.step.requested") queue.push(e);
    }
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  return { stringify: median(t.stringify), parse: median(t.parse), resume: median(t.resume) };
}

const fmtUs = (ns: number) => us(ns);

/** Runs the crew benchmark and returns its markdown section. */
export async function run(): Promise<string> {
  const scenarios = crewBenchScenarios();

  // Correctness and sizes first (untimed): every crew completes with its expected output in both modes.
  const sizes = new Map<CrewBenchKey, ReturnType<typeof snapshotStats>>();
  for (const s of scenarios) {
    const deliver = runCrew(s, "deliver", { recordSizes: true });
    checkRun(s, "deliver", deliver);
    const roundtrip = runCrew(s, "roundtrip", { recordSizes: true });
    checkRun(s, "roundtrip", roundtrip);
    if (roundtrip.snapshotBytes.join() !== deliver.snapshotBytes.join()) {
      throw new Error(
        `crew bench ${s.key}: snapshots differ between an in-memory and a stepped run (${deliver.snapshotBytes.join()} vs ${roundtrip.snapshotBytes.join()})`,
      );
    }
    sizes.set(s.key, snapshotStats(roundtrip.snapshotBytes));
  }

  // Timing: per crew, our modes and (when there is one) LangGraph.js take turns round by round, in CPU time.
  type Timed = {
    scenario: CrewBenchScenario;
    results: Map<TimedMode | "langgraph", ContenderResult>;
    langGraph?: LangGraphBench;
  };
  const timed: Timed[] = [];
  for (const s of scenarios) {
    const modes: TimedMode[] = s.key === "majority64" ? ["deliver", "roundtrip", "batched"] : ["deliver", "roundtrip"];
    const langGraph = s.langGraph === undefined ? undefined : await prepareLangGraph(s.langGraph);
    const contenders = [...modes.map((m) => crewContender(s, m)), ...(langGraph ? [langGraph.contender] : [])];
    const measured = await interleave(contenders, { rounds: ROUNDS, warmupRounds: 3, targetSampleMs: 30 });
    const results = new Map<TimedMode | "langgraph", ContenderResult>(modes.map((m, i) => [m, measured[i]!]));
    if (langGraph) results.set("langgraph", measured[modes.length]!);
    timed.push({ scenario: s, results, ...(langGraph ? { langGraph } : {}) });
  }

  const breakdown = scenarios.map((s) => ({ s, b: roundTripBreakdown(s, s.key === "majority64" ? 50 : 300) }));

  const ratioRows: TableRow[] = [];
  const goalLines: string[] = [];
  const timingRows: TableRow[] = [];
  for (const { scenario: s, results } of timed) {
    const lg = results.get("langgraph");
    for (const [mode, r] of results) {
      if (mode === "langgraph") continue;
      timingRows.push({
        crew: s.label,
        mode: MODE_LABEL[mode],
        steps: s.steps,
        "CPU µs/step (low)": fmtUs(r.lowCpuNs),
        "CPU µs/step (median)": fmtUs(r.medianCpuNs),
        "wall µs/step (median)": fmtUs(r.medianWallNs),
        "runs/sample": r.opsPerSample,
      });
      if (!lg) continue;
      const c = compare(lg, r);
      const goal = mode === "batched" ? "informative" : c.quoted >= GOAL_RATIO ? "met" : "MISSED";
      ratioRows.push({
        topology: s.label,
        "our mode": MODE_LABEL[mode],
        "LangGraph CPU µs/node (low)": fmtUs(lg.lowCpuNs),
        "ours CPU µs/step (low)": fmtUs(r.lowCpuNs),
        "ratio (low ends; per-round range)": ratioText(c),
        [`goal ≥ ${GOAL_RATIO}×`]: goal,
      });
      if (mode !== "batched") goalLines.push(`${s.key} ${mode}: ${ratioText(c)} (${goal.toLowerCase()})`);
    }
  }

  const lgRows: TableRow[] = timed.flatMap(({ results, langGraph }) => {
    const lg = results.get("langgraph");
    if (!lg || !langGraph) return [];
    return [
      {
        topology: langGraph.topology,
        "CPU µs/run (low)": fmtUs(lg.lowCpuNs * langGraph.nodeExecutionsPerRun),
        "CPU µs/run (median)": fmtUs(lg.medianCpuNs * langGraph.nodeExecutionsPerRun),
        "node executions/run": langGraph.nodeExecutionsPerRun,
        "CPU µs/node (low)": fmtUs(lg.lowCpuNs),
        "latest checkpoint bytes": langGraph.sizes.checkpointBytes,
        "checkpoint metadata bytes": langGraph.sizes.checkpointMetadataBytes,
        "checkpoints/run": langGraph.sizes.checkpoints,
        "all stored bytes/thread": langGraph.sizes.threadStoredBytes,
      },
    ];
  });

  const sizeRows: TableRow[] = scenarios.map((s) => {
    const z = sizes.get(s.key)!;
    return {
      crew: s.label,
      "after start": z.afterStart,
      "median while running": z.medianRunning,
      "peak while running": z.peak,
      "final (completed)": z.final,
      "written per run (round trip: after start + every step)": z.writtenPerRun,
    };
  });

  const majority = scenarios.find((s) => s.key === "majority64")!;
  const b = sizes.get("majority64")!;
  const lgB = timed.find((t) => t.scenario.key === "majority64")!.langGraph!;
  const bRows: TableRow[] = [
    { what: "ours: peak snapshot while running (63 of 64 answers in)", bytes: b.peak },
    { what: "ours: final snapshot (completed)", bytes: b.final },
    { what: "LangGraph: latest checkpoint of a finished run", bytes: lgB.sizes.checkpointBytes },
    { what: "LangGraph: all checkpoints + metadata + writes of one run", bytes: lgB.sizes.threadStoredBytes },
    { what: `ours: all snapshots written in one round-trip run (${majority.steps + 1} saves)`, bytes: b.writtenPerRun },
  ];

  const breakdownRows: TableRow[] = breakdown.map(({ s, b: br }) => ({
    crew: s.label,
    "JSON.parse µs/step": Number(br.parse.toFixed(2)),
    "stepCrewMany (load, apply, save) µs/step": Number(br.resume.toFixed(2)),
    "JSON.stringify µs/step": Number(br.stringify.toFixed(2)),
  }));

  return [
    "## Crew engine vs LangGraph.js (bench/crew.bench.ts)",
    "",
    "Definitions:",
    "- **step** = one `agent.step.completed` delivered to the crew. A run starts the crew on the ~300-byte claim and answers every `agent.step.requested` (canned outputs) first-in first-out until `crew.completed`; (a) 2 steps, (b) 64, (c) 16.",
    "- **deliver alone**: one in-memory session, `session.deliver(answer)` per step (the event is validated by its zod schema on the way in).",
    "- **JSON snapshot round trip per answer**: the pure batch step the orchestrator runs: from `initialCrewSnapshot` and a `crew.start`, per step `stepCrewMany(JSON.parse(stored), [answer], { graph, nowMs, memory })` then `stored = JSON.stringify(next.snapshot)` — what the serverless orchestrator pays when answers arrive one at a time (without the DynamoDB I/O). **Per 10 answers**: the same with up to 10 answers per step — what it pays when a FIFO batch holds 10 answers of a claim.",
    `- **Timing**: our modes and LangGraph.js (\`graph.invoke\` on a fresh thread with \`MemorySaver\`, canned nodes) take turns, ${ROUNDS} rounds after 3 warm-up rounds, the order rotating each round; each sample is a batch of whole runs (~30 ms) timed in **CPU time** of the process (\`process.cpuUsage\`, user + system, GC included). Per step = per run ÷ steps; LangGraph per node = per run ÷ node executions (2 for (a), 64 agents + 1 vote for (b)). **low** = the lowest round (the quoted figure), median beside it.`,
    "- **ratio** = LangGraph CPU per node execution ÷ our CPU per step, quoted from the two low ends; in brackets the lowest and highest of the per-round ratios. Goal ≥ 50× on both topologies, both per-answer modes.",
    "- **snapshot bytes** = UTF-8 bytes of `JSON.stringify(session.snapshot())`; LangGraph's = bytes MemorySaver stores for the latest checkpoint (serialized, as stored).",
    "- Correctness is checked before and after every sample: every run completes with the expected output ((a) the decision maker's, (b) the 40-vote majority's, (c) the decider's) after exactly its number of steps, and a stepped run's snapshots are byte-for-byte the sizes of the in-memory run's.",
    "",
    "### Ratios",
    "",
    formatTable(ratioRows),
    "",
    "### Our engine, per step",
    "",
    formatTable(timingRows),
    "",
    "### LangGraph.js baseline (MemorySaver, canned nodes)",
    "",
    formatTable(lgRows),
    "",
    "### Snapshot bytes per crew (JSON)",
    "",
    formatTable(sizeRows),
    "",
    `### (b) snapshot vs LangGraph checkpoint (budget ${MAJORITY64_SNAPSHOT_BUDGET_BYTES} bytes: ${b.peak <= MAJORITY64_SNAPSHOT_BUDGET_BYTES ? "met" : "MISSED"})`,
    "",
    formatTable(bRows),
    "",
    "### Where a round-trip step goes (wall time, simple timers around each part; median over every step of many runs, so the parts do not add up exactly)",
    "",
    formatTable(breakdownRows),
    "",
    `Goal summary: ${goalLines.join("; ")}; (b) peak snapshot ${b.peak} bytes (≤ ${MAJORITY64_SNAPSHOT_BUDGET_BYTES}: ${b.peak <= MAJORITY64_SNAPSHOT_BUDGET_BYTES ? "met" : "missed"}).`,
  ].join("\n");
}
