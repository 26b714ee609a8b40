import { describe, expect, it } from "vitest";
import { InvalidBatchResponseError } from "./errors.ts";
import { parseBatchResponse } from "./poller.ts";

// Lambda's rules for ReportBatchItemFailures: what counts as success, partial failure, or a
// response that fails the whole batch.
const ids = new Set(["m1", "m2", "m3"]);

const cases: ReadonlyArray<readonly [name: string, result: unknown, failed: readonly string[] | "invalid"]> = [
  ["no return value is a full success", undefined, []],
  ["null is a full success", null, []],
  ["an empty object is a full success", {}, []],
  ["a null batchItemFailures is a full success", { batchItemFailures: null }, []],
  ["an empty batchItemFailures is a full success", { batchItemFailures: [] }, []],
  [
    "listed ids are the failures",
    { batchItemFailures: [{ itemIdentifier: "m2" }, { itemIdentifier: "m3" }] },
    ["m2", "m3"],
  ],
  ["an id outside the batch fails the batch", { batchItemFailures: [{ itemIdentifier: "m9" }] }, "invalid"],
  ["an empty id fails the batch", { batchItemFailures: [{ itemIdentifier: "" }] }, "invalid"],
  ["a null id fails the batch", { batchItemFailures: [{ itemIdentifier: null }] }, "invalid"],
  ["a wrongly named key fails the batch", { batchItemFailures: [{ itemId: "m1" }] }, "invalid"],
  ["a non-array batchItemFailures fails the batch", { batchItemFailures: "m1" }, "invalid"],
  ["a string response fails the batch", "ok", "invalid"],
  ["an array response fails the batch", [{ itemIdentifier: "m1" }], "invalid"],
];

describe("parseBatchResponse", () => {
  it.each(cases)("%s", (_name, result, expected) => {
    const parsed = parseBatchResponse(result, ids);
    if (expected === "invalid") {
      expect(parsed).toBeInstanceOf(InvalidBatchResponseError);
    } else {
      expect(parsed).not.toBeInstanceOf(InvalidBatchResponseError);
      expect([...(parsed as ReadonlySet<string>)].sort()).toEqual([...expected]);
    }
  });
});
