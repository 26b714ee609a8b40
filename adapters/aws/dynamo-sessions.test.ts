// Session storage on dynalite: one step item per version with the step's audit events, the item layout by
// size (JSON, compressed, chunks), chunk clean-up, integrity checks, racing writers of large snapshots,
// limits, the outbox's done marker, heads written by the previous layouts, and what a claim's steps cost.
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { GetCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { splitSessionOutbox } from "../../pipeline/ports.ts";
import type { Effect } from "../../pipeline/effects.ts";
import { VersionConflictError } from "../../core/errors.ts";
import type { StoredSession } from "../../pipeline/ports.ts";
import { measureCapacity } from "./capacity.test-kit.ts";
import { randomText } from "./contract.test-kit.ts";
import { createDynamoAuditLog } from "./dynamo-audit.ts";
import { createDynamoSessionRepository } from "./dynamo-sessions.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { keys, SESSION_STEP_PREFIX } from "./table.ts";

/** The three sessions one structured claim saves (captured from the in-process pipeline, rules model). */
const CLAIM = JSON.parse(readFileSync(new URL("./fixtures/structured-claim.json", import.meta.url), "utf8")) as {
  sessions: StoredSession[];
};

const aws = useEmulatedAws();

async function setup() {
  const tableName = await aws.newTable();
  const newRepo = () =>
    createDynamoSessionRepository({ client: aws.doc, tableName, clock: { now: () => 0 }, pageSize: undefined });
  const repo = newRepo();
  const items = async (claimId: string) =>
    ((
      await aws.doc.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": keys.session(claimId).pk },
        }),
      )
    ).Items ?? []) as Record<string, unknown>[];
  const chunkItems = async (claimId: string) =>
    (await items(claimId)).filter((i) => String(i.sk).startsWith("SESSION#CHUNK#"));
  /** The latest step item. */
  const head = async (claimId: string) =>
    (
      await aws.doc.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :steps)",
          ExpressionAttributeValues: { ":pk": keys.sessionStep(claimId, 1).pk, ":steps": SESSION_STEP_PREFIX },
          ScanIndexForward: false,
          Limit: 1,
        }),
      )
    ).Items?.[0];
  const done = async (claimId: string) =>
    (
      await aws.doc.send(
        new GetCommand({ TableName: tableName, Key: keys.sessionStepDone(claimId), ConsistentRead: true }),
      )
    ).Item;
  return { tableName, repo, newRepo, items, chunkItems, head, done };
}

/** A large audit effect of a simulated claim: stays in the outbox (its event is copied under the simulation's root). */
const bigAudit = (claimId: string, size: number): Effect => ({
  kind: "audit",
  event: {
    dfid: `dfid_${claimId}`,
    root_dfid: "dfid_sim_1",
    event_type: "AGENT_STEP",
    severity: "INFO",
    state: "RUNNING",
    details: { blob: randomText(size, 7), simulation_id: "sim_1" },
    created_at: "2025-03-01T10:00:00.000Z",
  },
});

