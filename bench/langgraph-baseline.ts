// LangGraph.js baseline for the crew benchmark: the same two topologies built the way a LangGraph
// user would write them (StateGraph + Annotation, MemorySaver checkpointer, canned node outputs,
// no LLM), ready to be timed beside our engine (bench/lib/harness.ts), plus their checkpoint sizes.
import { EventEmitter, setMaxListeners } from "node:events";
import { Annotation, END, MemorySaver, Send, START, StateGraph } from "@langchain/langgraph";
import type { Contender } from "./lib/harness.ts";

/** The two topologies compared with our crew engine. */
export type LangGraphTopology = "claims" | "majority64";

/** One agent's vote as the majority64 agents write it into the shared `votes` channel. */
export type AgentVote = { agentIndex: number; output: string };

/** Result of {@link pickMajority}: the strict-majority output (or null) and its count. */
export type MajorityResult = { output: string | null; count: number; total: number };

const pad = (text: string, bytes: number): string => {
  const missing = bytes - Buffer.byteLength(text);
  if (missing < 0)
    throw new Error(`canned text is already ${String(Buffer.byteLength(text))} bytes, over ${String(bytes)}`);
  return text + " ".repeat(missing);
};

/** The ~300-byte claim every run starts from (a JSON object, as the crew's root input). */
export const CLAIM_INPUT = {
  claim_id: "clm_bench_0001",
  order_id: "ord_001",
  amount_eur: 299.99,
  currency: "EUR",
  category: "electronics",
  purchase_date: "2025-03-01T10:00:00.000Z",
  customer_id: "cus_0042",
  reason:
    "The screen stopped working two days after delivery; it stays black when powered on. Asking for a full refund.",
} as const;

/** Canned ~500-byte analyst assessment. */
export const ANALYST_OUTPUT = pad(
  "Assessment of claim clm_bench_0001 for order ord_001: the customer reports a dead screen two days after " +
    "delivery and asks for a full refund of 299.99 EUR. Category electronics is within the allowed refund " +
    "categories. The claimed amount is below the 500 EUR limit for refunds without escalation. The purchase " +
    "date is stated by the customer and must be checked against the order record by the kernel. The defect " +
    "description is specific and plausible. Recommendation: REFUND the claimed amount.",
  500,
);

/** Canned ~500-byte decision-maker proposal (a RefundProposalOutput as JSON text). */
export const DECISION_OUTPUT = pad(
  JSON.stringify({
    action: "REFUND",
    order_id: "ord_001",
    amount_eur: 299.99,
    category: "electronics",
    reason:
      "Dead screen reported two days after delivery; electronics is a refundable category and the amount is " +
      "under the escalation limit. Full refund of the claimed amount proposed; kernel to verify the order.",
    confidence: 0.92,
  }),
  500,
);

/** Number of agents in the majority64 phase. */
export const MAJORITY64_AGENTS = 64;
/** How many of them answer with {@link MINORITY_OUTPUT}; the rest (40) answer {@link MAJORITY_OUTPUT}. */
export const MAJORITY64_MINORITY_VOTES = 24;

/** Canned ~200-byte output most agents give. */
export const MAJORITY_OUTPUT = pad(
  JSON.stringify({
    action: "REFUND",
    order_id: "ord_001",
    amount_eur: 299.99,
    confidence: 0.9,
    note: "defect within window",
  }),
  200,
);
/** Canned ~200-byte output the minority gives. */
export const MINORITY_OUTPUT = pad(
  JSON.stringify({
    action: "ESCALATE",
    order_id: "ord_001",
    amount_eur: 299.99,
    confidence: 0.6,
    note: "needs photo proof",
  }),
  200,
);

/** The canned answer of agent `agentIndex`: 3 of every 8 agents (24 of 64) give the minority output. */
export function cannedAgentOutput(agentIndex: number): string {
  return agentIndex % 8 < 3 ? MINORITY_OUTPUT : MAJORITY_OUTPUT;
}

/**
 * Strict-majority vote (more than half of all votes), tallied in agent order so the result does
 * not depend on the order parallel writes landed in; null output when no answer has a majority.
 */
