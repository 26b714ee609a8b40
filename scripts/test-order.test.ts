// The order `npm test` starts its files in (scripts/test-order.ts): longest first, quick files together, new files
// first; and the committed durations name only test files that exist.
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { committedDurations, DURATIONS_FILE, durationsFromReport, startOrder } from "./test-order.ts";
import { testFiles } from "./test-tiers.ts";

const file = (path: string, ms: number | undefined, quick = false) => ({ path, ms, quick });
const paths = (files: readonly { path: string }[]) => files.map((f) => f.path);

describe("the order npm test starts its files in", () => {
  it("starts the long slow files first, then the quick ones, then the other slow ones", () => {
    const order = startOrder([
      file("a.test.ts", 5_000),
      file("b.e2e.test.ts", 90_000),
      file("c.test.ts", 12_000, true),
      file("d.test.ts", 300, true),
      file("e.e2e.test.ts", 20_000),
      file("f.test.ts", 12_000),
    ]);
    expect(paths(order)).toEqual([
      "b.e2e.test.ts",
      "e.e2e.test.ts",
      "c.test.ts",
      "d.test.ts",
      "f.test.ts",
      "a.test.ts",
    ]);
  });

  it("keeps the quick files together, whatever their times", () => {
    const order = startOrder([
      file("q1.test.ts", 100, true),
      file("s1.test.ts", 50),
      file("q2.test.ts", 40_000, true),
      file("s2.test.ts", 39_000),
      file("q3.test.ts", undefined, true),
    ]);
    const quick = order.map((f, i) => (f.quick ? i : -1)).filter((i) => i >= 0);
    expect(quick).toEqual([1, 2, 3]);
    expect(paths(order)).toEqual(["s2.test.ts", "q3.test.ts", "q2.test.ts", "q1.test.ts", "s1.test.ts"]);
  });

  it("keeps the slow files that share a worker together, after the other short slow files", () => {
    const shared = (path: string, ms: number) => ({ ...file(path, ms), shared: true });
    const order = startOrder([
      shared("s1.test.ts", 4_000),
      file("i1.test.ts", 5_000),
      shared("s2.test.ts", 6_000),
      file("i2.test.ts", 3_000),
      file("q.test.ts", 7_000, true),
      shared("long.e2e.test.ts", 60_000),
    ]);
    expect(paths(order)).toEqual([
      "long.e2e.test.ts",
      "q.test.ts",
      "i1.test.ts",
      "i2.test.ts",
      "s2.test.ts",
      "s1.test.ts",
    ]);
  });

  it("starts the slow files a quarter as long as the longest file before the quick ones, however long a quick one is", () => {
    const order = startOrder([
      file("q.test.ts", 150_000, true),
      file("s1.e2e.test.ts", 140_000),
      file("s2.e2e.test.ts", 40_000),
      file("s3.test.ts", 30_000),
    ]);
    expect(paths(order)).toEqual(["s1.e2e.test.ts", "s2.e2e.test.ts", "q.test.ts", "s3.test.ts"]);
  });

  it("starts a file never timed first, in the path order when times are equal", () => {
    const order = startOrder([file("z.test.ts", 1_000), file("new.e2e.test.ts", undefined), file("y.test.ts", 1_000)]);
    expect(paths(order)).toEqual(["new.e2e.test.ts", "y.test.ts", "z.test.ts"]);
  });

  it("reads each file's wall time from a JSON report, by its path from the root", () => {
    const report = {
      testResults: [
        { name: "/repo/local/b.e2e.test.ts", startTime: 1_000, endTime: 61_000.4 },
        { name: "/repo/core/a.test.ts", startTime: 5_000, endTime: 5_250 },
      ],
    };
    expect(durationsFromReport(report, "/repo")).toEqual({ "core/a.test.ts": 250, "local/b.e2e.test.ts": 60_000 });
  });
});

describe(`the committed durations (${DURATIONS_FILE})`, () => {
  const committed = committedDurations();

  it("name only test files that exist", () => {
    expect(committed.size).toBeGreaterThan(0);
    expect([...committed.keys()].filter((p) => !existsSync(p) || !p.endsWith(".test.ts"))).toEqual([]);
  });

  // A file added since runs first until the list is written again (npm run test:durations).
  it("time nine test files in ten at least", () => {
    const all = testFiles();
    expect(all.filter((p) => !committed.has(p)).length).toBeLessThan(all.length / 10);
  });
});