describe("DynamoDB session layout", () => {
  it.each([
    {
      label: "a small snapshot as JSON text",
      snapshot: () => ({ n: 1, text: "small" }),
      kind: "packed",
      body: "json",
      chunks: 0,
    },
    {
      label: "a 2 KB snapshot compressed",
      snapshot: () => ({ steps: Array.from({ length: 80 }, (_, i) => ({ step: i, role: "analyst" })) }),
      kind: "packed",
      body: "dict",
      chunks: 0,
    },
    {
      label: "a 500 KB compressible snapshot compressed in the head",
      snapshot: () => ({ text: "abc ".repeat(125_000) }),
      kind: "packed",
      body: "dict",
      chunks: 0,
    },
    {
      label: "a 600 KB incompressible snapshot in chunk items",
      snapshot: () => ({ blob: randomText(600_000) }),
      kind: "chunks",
      body: "chunks",
      chunks: 2,
    },
    {
      label: "a 1.2 MB incompressible snapshot in chunk items",
      snapshot: () => ({ blob: randomText(1_200_000) }),
      kind: "chunks",
      body: "chunks",
      chunks: 4,
    },
  ])("stores $label and reads it back", async ({ snapshot, kind, body, chunks }) => {
    const { repo, chunkItems, head } = await setup();
    const session = { claimId: "clm_1", version: 1, snapshot: snapshot(), outbox: [] };
    await repo.saveSession(session);
    expect(await repo.loadSession("clm_1")).toEqual(session);
    const stored = await head("clm_1");
    expect(stored?.body_kind).toBe(kind);
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
    const writer = createDynamoSessionRepository({
      client: aws.doc,
      tableName,
      clock: { now: () => 0 },
      pageSize: undefined,
    });
    await writer.saveSession({ claimId: "clm_1", version: 1, snapshot: { blob: randomText(600_000) }, outbox: [] });
    const other = createDynamoSessionRepository({
      client: aws.doc,
      tableName,
      clock: { now: () => 0 },
      pageSize: undefined,
    });
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
    await expect(repo.loadSession("clm_1")).rejects.toMatchObject({
      name: "SessionCorruptError",
      code: "SESSION_CORRUPT",
    });
  });

  it("lets one of two writers racing with large snapshots win, and removes the loser's chunks", async () => {
    const { repo, chunkItems } = await setup();
    await repo.saveSession({ claimId: "clm_1", version: 1, snapshot: { n: 1 }, outbox: [] });
    const snapshots = [{ blob: randomText(600_000, 11) }, { blob: randomText(600_000, 12) }];
    const results = await Promise.allSettled(
      snapshots.map((snapshot) => repo.saveSession({ claimId: "clm_1", version: 2, snapshot, outbox: [] })),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(lost.reason).toBeInstanceOf(VersionConflictError);
    const stored = (await repo.loadSession("clm_1"))!;
    expect(snapshots).toContainEqual(stored.snapshot);
    expect(await chunkItems("clm_1")).toHaveLength(2);
  });

  it("keeps a large outbox (compressed) in a chunked step item and clears it without rewriting the item", async () => {
    const { repo, head, done } = await setup();
    const outbox = [bigAudit("clm_1", 100_000)];
    const snapshot = { blob: randomText(500_000) };
    await repo.saveSession({ claimId: "clm_1", version: 1, snapshot, outbox });
    const before = await head("clm_1");
    expect(before?.body_kind).toBe("chunks");
    expect(before?.body_z2).toBeInstanceOf(Uint8Array);
    expect(await repo.loadSession("clm_1")).toEqual({ claimId: "clm_1", version: 1, snapshot, outbox });
    const { capacity } = await measureCapacity(aws.doc, () => repo.clearOutbox("clm_1", 1));
    expect(capacity).toMatchObject({ wru: 1, requests: { PutItem: 1 } });
    expect(await repo.loadSession("clm_1")).toEqual({ claimId: "clm_1", version: 1, snapshot, outbox: [] });
    expect(await head("clm_1")).toEqual(before);
    expect(await done("clm_1")).toMatchObject({ done_version: 1 });
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
    await expect(repo.saveSession({ claimId: "clm_1", version, snapshot: {}, outbox: [] })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringMatching(/version/),
    });
  });
});

