// The Batch API journal on DynamoDB: a request's batch found again by another worker, forgotten only when it is still
// the one recorded, gone once its two days are over.
import { describe, expect, it } from "vitest";
import { createDynamoBatchJournal } from "./dynamo-llm-batches.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";

const aws = useEmulatedAws();

describe("the Batch API journal on DynamoDB", () => {
  it("finds a request's batch from another worker, forgets it only while it is the one recorded, and drops it after two days", async () => {
    const tableName = await aws.newTable();
    let now = Date.UTC(2026, 11, 7, 8, 0, 0);
    const clock = { now: () => now };
    const one = createDynamoBatchJournal({ client: aws.doc, tableName, clock });
    const other = createDynamoBatchJournal({ client: aws.doc, tableName, clock });
    expect(await one.get("claims-abc")).toBeUndefined();
    await one.put("claims-abc", "batch_1");
    expect(await other.get("claims-abc")).toBe("batch_1");
    await other.put("claims-abc", "batch_2");
    await one.forget("claims-abc", "batch_1");
    expect(await one.get("claims-abc")).toBe("batch_2");
    await one.forget("claims-abc", "batch_2");
    expect(await other.get("claims-abc")).toBeUndefined();
    await one.put("claims-def", "batch_3");
    now += 2 * 86_400_000;
    expect(await other.get("claims-def")).toBeUndefined();
  });
});
