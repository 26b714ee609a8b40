// Verdict storage on dynalite beyond the shared contract: the compact item (documents in one compressed
// body, record/execution/published readable), items written before as JSON text, a settlement by a
// process that never saw the verdict, and what a claim's verdict costs in write units.
import { readFileSync } from "node:fs";
import { deflateRawSync } from "node:zlib";
import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { reviewFixture } from "./contract.test-kit.ts";
import { describe, expect, it } from "vitest";
import type { ExecutionState, StoredVerdict } from "../../pipeline/ports.ts";
import { measureCapacity } from "./capacity.test-kit.ts";
import { createDynamoVerdictRepository, verdictItem } from "./dynamo-verdicts.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { keys } from "./table.ts";
import { itemBytes, packText, writeUnits } from "./compact.ts";
import { COMPACT_DICTIONARY_V1 } from "./compact-dictionary-v1.ts";

/** The verdict of a real structured claim (ACCEPT) as put, and the outcome its refund was settled with. */
const CLAIM = JSON.parse(readFileSync(new URL("./fixtures/structured-claim.json", import.meta.url), "utf8")) as {
  verdict: StoredVerdict;
  execution: { execution: ExecutionState; events: StoredVerdict["events"]; audit: NonNullable<StoredVerdict["audit"]> };
};
const { verdict, execution } = CLAIM;
const key = verdict.idempotency_key;
const settled: StoredVerdict = { ...verdict, ...execution };

const aws = useEmulatedAws();

async function setup() {
  const tableName = await aws.newTable();
  const newRepo = () =>
    createDynamoVerdictRepository({ client: aws.doc, tableName, clock: { now: () => 0 }, pageSize: undefined });
  const item = async (k = key) =>
    (await aws.doc.send(new GetCommand({ TableName: tableName, Key: keys.verdict(k), ConsistentRead: true }))).Item;
  return { tableName, repo: newRepo(), newRepo, item };
}

/** An item as the previous layout wrote it: every document as its own JSON text attribute. */
const previousItem = (v: StoredVerdict) => ({
  ...keys.verdict(v.idempotency_key),
  entity: "verdict",
  idempotency_key: v.idempotency_key,
  claim_id: v.claim_id,
  record: JSON.stringify(v.record),
  layer: v.layer,
  checks: JSON.stringify(v.checks),
  execution: v.execution,
  events: JSON.stringify(v.events),
  ...(v.audit ? { audit: JSON.stringify(v.audit) } : {}),
  published: v.published,
});

