// The harness on a simulated meter: the order contenders take turns in, what is timed and what is
// not, calibration, per-unit figures, the quoted low end and the per-round ratios (no real timing).
import { describe, expect, it } from "vitest";
import { compare, formatTable, interleave, quantile, ratio, ratioText, roundOrder, timed } from "./harness.ts";
import type { Contender, Meter } from "./harness.ts";

/** A meter whose clocks only move when a simulated op spends time. */
function simulatedMeter() {
  let cpuNs = 0;
  let wallNs = 0;
  const meter: Meter = () => ({ cpuNs, wallNs });
  const spend = (cpu: number, wall = cpu) => {
    cpuNs += cpu;
    wallNs += wall;
  };
  return { meter, spend };
}

describe("roundOrder", () => {
  it.each([
    [0, ["a", "b", "c"]],
    [1, ["b", "c", "a"]],
    [2, ["c", "a", "b"]],
    [3, ["a", "b", "c"]],
  ])("rotates the contenders by one each round (round %i)", (round, expected) => {
    expect(roundOrder(["a", "b", "c"], round)).toEqual(expected);
  });
});

describe("interleave", () => {
  it("takes one sample of each contender per round, in rotating order, with before/after outside the timing", async () => {
    const { meter, spend } = simulatedMeter();
    const log: string[] = [];
    const contender = (name: string, cost: number): Contender => ({
      name,
      opsPerSample: 2,
      op: () => {
        log.push(`${name}.op`);
        spend(cost);
      },
      before: () => {
        log.push(`${name}.before`);
        spend(1_000_000); // untimed work must not count
      },
      after: () => void log.push(`${name}.after`),
    });
    const [a, b] = await interleave([contender("a", 10), contender("b", 30)], { rounds: 2, warmupRounds: 0, meter });
    expect(log).toEqual([
      "a.before",
      "a.op",
      "a.op",
      "a.after",
      "b.before",
      "b.op",
      "b.op",
      "b.after",
      "b.before",
      "b.op",
      "b.op",
      "b.after",
      "a.before",
      "a.op",
      "a.op",
      "a.after",
    ]);
    expect(a!.cpuNsPerUnit).toEqual([10, 10]);
    expect(b!.cpuNsPerUnit).toEqual([30, 30]);
  });

  it("times a contender with its own meter when it has one (work done in another process)", async () => {
    const here = simulatedMeter();
    const there = simulatedMeter();
    const [local, remote] = await interleave(
      [
        { name: "local", opsPerSample: 1, op: () => here.spend(10) },
        { name: "remote", opsPerSample: 1, meter: there.meter, op: () => (here.spend(1), there.spend(500)) },
      ],
      { rounds: 2, warmupRounds: 0, meter: here.meter },
    );
    expect(local!.cpuNsPerUnit).toEqual([10, 10]);
    expect(remote!.cpuNsPerUnit).toEqual([500, 500]);
  });

  it("reports per unit, quotes the lowest round and keeps the median and highest", async () => {
    const { meter, spend } = simulatedMeter();
    const costs = [120, 100, 200, 110];
    let sampleIndex = 0;
    const [r] = await interleave(
      [
        {
          name: "steps",
          opsPerSample: 1,
          unitsPerOp: 4,
          op: () => spend(costs[sampleIndex++]! * 4, costs[sampleIndex - 1]! * 8),
        },
      ],
      { rounds: 4, warmupRounds: 0, meter },
    );
    expect(r!.cpuNsPerUnit).toEqual([120, 100, 200, 110]);
    expect(r).toMatchObject({ lowCpuNs: 100, medianCpuNs: 110, highCpuNs: 200, medianWallNs: 220 });
  });

  it("calibrates ops per sample after warm-up so a sample lasts about the target", async () => {
    const { meter, spend } = simulatedMeter();
    let calls = 0;
    const [r] = await interleave([{ name: "tiny", op: () => void (calls++, spend(1_000)) }], {
      rounds: 3,
      warmupRounds: 1,
      targetSampleMs: 1,
      meter,
    });
    expect(r!.opsPerSample).toBe(1000); // 1 ms ÷ 1 µs
    expect(calls).toBe(1 + 1 + 3 * 1000); // warm-up, calibration, timed rounds
    expect(r!.cpuNsPerUnit).toEqual([1000, 1000, 1000]);
  });

  it("awaits asynchronous ops inside the timed region", async () => {
    const { meter, spend } = simulatedMeter();
    const [r] = await interleave(
      [
        {
          name: "async",
          opsPerSample: 1,
          op: async () => {
            await Promise.resolve();
            spend(50);
          },
        },
      ],
      { rounds: 2, warmupRounds: 0, meter },
    );
    expect(r!.cpuNsPerUnit).toEqual([50, 50]);
  });

  it("refuses nonsense options by name", async () => {
    await expect(interleave([])).rejects.toThrow(/no contenders/);
    await expect(interleave([{ name: "x", op: () => 0 }], { rounds: 0 })).rejects.toThrow(
      /rounds must be an integer >= 1/,
    );
    await expect(interleave([{ name: "x", op: () => 0, opsPerSample: 0.5 }])).rejects.toThrow(/x opsPerSample/);
  });
});

describe("compare", () => {
  const result = (name: string, cpu: number[]) => ({
    name,
    opsPerSample: 1,
    unitsPerOp: 1,
    cpuNsPerUnit: cpu,
    wallNsPerUnit: cpu,
    lowCpuNs: Math.min(...cpu),
    medianCpuNs: quantile(
      [...cpu].sort((x, y) => x - y),
      0.5,
    ),
    highCpuNs: Math.max(...cpu),
    medianWallNs: 0,
  });

  it("quotes the ratio of the low ends and gives the spread of the per-round ratios", () => {
    const c = compare(result("langgraph", [1000, 1500, 900]), result("ours", [10, 12, 10]));
    expect(c.quoted).toBe(90);
    expect(c).toMatchObject({ low: 90, median: 100, high: 125 });
    expect(ratioText(c)).toBe("90.0× (90.0–125)");
  });

  it("refuses results from different rounds", () => {
    expect(() => compare(result("a", [1, 2]), result("b", [1]))).toThrow(/not measured in the same rounds/);
  });
});

describe("timed", () => {
  it("returns the value and the time spent producing it", async () => {
    const { meter, spend } = simulatedMeter();
    const t = await timed(async () => {
      spend(70, 100);
      return "done";
    }, meter);
    expect(t).toEqual({ value: "done", cpuNs: 70, wallNs: 100 });
  });
});

describe("tables and ratios", () => {
  it("takes the nearest-rank median and p95", () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(quantile(sorted, 0.5)).toBe(50);
    expect(quantile(sorted, 0.95)).toBe(95);
    expect(quantile([7], 0.95)).toBe(7);
    expect(() => quantile([], 0.5)).toThrow(/no samples/);
  });

  it("formats an aligned markdown table with right-aligned numeric columns", () => {
    expect(
      formatTable([
        { name: "a", us: 1.5 },
        { name: "longer", us: 1234 },
      ]),
    ).toBe(["| name   |   us |", "| ------ | ---: |", "| a      | 1.50 |", "| longer | 1234 |"].join("\n"));
  });

  it.each([
    [6, 3, 2],
    [1, 4, 0.25],
  ])("ratio(%d, %d) is %d", (a, b, expected) => {
    expect(ratio(a, b)).toBe(expected);
  });

  it.each([
    [1, 0, /divisor must be > 0/],
    [Number.NaN, 1, /finite/],
  ])("ratio(%d, %d) throws", (a, b, message) => {
    expect(() => ratio(a, b)).toThrow(message);
  });
});