describe("the outbox's done marker", () => {
  const outbox = (n: number): Effect[] => [{ kind: "timer", claimId: "clm_1", dueMs: 1_000 * n }];
  const save = (repo: ReturnType<typeof createDynamoSessionRepository>, version: number) =>
    repo.saveSession({ claimId: "clm_1", version, snapshot: { v: version }, outbox: outbox(version) });

  it("never hides the outbox of a version saved after a clear of it was refused (no such version yet)", async () => {
    const { repo, newRepo, done } = await setup();
    await save(repo, 1);
    await repo.clearOutbox("clm_1", 2);
    await newRepo().clearOutbox("clm_1", 2);
    expect(await done("clm_1")).toBeUndefined();
    await save(repo, 2);
    expect(await newRepo().loadSession("clm_1")).toMatchObject({ version: 2, outbox: outbox(2) });
  });

  it("keeps the outbox of a newer version that a slower process did not know about when it cleared its own", async () => {
    const { repo, newRepo } = await setup();
    await save(repo, 1);
    const slow = newRepo();
    expect((await slow.loadSession("clm_1"))?.outbox).toEqual(outbox(1));
    await save(repo, 2);
    await slow.clearOutbox("clm_1", 1);
    expect(await newRepo().loadSession("clm_1")).toMatchObject({ version: 2, outbox: outbox(2) });
    await repo.clearOutbox("clm_1", 2);
    expect(await newRepo().loadSession("clm_1")).toMatchObject({ version: 2, outbox: [] });
  });

  it("only moves forward: a late clear of an older version does not bring a performed outbox back or hide the next one", async () => {
    const { repo, newRepo, done } = await setup();
    const stale = newRepo();
    await save(repo, 1);
    await stale.loadSession("clm_1");
    await save(repo, 2);
    await repo.clearOutbox("clm_1", 2);
    await stale.clearOutbox("clm_1", 1);
    expect(await done("clm_1")).toMatchObject({ done_version: 2 });
    expect((await newRepo().loadSession("clm_1"))?.outbox).toEqual([]);
    await save(repo, 3);
    expect((await newRepo().loadSession("clm_1"))?.outbox).toEqual(outbox(3));
  });

  it("clears a version this repository never loaded or saved after reading the latest step", async () => {
    const { repo, newRepo, done } = await setup();
    await save(repo, 1);
    await save(repo, 2);
    const other = newRepo();
    const { capacity } = await measureCapacity(aws.doc, () => other.clearOutbox("clm_1", 2));
    expect(capacity.requests).toEqual({ Query: 1, PutItem: 1 });
    expect(await done("clm_1")).toMatchObject({ done_version: 2 });
    expect((await other.loadSession("clm_1"))?.outbox).toEqual([]);
  });

  it("loads the latest step and the marker with one request", async () => {
    const { repo } = await setup();
    await save(repo, 1);
    await repo.clearOutbox("clm_1", 1);
    const { result, capacity } = await measureCapacity(aws.doc, () => repo.loadSession("clm_1"));
    expect(result).toEqual({ claimId: "clm_1", version: 1, snapshot: { v: 1 }, outbox: [] });
    expect(capacity).toMatchObject({ rru: 1, requests: { Query: 1 } });
  });
});