describe("DynamoDB verdict item", () => {
  it("keeps record, execution and published readable and the other documents in one compressed body", async () => {
    const { repo, item } = await setup();
    await repo.putVerdictOnce(verdict);
    await repo.recordExecution(key, execution);
    await repo.markPublished(key);
    const stored = (await item())!;
    // The ids the item holds anyway (or its key gives: verdict_id) are left out of the record's text (i37v; "" in
    // their place before, which still reads), and read back in their places.
    const { verdict_id: _v, claim_id: _c, dfid: _d, idempotency_key: _k, ...rest } = verdict.record;
    expect(JSON.parse(stored.record as string)).toEqual(rest);
    expect(Object.keys(JSON.parse(stored.record as string))).toEqual(Object.keys(rest));
    expect(Object.keys((await repo.getVerdict(key))!.record)).toEqual(Object.keys(verdict.record));
    expect(await repo.getVerdict(key)).toEqual({ ...settled, published: true });
    expect(stored).toMatchObject({ claim_id: verdict.claim_id, execution: "EXECUTED", published: true });
    expect(Object.keys(stored).filter((k) => k.startsWith("body")).length).toBe(1);
    expect(stored.body_z2c).toBeInstanceOf(Uint8Array);
    for (const old of ["checks", "events", "audit", "idempotency_key"]) expect(stored[old]).toBeUndefined();
  });

  it("reads, settles and publishes a verdict written by the previous layout", async () => {
    const { tableName, repo, newRepo, item } = await setup();
    await aws.doc.send(new PutCommand({ TableName: tableName, Item: previousItem(verdict) }));
    expect(await repo.getVerdict(key)).toEqual(verdict);
    expect(await repo.recordExecution(key, execution)).toEqual(settled);
    await repo.markPublished(key);
    expect(await newRepo().getVerdict(key)).toEqual({ ...settled, published: true });
    expect((await item())?.events).toBeUndefined();
  });

  it("reads a compact item written before, its record whole and its body compressed against it", async () => {
    const { tableName, newRepo } = await setup();
    const record = JSON.stringify(settled.record);
    const { checks, events, review, audit } = settled;
    const body = await packText("body", JSON.stringify({ checks, events, review, audit }), 400, { context: record });
    expect(body.attribute).toBe("body_z2c");
    const { idempotency_key: _, ...head } = previousItem(settled);
    for (const doc of ["checks", "events", "audit"]) delete (head as Record<string, unknown>)[doc];
    await aws.doc.send(
      new PutCommand({ TableName: tableName, Item: { ...head, record, [body.attribute]: body.value } }),
    );
    expect(await newRepo().getVerdict(key)).toEqual(settled);
  });

  it("keeps a record whose ids differ from the item's as they are", async () => {
    const { repo, newRepo, item } = await setup();
    const odd = { ...verdict, record: { ...verdict.record, dfid: "dfid_other" } };
    await repo.putVerdictOnce(odd);
    const text = JSON.parse((await item())!.record as string);
    expect(text).toMatchObject({ dfid: "dfid_other" });
    expect(text).not.toHaveProperty("claim_id");
    expect(await newRepo().getVerdict(key)).toEqual(odd);
    expect(Object.keys((await newRepo().getVerdict(key))!.record)).toEqual(Object.keys(odd.record));
  });

  it("prefers a document an older writer updated as text over the body", async () => {
    const { tableName, repo, newRepo } = await setup();
    await repo.putVerdictOnce(verdict);
    await aws.doc.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.verdict(key),
        UpdateExpression: "SET execution = :e, events = :ev, audit = :a",
        ExpressionAttributeValues: {
          ":e": "EXECUTED",
          ":ev": JSON.stringify(execution.events),
          ":a": JSON.stringify(execution.audit),
        },
      }),
    );
    expect(await newRepo().getVerdict(key)).toEqual(settled);
  });

  it("settles a verdict this repository has not seen after reading it once, keeping the put's review", async () => {
    const { repo, newRepo } = await setup();
    const review = reviewFixture({ claim_id: verdict.claim_id, dfid: "dfid_x", reason_code: "R", reason: "why" });
    await repo.putVerdictOnce({ ...verdict, review });
    const other = newRepo();
    const { result, capacity } = await measureCapacity(aws.doc, () => other.recordExecution(key, execution));
    expect(result).toEqual({ ...settled, review });
    expect(capacity.requests).toEqual({ GetItem: 1, UpdateItem: 1 });
    // Settled for good: a redelivery reads, and writes nothing.
    const again = await measureCapacity(aws.doc, () =>
      other.recordExecution(key, { execution: "REFUSED", events: [] }),
    );
    expect(again.result).toEqual({ ...settled, review });
    expect(again.capacity.requests).toEqual({ GetItem: 1 });
  });
});