export function pickMajority(votes: readonly AgentVote[]): MajorityResult {
  const ordered = [...votes].sort((a, b) => a.agentIndex - b.agentIndex);
  const counts = new Map<string, number>();
  for (const vote of ordered) counts.set(vote.output, (counts.get(vote.output) ?? 0) + 1);
  let best: string | null = null;
  let bestCount = 0;
  for (const [output, count] of counts) {
    if (count > bestCount) {
      best = output;
      bestCount = count;
    }
  }
  const total = ordered.length;
  return bestCount * 2 > total ? { output: best, count: bestCount, total } : { output: null, count: bestCount, total };
}

const ClaimsState = Annotation.Root({
  claim: Annotation<typeof CLAIM_INPUT>,
  analysis: Annotation<string>,
  proposal: Annotation<string>,
});

/**
 * Topology (a): START → analyst → decision_maker → END. Each node checks it got what the previous
 * phase produced, then returns its canned output. 2 node executions per run.
 */
export function buildLangGraphClaims(checkpointer: MemorySaver = new MemorySaver()) {
  const graph = new StateGraph(ClaimsState)
    .addNode("analyst", (state) => {
      if (state.claim?.order_id !== CLAIM_INPUT.order_id) throw new Error("analyst: claim input missing");
      return { analysis: ANALYST_OUTPUT };
    })
    .addNode("decision_maker", (state) => {
      if (state.analysis !== ANALYST_OUTPUT) throw new Error("decision_maker: ran without the analyst's output");
      return { proposal: DECISION_OUTPUT };
    })
    .addEdge(START, "analyst")
    .addEdge("analyst", "decision_maker")
    .addEdge("decision_maker", END)
    .compile({ checkpointer });
  return {
    topology: "claims" as const,
    graph,
    checkpointer,
    nodeExecutionsPerRun: 2,
    /** One run on a fresh thread; resolves to the final proposal. */
    run: async (threadId: string): Promise<string> => {
      const state = await graph.invoke({ claim: CLAIM_INPUT }, { configurable: { thread_id: threadId } });
      return state.proposal;
    },
  };
}

const MajorityState = Annotation.Root({
  claim: Annotation<typeof CLAIM_INPUT>,
  votes: Annotation<AgentVote[]>({ reducer: (left, right) => left.concat(right), default: () => [] }),
  decision: Annotation<string | null>,
});

const AgentInput = Annotation.Root({
  agentIndex: Annotation<number>,
  claim: Annotation<typeof CLAIM_INPUT>,
});

/**
 * Topology (b): START fans out with one `Send("agent", { agentIndex, claim })` per agent (the
 * documented LangGraph map-reduce pattern; the agent count is data, not graph structure), each
 * agent appends its canned vote, then `vote` picks the strict majority. 64 + 1 node executions.
 */
export function buildLangGraphMajority64(checkpointer: MemorySaver = new MemorySaver()) {
  // Each of the 64 parallel tasks adds an abort listener to the run's internal AbortSignal; without
  // this Node prints a MaxListenersExceededWarning per run, which would be timed too.
  // Only ever raises the process-wide default.
  if (EventEmitter.defaultMaxListeners < 4 * MAJORITY64_AGENTS) setMaxListeners(4 * MAJORITY64_AGENTS);
  const graph = new StateGraph(MajorityState)
    .addNode(
      "agent",
      (input: typeof AgentInput.State) => {
        if (input.claim?.order_id !== CLAIM_INPUT.order_id) throw new Error("agent: claim input missing");
        return { votes: [{ agentIndex: input.agentIndex, output: cannedAgentOutput(input.agentIndex) }] };
      },
      { input: AgentInput },
    )
    .addNode("vote", (state) => ({ decision: pickMajority(state.votes).output }))
    .addConditionalEdges(
      START,
      (state) =>
        Array.from(
          { length: MAJORITY64_AGENTS },
          (_, agentIndex) => new Send("agent", { agentIndex, claim: state.claim }),
        ),
      ["agent"],
    )
    .addEdge("agent", "vote")
    .addEdge("vote", END)
    .compile({ checkpointer });
  return {
    topology: "majority64" as const,
    graph,
    checkpointer,
    nodeExecutionsPerRun: MAJORITY64_AGENTS + 1,
    /** One run on a fresh thread; resolves to the voted output (null without a majority). */
    run: async (threadId: string): Promise<string | null> => {
      const state = await graph.invoke({ claim: CLAIM_INPUT }, { configurable: { thread_id: threadId } });
      return state.decision;
    },
  };
}

/** Byte sizes MemorySaver holds for one thread (root namespace). */
export type ThreadStorageSizes = {
  latestCheckpointId: string;
  checkpointBytes: number;
  checkpointMetadataBytes: number;
  threadStoredBytes: number;
  checkpoints: number;
};

