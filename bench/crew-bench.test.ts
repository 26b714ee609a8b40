import { describe, expect, it } from "vitest";
import { MAJORITY64_AGENTS, MAJORITY_OUTPUT, MINORITY_OUTPUT } from "./langgraph-baseline.ts";
import {
  checkRun,
  crewBenchScenarios,
  crewContender,
  MAJORITY64_SNAPSHOT_BUDGET_BYTES,
  runCrew,
  snapshotStats,
} from "./crew.bench.ts";
import type { CrewBenchKey, CrewBenchScenario } from "./crew.bench.ts";

const scenarios = crewBenchScenarios();
const scenario = (key: CrewBenchKey): CrewBenchScenario => scenarios.find((s) => s.key === key)!;

describe("crew bench scenarios", () => {
  it.each([
    ["claims", 2, "CLAIMS_CREW"],
    ["majority64", 64, "MAJORITY64"],
    ["nested3", 16, "CASE"],
  ] as const)("%s delivers %i steps on graph %s", (key, steps, graphName) => {
    const s = scenario(key);
    expect(s.steps).toBe(steps);
    expect(s.graph.name).toBe(graphName);
  });

  it.each(scenarios.flatMap((s) => (["deliver", "roundtrip"] as const).map((mode) => [s.key, mode, s] as const)))(
    "%s (%s) completes with its expected output after exactly its steps, run after run",
    (_key, mode, s) => {
      for (let i = 0; i < 3; i++) {
        const result = runCrew(s, mode);
        expect(result).toMatchObject({ status: "completed", output: s.expectedOutput, steps: s.steps });
        expect(() => checkRun(s, mode, result)).not.toThrow();
      }
    },
  );

  it.each([1, 3, 10, 64])(
    "majority64 completes with the majority output when each round trip takes %i answers",
    (batch) => {
      const s = scenario("majority64");
      expect(runCrew(s, "roundtrip", { batch })).toMatchObject({
        status: "completed",
        output: MAJORITY_OUTPUT,
        steps: MAJORITY64_AGENTS,
      });
    },
  );

  it.each(scenarios.map((s) => [s.key, s] as const))(
    "%s: a stepped run's snapshots (stepCrewMany through JSON) have the in-memory run's sizes, step by step",
    (_key, s) => {
      const deliver = runCrew(s, "deliver", { recordSizes: true });
      const roundtrip = runCrew(s, "roundtrip", { recordSizes: true });
      expect(deliver.snapshotBytes).toHaveLength(s.steps + 1);
      expect(roundtrip.snapshotBytes).toEqual(deliver.snapshotBytes);
    },
  );

  it("keeps the 64-agent snapshot within 16 KB while it still holds every answer received", () => {
    const s = scenario("majority64");
    const sizes = runCrew(s, "roundtrip", { recordSizes: true }).snapshotBytes;
    const stats = snapshotStats(sizes);
    expect(stats.peak).toBeLessThanOrEqual(MAJORITY64_SNAPSHOT_BUDGET_BYTES);
    // the peak is the state with 63 answers in: it must really carry them (~200 bytes each)
    expect(stats.peak).toBe(sizes[MAJORITY64_AGENTS - 1]);
    expect(stats.peak).toBeGreaterThan(63 * Buffer.byteLength(MAJORITY_OUTPUT));
    expect(stats.final).toBeLessThan(stats.afterStart + Buffer.byteLength(JSON.stringify(MAJORITY_OUTPUT)));
  });

  it("reports a run that ends with another output as wrong", () => {
    const s = scenario("majority64");
    const dissent: CrewBenchScenario = {
      ...s,
      answer: (req) => ({
        type: "agent.step.completed",
        crewId: req.crewId,
        correlationId: req.correlationId,
        output: MINORITY_OUTPUT,
      }),
    };
    const result = runCrew(dissent, "deliver");
    expect(result.output).toBe(MINORITY_OUTPUT);
    expect(() => checkRun(s, "deliver", result)).toThrow(/not the expected one/);
  });

  it("reports a run that does not complete as wrong", () => {
    const s = scenario("claims");
    const failing: CrewBenchScenario = {
      ...s,
      answer: (req) => ({
        type: "agent.step.failed",
        crewId: req.crewId,
        correlationId: req.correlationId,
        error: { message: "down" },
      }),
    };
    const result = runCrew(failing, "roundtrip");
    expect(result.status).toBe("failed");
    expect(() => checkRun(s, "roundtrip", result)).toThrow(/status failed/);
  });

  it.each([
    [[500, 700, 900, 300], { afterStart: 500, medianRunning: 700, peak: 900, final: 300, writtenPerRun: 2400 }],
    [[10, 20], { afterStart: 10, medianRunning: 10, peak: 10, final: 20, writtenPerRun: 30 }],
  ])("snapshotStats(%j) separates start, running and final sizes", (bytes, expected) => {
    expect(snapshotStats(bytes)).toEqual(expected);
  });

  it.each([
    ["deliver", 64],
    ["batched", 64],
  ] as const)("times whole majority64 runs (%s) per step and checks the last run of each sample", (mode, steps) => {
    const c = crewContender(scenario("majority64"), mode);
    expect(c.unitsPerOp).toBe(steps);
    expect(c.op()).toMatchObject({ status: "completed", output: MAJORITY_OUTPUT, steps });
    expect(() => c.after?.()).not.toThrow();
  });

  it("fails a sample whose runs go wrong", () => {
    const s = scenario("claims");
    const failing: CrewBenchScenario = {
      ...s,
      answer: (req) => ({
        type: "agent.step.failed",
        crewId: req.crewId,
        correlationId: req.correlationId,
        error: { message: "down" },
      }),
    };
    const c = crewContender(failing, "roundtrip");
    c.op();
    expect(() => c.after?.()).toThrow(/status failed/);
  });
});