describe("what a claim's verdict costs", () => {
  it("puts, settles and publishes the verdict of a structured claim for 3 write units instead of 21", async () => {
    const { tableName, repo } = await setup();
    const after = await measureCapacity(aws.doc, async () => {
      await repo.putVerdictOnce(verdict);
      await repo.recordExecution(key, execution);
      await repo.markPublished(key);
    });
    expect(await repo.getVerdict(key)).toEqual({ ...settled, published: true });
    const previousKey = `${key.slice(0, -1)}${key.endsWith("0") ? "1" : "0"}`;
    const previous = { ...verdict, idempotency_key: previousKey };
    const before = await measureCapacity(aws.doc, async () => {
      await aws.doc.send(new PutCommand({ TableName: tableName, Item: previousItem(previous) }));
      await aws.doc.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.verdict(previousKey),
          UpdateExpression: "SET execution = :e, events = :ev, audit = :a",
          ExpressionAttributeValues: {
            ":e": "EXECUTED",
            ":ev": JSON.stringify(execution.events),
            ":a": JSON.stringify(execution.audit),
          },
        }),
      );
      await aws.doc.send(
        new UpdateCommand({
          TableName: tableName,
          Key: keys.verdict(previousKey),
          UpdateExpression: "SET published = :t",
          ExpressionAttributeValues: { ":t": true },
        }),
      );
    });
    expect({ before: before.capacity.wru, after: after.capacity.wru }).toEqual({ before: 21, after: 3 });
  });

  it("keeps a settled ACCEPT with its policy_version at one write unit per write", async () => {
    const { repo, item } = await setup();
    const versioned = { ...verdict, record: { ...verdict.record, policy_version: "pol_a72d576b344d0e9b" } };
    const { result, capacity } = await measureCapacity(aws.doc, async () => {
      await repo.putVerdictOnce(versioned);
      await repo.recordExecution(key, execution);
      await repo.markPublished(key);
      return repo.getVerdict(key);
    });
    expect(result).toEqual({ ...settled, record: versioned.record, published: true });
    expect(capacity.wru).toBe(3);
    // Each id left out of the record's text: `"name":"value",` less than the same item with the record whole.
    const stored = (await item())!;
    const whole = { ...stored, record: JSON.stringify(versioned.record) };
    const r = versioned.record;
    const ids = { verdict_id: r.verdict_id, claim_id: r.claim_id, dfid: r.dfid, idempotency_key: r.idempotency_key };
    expect(itemBytes(whole) - itemBytes(stored)).toBe(
      Object.entries(ids).reduce((n, [name, value]) => n + `"${name}":"${value}",`.length, 0),
    );
  });
});

/** A settled ACCEPT as the local stack stored it before dictionary v2 (a313a77), and what was read from it then. */
const V1 = JSON.parse(readFileSync(new URL("./fixtures/verdict-v1-item.json", import.meta.url), "utf8")) as {
  item: Record<string, unknown>;
  read: StoredVerdict;
};
/** Binary attributes of a fixture item, stored as `{ b64 }`. */
const itemOfFixture = (item: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(item).map(([k, v]) => [
      k,
      v && typeof v === "object" && "b64" in v ? new Uint8Array(Buffer.from(String(v.b64), "base64")) : v,
    ]),
  );
/** The ACCEPT verdicts of bundled scenarios, as put and settled, with deployed-length ids (fixtures/verdicts-bundled.json). */
const BUNDLED = JSON.parse(readFileSync(new URL("./fixtures/verdicts-bundled.json", import.meta.url), "utf8")) as {
  verdicts: Record<string, { put: StoredVerdict; settled: StoredVerdict }>;
};