describe("heads written by the previous layout", () => {
  const claimId = "clm_old";
  // Heads written before kept the step's own audit in their outbox: still performed from there.
  const ownAudit: Effect = {
    kind: "audit",
    event: {
      dfid: `dfid_${claimId}`,
      root_dfid: `dfid_${claimId}`,
      event_type: "AGENT_STEP",
      severity: "INFO",
      state: "RUNNING",
      details: { claim_id: claimId },
      created_at: "2025-03-01T10:00:00.000Z",
    },
  };
  const outbox: Effect[] = [{ kind: "timer", claimId, dueMs: 5_000 }, ownAudit];
  const snapshot = { status: "running", steps: ["analyst"] };
  const legacyHeads = {
    json: { body_kind: "json", snapshot: JSON.stringify(snapshot), outbox: JSON.stringify(outbox) },
    gzip: {
      body_kind: "gzip",
      snapshot_gz: new Uint8Array(gzipSync(JSON.stringify(snapshot))),
      outbox_gz: new Uint8Array(gzipSync(JSON.stringify(outbox))),
    },
    "json, outbox cleared in place": { body_kind: "json", snapshot: JSON.stringify(snapshot), outbox: "[]" },
    "packed (one head per claim, before step items)": {
      body_kind: "packed",
      body: JSON.stringify({ snapshot, outbox }),
    },
  } as const;

  it.each(Object.entries(legacyHeads))(
    "loads a %s head, clears its outbox, and saves the next version over it",
    async (label, attributes) => {
      const { tableName, repo, newRepo } = await setup();
      await aws.doc.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...keys.session(claimId), entity: "session", claim_id: claimId, version: 3, ...attributes },
        }),
      );
      const pending = label.includes("cleared") ? [] : outbox;
      expect(await repo.loadSession(claimId)).toEqual({ claimId, version: 3, snapshot, outbox: pending });
      await repo.clearOutbox(claimId, 3);
      expect(
        (await aws.doc.send(new GetCommand({ TableName: tableName, Key: keys.sessionDone(claimId) }))).Item,
      ).toMatchObject({ done_version: 3 });
      expect(await newRepo().loadSession(claimId)).toEqual({ claimId, version: 3, snapshot, outbox: [] });
      // The next version is a step item; a second writer of it, knowing the old head, loses.
      await repo.saveSession({ claimId, version: 4, snapshot: { next: true }, outbox });
      const rest = outbox.filter((e) => e.kind !== "audit");
      expect(await newRepo().loadSession(claimId)).toEqual({
        claimId,
        version: 4,
        snapshot: { next: true },
        outbox: rest,
      });
      await expect(newRepo().saveSession({ claimId, version: 4, snapshot: {}, outbox: [] })).rejects.toBeInstanceOf(
        VersionConflictError,
      );
      await repo.clearOutbox(claimId, 4);
      expect(await newRepo().loadSession(claimId)).toEqual({
        claimId,
        version: 4,
        snapshot: { next: true },
        outbox: [],
      });
    },
  );
});

describe("what a claim's steps cost", () => {
  const [v1, v2, v3] = CLAIM.sessions as [StoredSession, StoredSession, StoredSession];

  it("saves the three steps of a structured claim with their audit events and clears them for 6 write units, where the audit alone took 3 more", async () => {
    const { tableName, repo, head } = await setup();
    expect(await repo.loadSession(v1.claimId)).toBeUndefined(); // the orchestrator loads before it saves
    const after = await measureCapacity(aws.doc, async () => {
      for (const s of [v1, v2, v3]) {
        await repo.saveSession(s);
        await repo.clearOutbox(s.claimId, s.version);
      }
    });
    expect(await repo.loadSession(v3.claimId)).toEqual({ ...v3, outbox: [] });
    expect((await head(v3.claimId))?.body_kind).toBe("packed");
    const audit = createDynamoAuditLog({ client: aws.doc, tableName, clock: { now: () => 0 }, pageSize: undefined });
    const events = [v1, v2, v3].flatMap((s) => splitSessionOutbox(s.claimId, s.outbox).audit);
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(await audit.byDfid(`dfid_${v3.claimId}`)).toEqual(events);
    // Before: the same steps' audit appended on its own, one item per step (on a claim of its own).
    const separate = await measureCapacity(aws.doc, async () => {
      for (const s of [v1, v2, v3]) {
        const own = splitSessionOutbox(s.claimId, s.outbox).audit.map((e) => ({
          ...e,
          dfid: "dfid_clm_separate",
          root_dfid: "dfid_clm_separate",
        }));
        await audit.appendAll(own);
      }
    });
    expect({ separateAudit: separate.capacity.wru, steps: after.capacity.wru }).toEqual({ separateAudit: 3, steps: 6 });
    expect(after.capacity.requests).toEqual({ PutItem: 6 });
  });

  it("fits each step item, its audit events included, in one write unit with the dictionary", async () => {
    const { repo } = await setup();
    for (const s of [v1, v2, v3]) {
      await repo.saveSession(s);
      expect(repo.lastLayout(s.claimId)).toMatchObject({ body: "dict" });
      expect(repo.lastLayout(s.claimId)!.headBytes).toBeLessThanOrEqual(1024);
    }
    expect(await repo.loadSession(v3.claimId)).toEqual({
      ...v3,
      outbox: splitSessionOutbox(v3.claimId, v3.outbox).rest,
    });
  });
});