/**
 * Sizes of what `saver` stores for `threadId`: the latest checkpoint (the one `getTuple` returns
 * without a checkpoint id) as the serialized bytes in `MemorySaver.storage`, its metadata, and the
 * sum over all the thread's checkpoints, metadata and pending writes.
 */
export async function threadStorageSizes(saver: MemorySaver, threadId: string): Promise<ThreadStorageSizes> {
  const tuple = await saver.getTuple({ configurable: { thread_id: threadId } });
  const latestCheckpointId = tuple?.checkpoint.id;
  const checkpoints = saver.storage[threadId]?.[""];
  const latest = latestCheckpointId === undefined ? undefined : checkpoints?.[latestCheckpointId];
  if (latestCheckpointId === undefined || checkpoints === undefined || latest === undefined) {
    throw new Error(`threadStorageSizes: MemorySaver holds no checkpoint for thread "${threadId}"`);
  }
  let threadStoredBytes = 0;
  for (const [checkpoint, metadata] of Object.values(checkpoints)) {
    threadStoredBytes += checkpoint.byteLength + metadata.byteLength;
  }
  for (const [key, writes] of Object.entries(saver.writes)) {
    const [writesThreadId] = JSON.parse(key) as [string, string, string];
    if (writesThreadId !== threadId) continue;
    for (const [, , value] of Object.values(writes)) threadStoredBytes += value.byteLength;
  }
  return {
    latestCheckpointId,
    checkpointBytes: latest[0].byteLength,
    checkpointMetadataBytes: latest[1].byteLength,
    threadStoredBytes,
    checkpoints: Object.keys(checkpoints).length,
  };
}

const builders = {
  claims: buildLangGraphClaims,
  majority64: buildLangGraphMajority64,
} as const;

const expectedOutputs: Record<LangGraphTopology, string> = {
  claims: DECISION_OUTPUT,
  majority64: MAJORITY_OUTPUT,
};

/** A topology ready to be timed: its contender for {@link interleave}, and what one probe run stored. */
export type LangGraphBench = {
  topology: LangGraphTopology;
  /** One op = one `graph.invoke` on a fresh thread; one unit = one node execution. */
  contender: Contender;
  nodeExecutionsPerRun: number;
  sizes: ThreadStorageSizes;
  checkpointer: MemorySaver;
};

/**
 * Builds one topology with a MemorySaver checkpointer (default durability, so `invoke` resolves after
 * every checkpoint is stored), proves with an untimed probe run that it ends with the expected output,
 * sizes that run's checkpoints, and returns a contender whose op is one run on a fresh thread. The
 * threads a sample created are checked and deleted after it, outside the timed region.
 */
export async function prepareLangGraph(topology: LangGraphTopology): Promise<LangGraphBench> {
  const build = builders[topology];
  if (build === undefined)
    throw new Error(`prepareLangGraph: unknown topology "${String(topology)}" (claims | majority64)`);
  const baseline = build();
  const saver = baseline.checkpointer;
  const probeThread = `probe-${topology}`;
  const probeOutput = await baseline.run(probeThread);
  if (probeOutput !== expectedOutputs[topology]) {
    throw new Error(
      `prepareLangGraph: ${topology} run produced an unexpected output: ${String(probeOutput).slice(0, 80)}`,
    );
  }
  const sizes = await threadStorageSizes(saver, probeThread);
  await saver.deleteThread(probeThread);

  let runIndex = 0;
  let threads: string[] = [];
  let outputs: Promise<string | null>[] = [];
  const contender: Contender = {
    name: `LangGraph.js ${topology}`,
    unitsPerOp: baseline.nodeExecutionsPerRun,
    op: () => {
      const thread = `bench-${topology}-${String(runIndex++)}`;
      threads.push(thread);
      const out = baseline.run(thread);
      outputs.push(out);
      return out;
    },
    after: async () => {
      const got = await Promise.all(outputs);
      if (got.some((o) => o !== expectedOutputs[topology]))
        throw new Error(`prepareLangGraph: a timed ${topology} run ended with another output`);
      for (const t of threads) await saver.deleteThread(t);
      threads = [];
      outputs = [];
    },
  };
  return { topology, contender, nodeExecutionsPerRun: baseline.nodeExecutionsPerRun, sizes, checkpointer: saver };
}