describe("a verdict item written before dictionary v2", () => {
  it("reads as it did, and a redelivery neither rewrites nor loses it", async () => {
    const { tableName, repo, newRepo, item } = await setup();
    const key = V1.read.idempotency_key;
    await aws.doc.send(new PutCommand({ TableName: tableName, Item: itemOfFixture(V1.item) }));
    expect((await item(key))?.body_z1c).toBeInstanceOf(Uint8Array);
    expect(await repo.getVerdict(key)).toEqual(V1.read);
    // Settled for good: a repeated settlement reads and writes nothing; marking it published keeps the v1 body.
    const again = await measureCapacity(aws.doc, () =>
      newRepo().recordExecution(key, { execution: "REFUSED", events: [] }),
    );
    expect(again.result).toEqual(V1.read);
    expect(again.capacity.wru).toBe(0);
    expect(await repo.markPublished(key)).toBe(true);
    expect(await newRepo().getVerdict(key)).toEqual({ ...V1.read, published: true });
  });

  it("settles a PENDING verdict stored with v1 into a v2 body and removes the v1 one", async () => {
    const { tableName, newRepo, item } = await setup();
    const { put } = BUNDLED.verdicts.A!;
    const settledA = BUNDLED.verdicts.A!.settled;
    const { checks, events, review, audit } = put;
    const v1Body = deflateRawSync(JSON.stringify({ checks, events, review, audit }), {
      dictionary: Buffer.concat([Buffer.from(COMPACT_DICTIONARY_V1), Buffer.from(JSON.stringify(put.record))]),
      level: 9,
    });
    await aws.doc.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.verdict(put.idempotency_key),
          entity: "verdict",
          claim_id: put.claim_id,
          record: JSON.stringify(put.record),
          layer: put.layer,
          execution: "PENDING",
          published: false,
          body_z1c: new Uint8Array(v1Body),
        },
      }),
    );
    const repo = newRepo();
    expect(await repo.getVerdict(put.idempotency_key)).toEqual(put);
    expect(await repo.recordExecution(put.idempotency_key, settledA)).toEqual(settledA);
    const stored = (await item(put.idempotency_key))!;
    expect(Object.keys(stored).filter((k) => k.startsWith("body"))).toEqual(["body_z2c"]);
    expect(await newRepo().getVerdict(put.idempotency_key)).toEqual(settledA);
  });
});

describe("a verdict's write units with dictionary v2 (issue 37)", () => {
  it("puts and settles the verdict of the bench's structured claim for one write unit each, with 150 bytes to spare", async () => {
    const { repo, item } = await setup();
    const settledNow = { ...V1.read, published: false };
    const put: StoredVerdict = {
      ...settledNow,
      execution: "PENDING",
      events: settledNow.events.filter((e) => e.detailType === "ClaimVerdict"),
      audit: settledNow.audit!.filter((e) => e.event_type !== "CLAIM_REFUND_EXECUTED"),
    };
    const { capacity } = await measureCapacity(aws.doc, async () => {
      await repo.putVerdictOnce(put);
      await repo.recordExecution(put.idempotency_key, settledNow);
    });
    expect(capacity.wru).toBe(2);
    const stored = (await item(put.idempotency_key))!;
    expect(itemBytes(stored)).toBeLessThan(1024 - 150);
    // The same verdict as stored before: 2 write units a write.
    expect(itemBytes(itemOfFixture(V1.item))).toBeGreaterThan(1024);
    expect(await repo.getVerdict(put.idempotency_key)).toEqual(settledNow);
  });

  it.each(["A", "US", "SC1", "EX1", "RT1", "ML4", "JP1"])(
    "keeps bundled ACCEPT %s (currencies, store credit, exchange, return, lines) at one write unit, put and settled",
    async (id) => {
      const { repo } = await setup();
      const { put, settled: done } = BUNDLED.verdicts[id]!;
      const { result, capacity } = await measureCapacity(aws.doc, async () => {
        await repo.putVerdictOnce(put);
        return repo.recordExecution(put.idempotency_key, done);
      });
      expect(result).toEqual(done);
      expect(capacity.wru).toBe(2);
    },
  );

  it("settles a free-text claim on titled USD lines in one write unit too (LT1, 1,055 bytes with the ids in place)", async () => {
    const { put, settled: done } = BUNDLED.verdicts.LT1!;
    expect(writeUnits(itemBytes(await verdictItem(put)))).toBe(1);
    expect(writeUnits(itemBytes(await verdictItem(done)))).toBe(1);
    const item = await verdictItem(done);
    const record = JSON.stringify(done.record);
    expect(itemBytes({ ...item, record }) - itemBytes(item)).toBeGreaterThan(1055 - 1024);
  });
});
