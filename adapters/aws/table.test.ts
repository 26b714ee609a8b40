// The table helpers on dynalite: createTable is idempotent, seedOrders batches and validates.
import { DescribeTableCommand } from "@aws-sdk/client-dynamodb";
import { describe, expect, it } from "vitest";
import { createDynamoPorts } from "./dynamo-ports.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { countRequests, createRequestCounter } from "./request-counter.ts";
import { createTable, isExpired, seedOrders } from "./table.ts";

const aws = useEmulatedAws();

describe("createTable", () => {
  it("creates the single table with gsi1 and leaves an existing one alone", async () => {
    await createTable(aws.dynamo, "claims-table-test");
    await createTable(aws.dynamo, "claims-table-test");
    const { Table } = await aws.dynamo.send(new DescribeTableCommand({ TableName: "claims-table-test" }));
    expect(Table?.KeySchema?.map((k) => `${k.AttributeName}:${k.KeyType}`)).toEqual(["pk:HASH", "sk:RANGE"]);
    expect(Table?.GlobalSecondaryIndexes?.map((i) => [i.IndexName, i.KeySchema?.map((k) => k.AttributeName)])).toEqual([
      ["gsi1", ["gsi1pk", "gsi1sk"]],
    ]);
  });

  it("names the table when creation fails", async () => {
    await expect(createTable(aws.dynamo, "x")).rejects.toMatchObject({
      code: "TABLE_SETUP_FAILED",
      message: expect.stringContaining("x"),
    });
  });
});

describe("seedOrders", () => {
  it("writes 60 orders in batches of 25 that the context store then reads", async () => {
    const tableName = await aws.newTable();
    const orders = Array.from({ length: 60 }, (_, i) => ({
      order_id: `ord_${String(i).padStart(2, "0")}`,
      purchase_date: "2025-02-01",
      category: "books",
      amount: 10 + i,
    }));
    const counter = createRequestCounter();
    const remove = countRequests(aws.doc, counter);
    try {
      await seedOrders(aws.doc, tableName, orders);
    } finally {
      remove();
    }
    expect(counter.snapshot().byService.DynamoDB).toEqual({ BatchWriteItem: 3 });
    const store = createDynamoPorts({ client: aws.doc, tableName, pageSize: 7 }).orders;
    const snapshot = await store.snapshot();
    expect(Object.keys(snapshot.orders)).toHaveLength(60);
    expect(await store.getOrder("ord_42")).toEqual({
      order_id: "ord_42",
      purchase_date: "2025-02-01",
      category: "books",
      amount: 52,
      currency: "EUR",
    });
  });

  it("writes nothing when one order is invalid", async () => {
    const tableName = await aws.newTable();
    const orders = [
      { order_id: "ord_ok", purchase_date: "2025-02-01", category: "books", amount: 10 },
      { order_id: "ord_bad", purchase_date: "soon", category: "books", amount: 10 },
    ];
    await expect(seedOrders(aws.doc, tableName, orders)).rejects.toThrow(/ord_bad/);
    expect(await createDynamoPorts({ client: aws.doc, tableName }).orders.getOrder("ord_ok")).toBeUndefined();
  });
});

describe("isExpired", () => {
  it.each([
    [{ expires_at: 100 }, 99_000, false],
    [{ expires_at: 100 }, 100_000, true],
    [{ expires_at: 100 }, 101_500, true],
    [{}, 1e15, false],
    [undefined, 0, false],
  ])("%j at %d ms is expired: %s", (item, now, expired) => {
    expect(isExpired(item as Record<string, unknown> | undefined, now)).toBe(expired);
  });
});
