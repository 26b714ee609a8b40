// Claims on dynalite beyond the shared contract: idempotency keys expire (filtered on read, no TTL in
// dynalite), a crash between the key and the claim is repaired, the status index follows the claim,
// and findStalledClaims pages through the index.
import { DeleteCommand, GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { claimFixture } from "./contract.test-kit.ts";
import { createDynamoPorts } from "./dynamo-ports.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { countRequests, createRequestCounter } from "./request-counter.ts";
import { keys } from "./table.ts";

const aws = useEmulatedAws();

async function setup(options: { pageSize?: number; idempotencyTtlMs?: number } = {}) {
  const tableName = await aws.newTable();
  let now = Date.parse("2025-03-01T10:00:00.000Z");
  const clock = { now: () => now };
  const { claims } = createDynamoPorts({ client: aws.doc, tableName, clock, ...options });
  const raw = async (key: { pk: string; sk: string }) => (await aws.doc.send(new GetCommand({ TableName: tableName, Key: key }))).Item;
  return { tableName, claims, raw, advance: (ms: number) => (now += ms) };
}

describe("DynamoDB claims", () => {
  it("forgets an idempotency key after its TTL even though the item is still in the table", async () => {
    const { claims, raw, advance } = await setup({ idempotencyTtlMs: 3600_000 });
    await claims.createClaim(claimFixture("clm_1"), { key: "k", requestHash: "h" });
    advance(3599_000);
    expect(await claims.createClaim(claimFixture("clm_2"), { key: "k", requestHash: "h" })).toMatchObject({ created: false, record: { claim_id: "clm_1" } });
    advance(2_000);
    expect(await raw(keys.idempotency("k"))).toMatchObject({ claim_id: "clm_1" });
    expect(await claims.createClaim(claimFixture("clm_3"), { key: "k", requestHash: "h" })).toMatchObject({ created: true, record: { claim_id: "clm_3" } });
    expect(await raw(keys.idempotency("k"))).toMatchObject({ claim_id: "clm_3" });
  });

  it("repairs a first request that stored its idempotency key but crashed before the claim", async () => {
    const { tableName, claims } = await setup();
    const first = claimFixture("clm_1");
    await claims.createClaim(first, { key: "k", requestHash: "h" });
    await aws.doc.send(new DeleteCommand({ TableName: tableName, Key: keys.claim("clm_1") })); // as if the claim put never happened
    expect(await claims.getClaim("clm_1")).toBeUndefined();
    expect(await claims.createClaim(claimFixture("clm_2"), { key: "k", requestHash: "h" })).toEqual({ created: false, record: first, sameRequest: true });
    expect(await claims.getClaim("clm_1")).toEqual(first);
    expect(await claims.getClaim("clm_2")).toBeUndefined();
  });

  it("releases the idempotency key when the claim id is already taken by another claim", async () => {
    const { claims, raw } = await setup();
    const other = claimFixture("clm_1", { received_at: "2025-02-01T00:00:00.000Z" });
    await claims.createClaim(other);
    expect(await claims.createClaim(claimFixture("clm_1"), { key: "k", requestHash: "h" })).toEqual({ created: false, record: other, sameRequest: false });
    expect(await raw(keys.idempotency("k"))).toBeUndefined();
  });

  it.each([
    { status: "RECEIVED" as const, index: { gsi1pk: "STATUS#RECEIVED", gsi1sk: "2025-03-01T10:00:00.000Z#clm_1" } },
    { status: "RUNNING" as const, index: { gsi1pk: "STATUS#RUNNING", gsi1sk: "2025-03-01T10:00:00.000Z#clm_1" } },
    { status: "DECIDED" as const, index: { gsi1pk: undefined, gsi1sk: undefined } },
    { status: "NEEDS_REVIEW" as const, index: { gsi1pk: undefined, gsi1sk: undefined } },
  ])("lists a $status claim in the status index as $index.gsi1pk", async ({ status, index }) => {
    const { claims, raw } = await setup();
    await claims.createClaim(claimFixture("clm_1", { status }));
    const item = await raw(keys.claim("clm_1"));
    expect({ gsi1pk: item?.gsi1pk, gsi1sk: item?.gsi1sk }).toEqual(index);
  });

  it("keeps the index in step through partial patches and drops it on a final status", async () => {
    const { claims, raw } = await setup();
    await claims.createClaim(claimFixture("clm_1"));
    await claims.updateClaim("clm_1", { updated_at: "2025-03-01T10:05:00.000Z" });
    expect(await raw(keys.claim("clm_1"))).toMatchObject({ gsi1pk: "STATUS#RECEIVED", gsi1sk: "2025-03-01T10:05:00.000Z#clm_1" });
    await claims.updateClaim("clm_1", { status: "RUNNING" });
    expect(await raw(keys.claim("clm_1"))).toMatchObject({ gsi1pk: "STATUS#RUNNING", gsi1sk: "2025-03-01T10:05:00.000Z#clm_1" });
    await claims.updateClaim("clm_1", { status: "DECIDED", verdict: "ACCEPT", updated_at: "2025-03-01T10:06:00.000Z" });
    const item = await raw(keys.claim("clm_1"));
    expect(item?.gsi1pk).toBeUndefined();
    expect(item?.gsi1sk).toBeUndefined();
  });

  it("refuses a patch that names a table attribute", async () => {
    const { claims } = await setup();
    await claims.createClaim(claimFixture("clm_1"));
    await expect(claims.updateClaim("clm_1", { pk: "X" } as never)).rejects.toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringMatching(/pk/) });
  });

  it("pages through the status index for stalled claims and stops at the limit", async () => {
    const { claims } = await setup({ pageSize: 2 });
    for (let i = 0; i < 9; i++) await claims.createClaim(claimFixture(`clm_${i}`, { status: i % 2 ? "RUNNING" : "RECEIVED", updated_at: `2025-03-01T10:0${i}:00.000Z` }));
    const counter = createRequestCounter();
    const remove = countRequests(aws.doc, counter);
    try {
      const all = await claims.findStalledClaims("2025-03-01T11:00:00.000Z", 100);
      expect(all.map((c) => c.claim_id)).toEqual(Array.from({ length: 9 }, (_, i) => `clm_${i}`));
      expect(counter.snapshot().byService.DynamoDB?.Query).toBeGreaterThanOrEqual(5);
      counter.reset();
      expect((await claims.findStalledClaims("2025-03-01T11:00:00.000Z", 3)).map((c) => c.claim_id)).toEqual(["clm_0", "clm_1", "clm_2"]);
      expect(counter.snapshot().byService.DynamoDB?.Query).toBeLessThanOrEqual(4);
    } finally {
      remove();
    }
  });

  it("creates a claim with one request and updates it with one", async () => {
    const { claims } = await setup();
    const counter = createRequestCounter();
    const remove = countRequests(aws.doc, counter);
    try {
      await claims.createClaim(claimFixture("clm_1"));
      await claims.updateClaim("clm_1", { status: "RUNNING", updated_at: "2025-03-01T10:00:01.000Z" }, ["RECEIVED"]);
      expect(counter.snapshot()).toEqual({ total: 2, byService: { DynamoDB: { PutItem: 1, UpdateItem: 1 } } });
    } finally {
      remove();
    }
  });
});
