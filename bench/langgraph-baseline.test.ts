import { describe, expect, it } from "vitest";
import { MemorySaver } from "@langchain/langgraph";
import {
  ANALYST_OUTPUT,
  CLAIM_INPUT,
  DECISION_OUTPUT,
  MAJORITY64_AGENTS,
  MAJORITY64_MINORITY_VOTES,
  MAJORITY_OUTPUT,
  MINORITY_OUTPUT,
  buildLangGraphClaims,
  buildLangGraphMajority64,
  cannedAgentOutput,
  prepareLangGraph,
  pickMajority,
  threadStorageSizes,
} from "./langgraph-baseline.ts";
import type { AgentVote } from "./langgraph-baseline.ts";

const bytes = (text: string) => Buffer.byteLength(text);

/** Node names in the order LangGraph reported their updates, for one run on a fresh thread. */
async function nodeUpdates(
  graph: { stream: (input: unknown, options: unknown) => Promise<AsyncIterable<Record<string, unknown>>> },
  threadId: string,
): Promise<Array<[string, unknown]>> {
  const updates: Array<[string, unknown]> = [];
  const stream = await graph.stream(
    { claim: CLAIM_INPUT },
    { configurable: { thread_id: threadId }, streamMode: "updates" },
  );
  for await (const chunk of stream) for (const entry of Object.entries(chunk)) updates.push(entry);
  return updates;
}

const votes = (outputs: readonly string[]): AgentVote[] =>
  outputs.map((output, agentIndex) => ({ agentIndex, output }));

describe("canned payloads", () => {
  it.each([
    ["claim input JSON", bytes(JSON.stringify(CLAIM_INPUT)), 250, 350],
    ["analyst output", bytes(ANALYST_OUTPUT), 500, 500],
    ["decision output", bytes(DECISION_OUTPUT), 500, 500],
    ["majority output", bytes(MAJORITY_OUTPUT), 200, 200],
    ["minority output", bytes(MINORITY_OUTPUT), 200, 200],
  ])("%s is %i bytes, within the benchmark's size", (_name, size, min, max) => {
    expect(size).toBeGreaterThanOrEqual(min);
    expect(size).toBeLessThanOrEqual(max);
  });

  it("splits the 64 agents into 40 majority and 24 minority answers", () => {
    const outputs = Array.from({ length: MAJORITY64_AGENTS }, (_, i) => cannedAgentOutput(i));
    expect(outputs.filter((o) => o === MAJORITY_OUTPUT)).toHaveLength(40);
    expect(outputs.filter((o) => o === MINORITY_OUTPUT)).toHaveLength(MAJORITY64_MINORITY_VOTES);
    expect(MAJORITY_OUTPUT).not.toBe(MINORITY_OUTPUT);
  });
});

describe("pickMajority", () => {
  const a = "A";
  const b = "B";
  it.each([
    ["40 A vs 24 B picks A", [...Array<string>(40).fill(a), ...Array<string>(24).fill(b)], a, 40],
    ["24 A vs 40 B picks B", [...Array<string>(24).fill(a), ...Array<string>(40).fill(b)], b, 40],
    ["a 32/32 tie has no majority", [...Array<string>(32).fill(a), ...Array<string>(32).fill(b)], null, 32],
    ["a plurality below half has no majority", [a, a, b, b, "C"], null, 2],
    ["3 of 5 is a majority", [b, a, b, a, b], b, 3],
    ["no votes has no majority", [], null, 0],
  ])("%s", (_name, outputs, expected, count) => {
    const result = pickMajority(votes(outputs));
    expect(result).toEqual({ output: expected, count, total: outputs.length });
  });

  it("gives the same result whatever order the votes arrive in", () => {
    const all = votes(Array.from({ length: 64 }, (_, i) => cannedAgentOutput(i)));
    expect(pickMajority([...all].reverse())).toEqual(pickMajority(all));
    expect(pickMajority(all).output).toBe(MAJORITY_OUTPUT);
  });
});

