// Which bench files `npm run bench [-- filter…]` runs.
import { describe, expect, it } from "vitest";
import { selectBenchFiles } from "./run.ts";

const files = [
  "run.ts",
  "cost.ts",
  "cost.bench.ts",
  "kernel.bench.ts",
  "crew.bench.ts",
  "aws-requests.bench.ts",
  "pipeline-bench.test.ts",
];

describe("selectBenchFiles", () => {
  it("runs every *.bench.ts in alphabetical order, so the request profile is counted before it is priced", () => {
    expect(selectBenchFiles(files, [])).toEqual([
      "aws-requests.bench.ts",
      "cost.bench.ts",
      "crew.bench.ts",
      "kernel.bench.ts",
    ]);
  });

  it.each([
    [["kernel"], ["kernel.bench.ts"]],
    [
      ["cost", "crew"],
      ["cost.bench.ts", "crew.bench.ts"],
    ],
    [["nothing"], []],
  ])("narrows to the names containing %j", (filters, expected) => {
    expect(selectBenchFiles(files, filters)).toEqual(expected);
  });
});
