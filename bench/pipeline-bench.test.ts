// The pipeline bench's in-process side and its options (the stack side runs through lib/stack.ts,
// exercised by aws-requests-bench.test.ts); no timing.
import { describe, expect, it } from "vitest";
import { inProcessRound, pipelineBenchOptions } from "./pipeline.bench.ts";

describe("inProcessRound", () => {
  it.each([
    ["structured", "sequential"],
    ["free_text", "batch"],
  ] as const)("decides every %s claim ACCEPT (%s) and gives each one's latency", async (kind, mode) => {
    const round = inProcessRound(kind, 3, mode);
    await round.run();
    const r = await round.result();
    expect(r).toMatchObject({ kind, mode, claims: 3 });
    expect(r.latenciesMs).toHaveLength(3);
    expect(r.latenciesMs.every((ms) => ms > 0 && ms <= r.wallMs)).toBe(true);
  });

  it("refuses to report a round that was not run", async () => {
    await expect(inProcessRound("structured", 2, "batch").result()).rejects.toThrow(
      /0 of 2 in-process claims were submitted/,
    );
  });
});

describe("pipelineBenchOptions", () => {
  it("reads its sizes from the environment and names a bad one", () => {
    expect(pipelineBenchOptions({})).toEqual({ rounds: 3, claims: 50, inFlight: 10, sequential: 10 });
    expect(pipelineBenchOptions({ PIPELINE_BENCH_CLAIMS: "20", PIPELINE_BENCH_ROUNDS: "1" })).toMatchObject({
      claims: 20,
      rounds: 1,
    });
    expect(() => pipelineBenchOptions({ PIPELINE_BENCH_IN_FLIGHT: "1" })).toThrow(
      /PIPELINE_BENCH_IN_FLIGHT must be an integer ≥ 2/,
    );
  });
});