describe("LangGraph claims topology (a)", () => {
  it("runs the analyst, then the decision maker, and ends with the decision maker's output", async () => {
    const baseline = buildLangGraphClaims();
    const updates = await nodeUpdates(baseline.graph as never, "claims-order");
    expect(updates).toEqual([
      ["analyst", { analysis: ANALYST_OUTPUT }],
      ["decision_maker", { proposal: DECISION_OUTPUT }],
    ]);
    expect(updates).toHaveLength(baseline.nodeExecutionsPerRun);
    const state = await baseline.graph.getState({ configurable: { thread_id: "claims-order" } });
    expect(state.values).toMatchObject({ claim: CLAIM_INPUT, analysis: ANALYST_OUTPUT, proposal: DECISION_OUTPUT });
  });

  it("resolves a run to the proposal and stores its checkpoints in the given MemorySaver", async () => {
    const saver = new MemorySaver();
    const baseline = buildLangGraphClaims(saver);
    await expect(baseline.run("claims-run")).resolves.toBe(DECISION_OUTPUT);
    const sizes = await threadStorageSizes(saver, "claims-run");
    // The final checkpoint carries both nodes' outputs, so it is larger than them together.
    expect(sizes.checkpointBytes).toBeGreaterThan(bytes(ANALYST_OUTPUT) + bytes(DECISION_OUTPUT));
    expect(sizes.threadStoredBytes).toBeGreaterThan(sizes.checkpointBytes);
  });
});

describe("LangGraph majority64 topology (b)", () => {
  it("runs 64 agent nodes, one per agent index, then the vote", async () => {
    const baseline = buildLangGraphMajority64();
    const updates = await nodeUpdates(baseline.graph as never, "majority-order");
    const agentUpdates = updates.filter(([node]) => node === "agent");
    expect(agentUpdates).toHaveLength(MAJORITY64_AGENTS);
    const indices = agentUpdates.map(([, update]) => (update as { votes: AgentVote[] }).votes[0]?.agentIndex);
    expect(new Set(indices)).toEqual(new Set(Array.from({ length: MAJORITY64_AGENTS }, (_, i) => i)));
    expect(updates.at(-1)).toEqual(["vote", { decision: MAJORITY_OUTPUT }]);
    expect(updates).toHaveLength(baseline.nodeExecutionsPerRun);
  });

  it("picks the 40-vote majority output over the 24-vote minority", async () => {
    const baseline = buildLangGraphMajority64();
    await expect(baseline.run("majority-run")).resolves.toBe(MAJORITY_OUTPUT);
    const state = await baseline.graph.getState({ configurable: { thread_id: "majority-run" } });
    const stored = state.values.votes as AgentVote[];
    expect(stored.filter((v) => v.output === MAJORITY_OUTPUT)).toHaveLength(40);
    expect(stored.filter((v) => v.output === MINORITY_OUTPUT)).toHaveLength(24);
  });

  it("counts the latest checkpoint as the bytes MemorySaver stored for it, holding all 64 votes", async () => {
    const saver = new MemorySaver();
    const baseline = buildLangGraphMajority64(saver);
    await baseline.run("majority-size");
    const sizes = await threadStorageSizes(saver, "majority-size");
    const tuple = await saver.getTuple({ configurable: { thread_id: "majority-size" } });
    expect(tuple?.checkpoint.id).toBe(sizes.latestCheckpointId);
    const [, reserialized] = await saver.serde.dumpsTyped(tuple?.checkpoint);
    expect(sizes.checkpointBytes).toBe(reserialized.byteLength);
    expect((tuple?.checkpoint.channel_values["votes"] as AgentVote[]).length).toBe(MAJORITY64_AGENTS);
    expect(sizes.checkpointBytes).toBeGreaterThan(MAJORITY64_AGENTS * bytes(MAJORITY_OUTPUT) * 0.9);
  });

  it("refuses to size a thread MemorySaver never saw", async () => {
    await expect(threadStorageSizes(new MemorySaver(), "nope")).rejects.toThrow(/no checkpoint for thread "nope"/);
  });
});

describe("prepareLangGraph", () => {
  it.each([
    ["claims", 2],
    ["majority64", 65],
  ] as const)(
    "gives %s a contender that runs the graph on fresh threads and cleans them up",
    async (topology, nodes) => {
      const bench = await prepareLangGraph(topology);
      expect(bench.nodeExecutionsPerRun).toBe(nodes);
      expect(bench.contender.unitsPerOp).toBe(nodes);
      expect(bench.sizes.checkpointBytes).toBeGreaterThan(0);
      expect(bench.sizes.checkpoints).toBeGreaterThanOrEqual(3);
      const outputs = [await bench.contender.op(), await bench.contender.op()];
      expect(outputs).toEqual(Array(2).fill(topology === "claims" ? DECISION_OUTPUT : MAJORITY_OUTPUT));
      expect(Object.keys(bench.checkpointer.storage)).toHaveLength(2);
      await bench.contender.after?.();
      expect(
        Object.values(bench.checkpointer.storage).flatMap((ns) => Object.values(ns).flatMap((c) => Object.keys(c))),
      ).toEqual([]);
    },
  );

  it("rejects an unknown topology by name", async () => {
    await expect(prepareLangGraph("ring" as never)).rejects.toThrow(/unknown topology "ring"/);
  });
});