describe("retention", () => {
  const DAY = 86_400_000;
  const outbox: Effect[] = [{ kind: "timer", claimId: "clm_1", dueMs: 5_000 }];

  async function retained() {
    const tableName = await aws.newTable();
    let now = Date.parse("2026-06-01T00:00:00Z");
    const clock = { now: () => now };
    const newRepo = () =>
      createDynamoSessionRepository({
        client: aws.doc,
        tableName,
        clock,
        pageSize: undefined,
        retention: { sessionsMs: 30 * DAY, auditMs: 20 * DAY },
      });
    const read = async (key: { pk: string; sk: string }) =>
      (await aws.doc.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item;
    return {
      newRepo,
      repo: newRepo(),
      read,
      later: (ms: number) => void (now += ms),
      nowS: () => Math.floor(now / 1000),
    };
  }

  it("keeps step and marker for the longer horizon (audit, sessions) after their write, and reads an expired session as absent", async () => {
    const { repo, newRepo, read, later, nowS } = await retained();
    await repo.saveSession({ claimId: "clm_1", version: 1, snapshot: { n: 1 }, outbox });
    await repo.clearOutbox("clm_1", 1);
    later(10 * DAY);
    await repo.saveSession({ claimId: "clm_1", version: 2, snapshot: { n: 2 }, outbox });
    expect((await read(keys.sessionStep("clm_1", 2)))?.expires_at).toBe(nowS() + 30 * 86_400);
    expect((await read(keys.sessionStep("clm_1", 1)))?.expires_at).toBe(nowS() - 10 * 86_400 + 30 * 86_400);
    expect((await read(keys.sessionStepDone("clm_1")))?.expires_at).toBe(nowS() - 10 * 86_400 + 30 * 86_400);
    later(29 * DAY);
    expect(await newRepo().loadSession("clm_1")).toEqual({ claimId: "clm_1", version: 2, snapshot: { n: 2 }, outbox });
    later(2 * DAY);
    expect(await newRepo().loadSession("clm_1")).toBeUndefined();
  });

  it("starts a new session over an expired one, whose outbox marker does not hide the new outbox", async () => {
    const { repo, newRepo, later } = await retained();
    for (const version of [1, 2, 3])
      await repo.saveSession({ claimId: "clm_1", version, snapshot: { version }, outbox });
    await repo.clearOutbox("clm_1", 3);
    later(31 * DAY);
    const fresh = newRepo();
    expect(await fresh.loadSession("clm_1")).toBeUndefined();
    await fresh.saveSession({ claimId: "clm_1", version: 1, snapshot: { again: true }, outbox });
    expect(await newRepo().loadSession("clm_1")).toEqual({
      claimId: "clm_1",
      version: 1,
      snapshot: { again: true },
      outbox,
    });
    await fresh.clearOutbox("clm_1", 1);
    expect(await newRepo().loadSession("clm_1")).toEqual({
      claimId: "clm_1",
      version: 1,
      snapshot: { again: true },
      outbox: [],
    });
    await expect(
      newRepo().saveSession({ claimId: "clm_1", version: 1, snapshot: {}, outbox: [] }),
    ).rejects.toBeInstanceOf(VersionConflictError);
  });

  it("keeps the steps as long as the audit is kept: no horizon for the audit, none for the steps", async () => {
    const tableName = await aws.newTable();
    const repo = createDynamoSessionRepository({
      client: aws.doc,
      tableName,
      clock: { now: () => Date.parse("2026-06-01T00:00:00Z") },
      pageSize: undefined,
      retention: { sessionsMs: 30 * DAY },
    });
    await repo.saveSession({ claimId: "clm_1", version: 1, snapshot: { n: 1 }, outbox });
    await repo.clearOutbox("clm_1", 1);
    for (const key of [keys.sessionStep("clm_1", 1), keys.sessionStepDone("clm_1")]) {
      const item = (await aws.doc.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item;
      expect(item).toBeDefined();
      expect(item?.expires_at).toBeUndefined();
    }
  });
});
