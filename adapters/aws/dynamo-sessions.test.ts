// Session storage on dynalite: the item layout by size (JSON, gzip, chunks), chunk clean-up, integrity
// checks, racing writers of large snapshots, and limits.
import { GetCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import type { Effect } from "../../core/claims/pipeline/effects.ts";
import { VersionConflictError } from "../../core/ports/claims.ts";
import { randomText } from "./contract.test-kit.ts";
import { createDynamoSessionRepository } from "./dynamo-sessions.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { keys } from "./table.ts";

const aws = useEmulatedAws();

async function setup() {
  const tableName = await aws.newTable();
  const repo = createDynamoSessionRepository({ client: aws.doc, tableName, clock: { now: () => 0 }, pageSize: undefined });
  const items = async (claimId: string) =>
    ((await aws.doc.send(new QueryCommand({ TableName: tableName, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": keys.session(claimId).pk } }))).Items ?? []) as Record<string, unknown>[];
  const chunkItems = async (claimId: string) => (await items(claimId)).filter((i) => String(i.sk).startsWith("SESSION#CHUNK#"));
  const head = async (claimId: string) => (await aws.doc.send(new GetCommand({ TableName: tableName, Key: keys.session(claimId) }))).Item;
  return { tableName, repo, items, chunkItems, head };
}

const bigAudit = (claimId: string, size: number): Effect => ({
  kind: "audit",
  event: { dfid: `dfid_${claimId}`, root_dfid: `dfid_${claimId}`, event_type: "AGENT_STEP", severity: "INFO", state: "RUNNING", details: { blob: randomText(size, 7) }, created_at: "2025-03-01T10:00:00.000Z" },
});

describe("DynamoDB session layout", () => {
  it.each([
    { label: "a small snapshot as JSON text", snapshot: () => ({ n: 1, text: "small" }), body: "json", chunks: 0 },
    { label: "a 500 KB compressible snapshot gzipped in the head", snapshot: () => ({ text: "abc ".repeat(125_000) }), body: "gzip", chunks: 0 },
    { label: "a 600 KB incompressible snapshot in chunk items", snapshot: () => ({ blob: randomText(600_000) }), body: "chunks", chunks: 2 },
    { label: "a 1.2 MB incompressible snapshot in chunk items", snapshot: () => ({ blob: randomText(1_200_000) }), body: "chunks", chunks: 4 },
  ])("stores $label and reads it back", async ({ snapshot, body, chunks }) => {
    const { repo, chunkItems, head } = await setup();
    const session = { claimId: "clm_1", version: 1, snapshot: snapshot(), outbox: [] };
    await repo.saveSession(session);
    expect(await repo.loadSession("clm_1")).toEqual(session);
    const stored = await head("clm_1");
    expect(stored?.body_kind).toBe(body);
    expect(await chunkItems("clm_1")).toHaveLength(chunks);
    expect(repo.lastLayout("clm_1")).toMatchObject({ body, chunks });
    expect(repo.lastLayout("clm_1")!.headBytes).toBeLessThan(350_000);
  });

  it("deletes the chunks of the version a save supersedes", async () => {
    const { repo, chunkItems, head } = await setup();
    await repo.saveSession({ claimId: "clm_1", version: 1, snapshot: { blob: randomText(600_000, 1) }, outbox: [] });
    const v1 = (await chunkItems("clm_1")).map((i) => i.sk);
    expect(v1).toHaveLength(2);
    await repo.saveSession({ claimId: "clm_1", version: 2, snapshot: { blob: randomText(900_000, 2) }, outbox: [] });
    const v2 = (await chunkItems("clm_1")).map((i) => i.sk);
    expect(v2).toHaveLength((await head("clm_1"))?.chunk_count as number);
    expect(v2.length).toBeGreaterThan(2);
    expect(v2.some((sk) => v1.includes(sk))).toBe(false);
    await repo.saveSession({ claimId: "clm_1", version: 3, snapshot: { small: true }, outbox: [] });
    expect(await chunkItems("clm_1")).toEqual([]);
  });

  it("cleans up after a session loaded (not saved) by this repository", async () => {
    const { tableName, chunkItems } = await setup();
    const writer = createDynamoSessionRepository({ client: aws.doc, tableName, clock: { now: () => 0 }, pageSize: undefined });
    await writer.saveSession({ claimId: "clm_1", version: 1, snapshot: { blob: randomText(600_000) }, outbox: [] });
    const other = createDynamoSessionRepository({ client: aws.doc, tableName, clock: { now: () => 0 }, pageSize: undefined });
    const loaded = (await other.loadSession("clm_1"))!;
    await other.saveSession({ ...loaded, version: 2, snapshot: { done: true } });
    expect(await chunkItems("clm_1")).toEqual([]);
  });

  it("refuses a chunked session whose chunks were tampered with or lost", async () => {
    const { tableName, repo, chunkItems } = await setup();
    await repo.saveSession({ claimId: "clm_1", version: 1, snapshot: { blob: randomText(600_000) }, outbox: [] });
    const [first] = await chunkItems("clm_1");
    const data = Uint8Array.from(first!.data as Uint8Array);
    data[100] = data[100]! ^ 0xff;
    await aws.doc.send(new PutCommand({ TableName: tableName, Item: { ...first, data } }));
    await expect(repo.loadSession("clm_1")).rejects.toMatchObject({ name: "SessionCorruptError", code: "SESSION_CORRUPT" });
  });

  it("lets one of two writers racing with large snapshots win, and removes the loser's chunks", async () => {
    const { repo, chunkItems } = await setup();
    await repo.saveSession({ claimId: "clm_1", version: 1, snapshot: { n: 1 }, outbox: [] });
    const snapshots = [{ blob: randomText(600_000, 11) }, { blob: randomText(600_000, 12) }];
    const results = await Promise.allSettled(snapshots.map((snapshot) => repo.saveSession({ claimId: "clm_1", version: 2, snapshot, outbox: [] })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(VersionConflictError);
    const stored = (await repo.loadSession("clm_1"))!;
    expect(snapshots).toContainEqual(stored.snapshot);
    expect(await chunkItems("clm_1")).toHaveLength(2);
  });

  it("keeps a large outbox (gzipped) in the head and clears it without touching the snapshot", async () => {
    const { repo, head } = await setup();
    const outbox = [bigAudit("clm_1", 100_000)];
    const snapshot = { blob: randomText(500_000) };
    await repo.saveSession({ claimId: "clm_1", version: 1, snapshot, outbox });
    expect((await head("clm_1"))?.outbox_gz).toBeInstanceOf(Uint8Array);
    expect(await repo.loadSession("clm_1")).toEqual({ claimId: "clm_1", version: 1, snapshot, outbox });
    await repo.clearOutbox("clm_1", 1);
    expect(await repo.loadSession("clm_1")).toEqual({ claimId: "clm_1", version: 1, snapshot, outbox: [] });
    expect((await head("clm_1"))?.outbox_gz).toBeUndefined();
  });

  it("refuses an outbox that cannot fit one item even compressed, and stores nothing", async () => {
    const { repo } = await setup();
    const save = repo.saveSession({ claimId: "clm_1", version: 1, snapshot: {}, outbox: [bigAudit("clm_1", 600_000)] });
    await expect(save).rejects.toMatchObject({ code: "ITEM_TOO_LARGE" });
    await expect(save).rejects.toThrow(/outbox/);
    expect(await repo.loadSession("clm_1")).toBeUndefined();
  });

  it.each([0, -1, 1.5, Number.NaN])("refuses version %s with a clear error", async (version) => {
    const { repo } = await setup();
    await expect(repo.saveSession({ claimId: "clm_1", version, snapshot: {}, outbox: [] })).rejects.toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringMatching(/version/) });
  });
});
