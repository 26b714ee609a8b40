// The retention watermark on DynamoDB: absent before the first complete run, then read back by another sweep, and
// never moved back by an overlapping run that finished later with an earlier cutoff.
import { describe, expect, it } from "vitest";
import { createDynamoRetentionWatermark } from "./dynamo-retention.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";

const aws = useEmulatedAws();

describe("the retention watermark on DynamoDB", () => {
  it("starts absent, is read by another sweep, and only moves forward", async () => {
    const tableName = await aws.newTable();
    const one = createDynamoRetentionWatermark({ client: aws.doc, tableName });
    const other = createDynamoRetentionWatermark({ client: aws.doc, tableName });
    expect(await one.erasedBefore()).toBeUndefined();
    await one.advance("2026-06-01T12:05:00.000Z");
    expect(await other.erasedBefore()).toBe("2026-06-01T12:05:00.000Z");
    await other.advance("2026-06-01T12:00:00.000Z");
    expect(await one.erasedBefore()).toBe("2026-06-01T12:05:00.000Z");
    await other.advance("2026-06-01T12:10:00.000Z");
    expect(await one.erasedBefore()).toBe("2026-06-01T12:10:00.000Z");
  });
});
