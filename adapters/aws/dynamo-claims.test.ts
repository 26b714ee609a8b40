// Claims on dynalite beyond the shared contract: idempotency keys expire (filtered on read, no TTL in
// dynalite), a crash between the key and the claim is repaired, the listing entry stays put while a claim
// is open and moves once when it is final, claims listed by the first layout are still found, listClaims
// reads no more of the index than a page needs, and the open claims are counted.
import { DeleteCommand, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { claimFixture } from "./contract.test-kit.ts";
import { claimIndexShard, countOpenClaims } from "./dynamo-claims.ts";
import { createDynamoPorts } from "./dynamo-ports.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { countRequests, createRequestCounter } from "./request-counter.ts";
import { keys, OPEN_CLAIM_SHARDS, stripUndefined } from "./table.ts";

const aws = useEmulatedAws();

async function setup(options: { pageSize?: number; idempotencyTtlMs?: number } = {}) {
  const tableName = await aws.newTable();
  let now = Date.parse("2025-03-01T10:00:00.000Z");
  const clock = { now: () => now };
  const { claims } = createDynamoPorts({ client: aws.doc, tableName, clock, ...options });
  const raw = async (key: { pk: string; sk: string }) =>
    (await aws.doc.send(new GetCommand({ TableName: tableName, Key: key }))).Item;
  return { tableName, claims, raw, advance: (ms: number) => (now += ms) };
}

describe("DynamoDB claims", () => {
  it("forgets an idempotency key after its TTL even though the item is still in the table", async () => {
    const { claims, raw, advance } = await setup({ idempotencyTtlMs: 3600_000 });
    await claims.createClaim(claimFixture("clm_1"), { key: "k", requestHash: "h" });
    advance(3599_000);
    expect(await claims.createClaim(claimFixture("clm_2"), { key: "k", requestHash: "h" })).toMatchObject({
      created: false,
      record: { claim_id: "clm_1" },
    });
    advance(2_000);
    expect(await raw(keys.idempotency("k"))).toMatchObject({ claim_id: "clm_1" });
    expect(await claims.createClaim(claimFixture("clm_3"), { key: "k", requestHash: "h" })).toMatchObject({
      created: true,
      record: { claim_id: "clm_3" },
    });
    expect(await raw(keys.idempotency("k"))).toMatchObject({ claim_id: "clm_3" });
  });

  it("repairs a first request that stored its idempotency key but crashed before the claim", async () => {
    const { tableName, claims } = await setup();
    const first = claimFixture("clm_1");
    await claims.createClaim(first, { key: "k", requestHash: "h" });
    await aws.doc.send(new DeleteCommand({ TableName: tableName, Key: keys.claim("clm_1") })); // as if the claim put never happened
    expect(await claims.getClaim("clm_1")).toBeUndefined();
    expect(await claims.createClaim(claimFixture("clm_2"), { key: "k", requestHash: "h" })).toEqual({
      created: false,
      record: first,
      sameRequest: true,
    });
    expect(await claims.getClaim("clm_1")).toEqual(first);
    expect(await claims.getClaim("clm_2")).toBeUndefined();
  });

  it("releases the idempotency key when the claim id is already taken by another claim", async () => {
    const { claims, raw } = await setup();
    const other = claimFixture("clm_1", { received_at: "2025-02-01T00:00:00.000Z" });
    await claims.createClaim(other);
    expect(await claims.createClaim(claimFixture("clm_1"), { key: "k", requestHash: "h" })).toEqual({
      created: false,
      record: other,
      sameRequest: false,
    });
    expect(await raw(keys.idempotency("k"))).toBeUndefined();
  });

  it.each([
    { status: "RECEIVED" as const, partition: "OPEN" },
    { status: "RUNNING" as const, partition: "OPEN" },
    { status: "DECIDED" as const, partition: "DONE" },
    { status: "NEEDS_REVIEW" as const, partition: "DONE" },
  ])("lists a $status claim under $partition by its receipt", async ({ status, partition }) => {
    const { claims, raw } = await setup();
    await claims.createClaim(claimFixture("clm_1", { status, updated_at: "2025-03-01T10:09:00.000Z" }));
    const item = await raw(keys.claim("clm_1"));
    expect({ gsi1pk: item?.gsi1pk, gsi1sk: item?.gsi1sk }).toEqual({
      gsi1pk: `${partition}#${claimIndexShard("clm_1")}`,
      gsi1sk: "2025-03-01T10:00:00.000Z#clm_1",
    });
  });

  it("spreads claims over every open-claims partition", () => {
    const shards = new Set(Array.from({ length: 200 }, (_, i) => claimIndexShard(`clm_${i}`)));
    expect([...shards].sort()).toEqual(Array.from({ length: OPEN_CLAIM_SHARDS }, (_, i) => i));
  });

  it("keeps an open claim's index entry where it is through every update, and moves it to the final listing in the update that ends it", async () => {
    const { claims, raw } = await setup();
    await claims.createClaim(claimFixture("clm_1"));
    const listed = { gsi1pk: `OPEN#${claimIndexShard("clm_1")}`, gsi1sk: "2025-03-01T10:00:00.000Z#clm_1" };
    const counter = createRequestCounter();
    const remove = countRequests(aws.doc, counter);
    try {
      await claims.updateClaim("clm_1", { status: "RUNNING", updated_at: "2025-03-01T10:05:00.000Z" }, ["RECEIVED"]);
      expect(await raw(keys.claim("clm_1"))).toMatchObject(listed);
      await claims.updateClaim("clm_1", { reason: "proposal", updated_at: "2025-03-01T10:06:00.000Z" }, ["RUNNING"]);
      await claims.updateClaim("clm_1", { status: "RECEIVED" });
      expect(await raw(keys.claim("clm_1"))).toMatchObject(listed);
      await claims.updateClaim("clm_1", {
        status: "DECIDED",
        verdict: "ACCEPT",
        updated_at: "2025-03-01T10:07:00.000Z",
      });
      expect(counter.snapshot().byService.DynamoDB?.UpdateItem).toBe(4); // no second request to move the entry
    } finally {
      remove();
    }
    expect(await raw(keys.claim("clm_1"))).toMatchObject({
      gsi1pk: `DONE#${claimIndexShard("clm_1")}`,
      gsi1sk: listed.gsi1sk,
    });
  });

  it("lists a claim again when a patch reopens it", async () => {
    const { claims, raw } = await setup();
    await claims.createClaim(claimFixture("clm_1", { status: "NEEDS_REVIEW" }));
    await claims.updateClaim("clm_1", { status: "RUNNING", updated_at: "2025-03-01T10:05:00.000Z" }, ["NEEDS_REVIEW"]);
    expect(await raw(keys.claim("clm_1"))).toMatchObject({
      gsi1pk: `OPEN#${claimIndexShard("clm_1")}`,
      gsi1sk: "2025-03-01T10:00:00.000Z#clm_1",
    });
    expect((await claims.listClaims({ statuses: ["RUNNING"], limit: 10 })).items.map((c) => c.claim_id)).toEqual([
      "clm_1",
    ]);
  });

  it("still lists claims the first layout listed by status and updated_at, and moves them to the new listing when they change", async () => {
    const { tableName, claims } = await setup();
    const old = (id: string, status: "RECEIVED" | "RUNNING", listedAt: string, updatedAt: string) =>
      aws.doc.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...stripUndefined(claimFixture(id, { status, updated_at: updatedAt })),
            ...keys.claim(id),
            entity: "claim",
            gsi1pk: `STATUS#${status}`,
            gsi1sk: `${listedAt}#${id}`,
          },
        }),
      );
    await old("clm_old_a", "RECEIVED", "2025-03-01T10:01:00.000Z", "2025-03-01T10:01:00.000Z");
    await old("clm_old_b", "RUNNING", "2025-03-01T10:02:00.000Z", "2025-03-01T10:02:00.000Z");
    await claims.createClaim(
      claimFixture("clm_new", { received_at: "2025-03-01T10:03:00.000Z", updated_at: "2025-03-01T10:03:00.000Z" }),
    );
    const ids = async (query: Omit<Parameters<typeof claims.listClaims>[0], "limit"> = {}) =>
      (await claims.listClaims({ limit: 10, ...query })).items.map((c) => c.claim_id);
    // The fixtures were all received at 10:00: the new claim, received later, comes first.
    expect(await ids()).toEqual(["clm_new", "clm_old_b", "clm_old_a"]);
    expect(await ids({ statuses: ["RECEIVED"] })).toEqual(["clm_new", "clm_old_a"]);
    expect(await ids({ before: "2025-03-01T10:01:00.000Z" })).toEqual(["clm_old_b", "clm_old_a"]);
    expect(await countOpenClaims({ client: aws.doc, tableName })).toBe(3);
    await claims.updateClaim("clm_old_a", { status: "RUNNING", updated_at: "2025-03-01T10:30:00.000Z" });
    await claims.updateClaim("clm_old_b", { status: "DECIDED" });
    expect(await ids({ statuses: ["RUNNING"] })).toEqual(["clm_old_a"]);
    expect(await ids({ statuses: ["DECIDED"] })).toEqual(["clm_old_b"]);
    expect(await countOpenClaims({ client: aws.doc, tableName })).toBe(2);
  });

  it("refuses a patch that names a table attribute", async () => {
    const { claims } = await setup();
    await claims.createClaim(claimFixture("clm_1"));
    await expect(claims.updateClaim("clm_1", { pk: "X" } as never)).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringMatching(/pk/),
    });
  });

  it("pages through the index with small query pages, and reads no more of it than a page needs", async () => {
    const { tableName, claims } = await setup({ pageSize: 2 });
    const at = (m: number) =>
      `2025-03-01T${String(10 + Math.floor(m / 60))}:${String(m % 60).padStart(2, "0")}:00.000Z`;
    const id = (i: number) => `clm_${String(i).padStart(2, "0")}`;
    for (let i = 0; i < 80; i++)
      await claims.createClaim(
        claimFixture(id(i), { status: i % 2 ? "RUNNING" : "DECIDED", received_at: at(i), updated_at: at(i) }),
      );
    const counter = createRequestCounter();
    const remove = countRequests(aws.doc, counter);
    try {
      const all = await claims.listClaims({ limit: 100 });
      expect(all.items.map((c) => c.claim_id)).toEqual(Array.from({ length: 80 }, (_, i) => id(79 - i)));
      const everything = counter.snapshot().byService.DynamoDB?.Query ?? 0;
      expect(everything).toBeGreaterThanOrEqual(40);
      counter.reset();
      const first = await claims.listClaims({ limit: 3 });
      expect(first.items.map((c) => c.claim_id)).toEqual([id(79), id(78), id(77)]);
      expect(counter.snapshot().byService.DynamoDB?.Query).toBeLessThan(everything / 2);
      expect((await claims.listClaims({ limit: 3, cursor: first.nextCursor! })).items.map((c) => c.claim_id)).toEqual([
        id(76),
        id(75),
        id(74),
      ]);
    } finally {
      remove();
    }
    expect(await countOpenClaims({ client: aws.doc, tableName })).toBe(40);
  });

  it("reads a served claim stored without the ids its claim id gives (dfid, root_dfid), as a later release writes it", async () => {
    const { tableName, claims, raw } = await setup();
    // This release still writes them (readers first).
    const served = claimFixture("clm_ids");
    await claims.createClaim(served);
    expect((await raw(keys.claim("clm_ids")))!).toMatchObject({ dfid: "dfid_clm_ids", root_dfid: "dfid_clm_ids" });
    const { dfid: _d, root_dfid: _r, ...lean } = stripUndefined(claimFixture("clm_lean"));
    await aws.doc.send(
      new PutCommand({ TableName: tableName, Item: { ...lean, ...keys.claim("clm_lean"), entity: "claim" } }),
    );
    expect(await claims.getClaim("clm_lean")).toEqual(claimFixture("clm_lean"));
    const { record } = await claims.updateClaim("clm_lean", {
      status: "RUNNING",
      updated_at: "2025-03-01T10:00:01.000Z",
    });
    expect(record).toEqual({ ...claimFixture("clm_lean"), status: "RUNNING", updated_at: "2025-03-01T10:00:01.000Z" });
    // A dfid or root stored (a simulation's root, another flow's dfid) is read as it is.
    const other = claimFixture("clm_other", {
      dfid: "dfid_other",
      root_dfid: "dfid_sim_batch",
      simulation_id: "batch",
    });
    await claims.createClaim(other);
    expect(await claims.getClaim("clm_other")).toEqual(other);
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
