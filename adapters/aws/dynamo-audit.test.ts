// The audit log on dynalite beyond the shared contract: a redelivered identical event is stored once,
// queries page past LastEvaluatedKey, events are stored compressed when that saves a write unit, items
// written by the previous layout are read, and what a claim's audit costs in write units.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { canonicalize } from "../../core/crew/canonical.ts";
import type { AuditEvent } from "../../core/integrity/audit.ts";
import { measureCapacity } from "./capacity.test-kit.ts";
import { auditFixture, randomText } from "./contract.test-kit.ts";
import { createDynamoPorts } from "./dynamo-ports.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { countRequests, createRequestCounter } from "./request-counter.ts";
import { keys } from "./table.ts";

/** The ten audit events of a real structured claim (captured from the in-process pipeline, rules model). */
const CLAIM_AUDIT = (
  JSON.parse(readFileSync(new URL("./fixtures/structured-claim.json", import.meta.url), "utf8")) as {
    audit: AuditEvent[];
  }
).audit;

/** An item as the previous layout wrote it: plain `event` text (gzip over 64 KiB), with `instant` and `hash`. */
function previousItem(event: AuditEvent, seq: number, gz = false): Record<string, unknown> {
  const hash = createHash("sha256").update(canonicalize(event)).digest("hex");
  const instant = new Date(Date.parse(event.created_at)).toISOString();
  const text = JSON.stringify(event);
  return {
    ...keys.audit(event.dfid, instant, hash),
    entity: "audit",
    instant,
    hash,
    seq,
    ...(gz ? { event_gz: new Uint8Array(gzipSync(text)) } : { event: text }),
  };
}

const aws = useEmulatedAws();

describe("DynamoDB audit log", () => {
  it("stores a redelivered identical event once, in its flow, its root flow and its simulation", async () => {
    const tableName = await aws.newTable();
    const { audit } = createDynamoPorts({ client: aws.doc, tableName });
    const event = auditFixture("dfid_clm_1", "2025-03-01T10:00:00.000Z", {
      type: "KERNEL_VERDICT",
      rootDfid: "dfid_sim",
      simulationId: "sim_1",
    });
    const changed = auditFixture("dfid_clm_1", "2025-03-01T10:00:00.000Z", {
      type: "KERNEL_VERDICT",
      rootDfid: "dfid_sim",
      simulationId: "sim_1",
      details: { other: true },
    });
    await audit.append(event);
    await audit.append(structuredClone(event));
    await Promise.all([audit.append(event), audit.append(event)]);
    await audit.append(changed);
    expect(await audit.byDfid("dfid_clm_1")).toEqual([event, changed]);
    expect(await audit.byDfid("dfid_sim")).toEqual([event, changed]);
    expect(await audit.bySimulation("sim_1")).toEqual([event, changed]);
    const items = (
      await aws.doc.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": "DFID#dfid_clm_1" },
        }),
      )
    ).Items;
    expect(items).toHaveLength(2);
  });

  it("orders events by instant across time zone offsets", async () => {
    const { audit } = createDynamoPorts({ client: aws.doc, tableName: await aws.newTable() });
    const late = auditFixture("dfid_1", "2025-03-01T10:30:00+02:00", { type: "CREW_COMPLETED" }); // 08:30Z
    const early = auditFixture("dfid_1", "2025-03-01T09:00:00Z", { type: "CREW_STARTED" });
    await audit.append(early);
    await audit.append(late);
    expect((await audit.byDfid("dfid_1")).map((e) => e.event_type)).toEqual(["CREW_COMPLETED", "CREW_STARTED"]);
  });

  it("pages through a flow and a simulation past LastEvaluatedKey", async () => {
    const { audit } = createDynamoPorts({ client: aws.doc, tableName: await aws.newTable(), pageSize: 4 });
    const events = Array.from({ length: 30 }, (_, i) =>
      auditFixture(`dfid_clm_${i % 2}`, `2025-03-01T10:00:${String(i).padStart(2, "0")}.000Z`, {
        rootDfid: "dfid_sim",
        simulationId: "sim_1",
        details: { i },
      }),
    );
    for (const e of events) await audit.append(e);
    const counter = createRequestCounter();
    const remove = countRequests(aws.doc, counter);
    try {
      expect(await audit.bySimulation("sim_1")).toEqual(events);
      expect(counter.snapshot().byService.DynamoDB?.Query).toBeGreaterThanOrEqual(8);
      expect(await audit.byDfid("dfid_clm_1")).toEqual(events.filter((_, i) => i % 2 === 1));
      expect(await audit.byDfid("dfid_sim")).toEqual(events);
    } finally {
      remove();
    }
  });

  it("stores an event over 64 KB compressed and reads it back", async () => {
    const { audit } = createDynamoPorts({ client: aws.doc, tableName: await aws.newTable() });
    const event = auditFixture("dfid_1", "2025-03-01T10:00:00.000Z", {
      details: { prompt: "lorem ipsum ".repeat(30_000), blob: randomText(100_000) },
    });
    await audit.append(event);
    expect(await audit.byDfid("dfid_1")).toEqual([event]);
  });

  it("stores a small event as JSON text and a larger one compressed when that saves a write unit", async () => {
    const tableName = await aws.newTable();
    const { audit } = createDynamoPorts({ client: aws.doc, tableName });
    const small = auditFixture("dfid_1", "2025-03-01T10:00:00.000Z", { details: { note: "short" } });
    const large = auditFixture("dfid_1", "2025-03-01T10:00:01.000Z", {
      details: { inputs: Array.from({ length: 30 }, (_, i) => ({ layer: i, ok: true, note: "within policy" })) },
    });
    await audit.append(small);
    await audit.append(large);
    const items = (
      await aws.doc.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": "DFID#dfid_1" },
        }),
      )
    ).Items!;
    expect(items.map((i) => Object.keys(i).filter((k) => k.startsWith("event")))).toEqual([["event"], ["event_z2"]]);
    expect(items.every((i) => i.hash === undefined && i.instant === undefined)).toBe(true);
    expect(await audit.byDfid("dfid_1")).toEqual([small, large]);
  });

  it("reads events written by the previous layout beside new ones, in order, and drops their redelivery", async () => {
    const tableName = await aws.newTable();
    const { audit } = createDynamoPorts({ client: aws.doc, tableName });
    const [first, second, third] = CLAIM_AUDIT as [AuditEvent, AuditEvent, AuditEvent];
    await aws.doc.send(new PutCommand({ TableName: tableName, Item: previousItem(first, 1) }));
    await aws.doc.send(new PutCommand({ TableName: tableName, Item: previousItem(second, 2, true) }));
    await audit.append(third);
    await audit.append(first);
    await audit.append(second);
    expect(await audit.byDfid(first.dfid)).toEqual([first, second, third]);
  });
});

describe("retention", () => {
  it("keeps audit items for the horizon after their append and then reads them as absent, by flow and by simulation", async () => {
    let now = Date.parse("2026-06-01T00:00:00Z");
    const { audit } = createDynamoPorts({
      client: aws.doc,
      tableName: await aws.newTable(),
      clock: { now: () => now },
      retention: { auditMs: 365 * 86_400_000 },
    });
    const old = auditFixture("dfid_clm_1", "2026-06-01T00:00:00.000Z", {
      type: "CLAIM_RECEIVED",
      rootDfid: "dfid_sim",
      simulationId: "sim_1",
    });
    await audit.append(old);
    now += 200 * 86_400_000;
    const step = (["PROPOSAL_SUBMITTED", "KERNEL_VERDICT"] as const).map((type) =>
      auditFixture("dfid_clm_1", "2026-12-18T00:00:00.000Z", { type, rootDfid: "dfid_sim", simulationId: "sim_1" }),
    );
    await audit.appendAll(step);
    expect(await audit.byDfid("dfid_clm_1")).toEqual([old, ...step]);
    now += 200 * 86_400_000;
    expect(await audit.byDfid("dfid_clm_1")).toEqual(step);
    expect(await audit.byDfid("dfid_sim")).toEqual(step);
    expect(await audit.bySimulation("sim_1")).toEqual(step);
  });

  it("refuses a retention that is not a positive duration", () => {
    expect(() => createDynamoPorts({ client: aws.doc, tableName: "claims", retention: { auditMs: 0 } })).toThrow(
      /retention.auditMs must be a positive number/,
    );
  });
});

describe("what a claim's audit costs", () => {
  it("stores the kernel step's three events as one item of one write unit", async () => {
    const tableName = await aws.newTable();
    const { audit } = createDynamoPorts({ client: aws.doc, tableName });
    const kernelStep = CLAIM_AUDIT.slice(7);
    expect(kernelStep.map((e) => e.event_type)).toEqual([
      "PROPOSAL_SUBMITTED",
      "KERNEL_VERDICT",
      "CLAIM_REFUND_EXECUTED",
    ]);
    const { capacity } = await measureCapacity(aws.doc, () => audit.appendAll(kernelStep));
    expect(capacity).toMatchObject({ wru: 1, requests: { PutItem: 1 } });
    const items = (
      await aws.doc.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": `DFID#${kernelStep[0]!.dfid}` },
        }),
      )
    ).Items!;
    expect(items.map((i) => Object.keys(i).filter((k) => k.startsWith("event")))).toEqual([["events_z2"]]);
    expect(await audit.byDfid(kernelStep[0]!.dfid)).toEqual(kernelStep);
  });

  it("stores a claim's audit, one item per handler step, for 7 write units", async () => {
    const tableName = await aws.newTable();
    const { audit } = createDynamoPorts({ client: aws.doc, tableName });
    // Steps as the handlers append them: intake, crew start, worker, step, worker, step + decision, kernel.
    const steps = [[0], [1], [2], [3], [4], [5, 6], [7, 8, 9]].map((ix) => ix.map((i) => CLAIM_AUDIT[i]!));
    const { capacity } = await measureCapacity(aws.doc, async () => {
      for (const step of steps) await (step.length === 1 ? audit.append(step[0]!) : audit.appendAll(step));
    });
    expect(capacity.wru).toBe(7);
    expect(await audit.byDfid(CLAIM_AUDIT[0]!.dfid)).toEqual(CLAIM_AUDIT);
    // A served claim (no simulation_id) has no index entry in the audit: the served view lists it through its claim.
    const items = (
      await aws.doc.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": `DFID#${CLAIM_AUDIT[0]!.dfid}` },
        }),
      )
    ).Items!;
    expect(items.length).toBeGreaterThan(0);
    expect(items.filter((i) => i.gsi1pk !== undefined)).toEqual([]);
  });

  it("stores the ten audit events of a structured claim for 10 write units instead of 15", async () => {
    const tableName = await aws.newTable();
    const { audit } = createDynamoPorts({ client: aws.doc, tableName });
    expect(CLAIM_AUDIT).toHaveLength(10);
    const after = await measureCapacity(aws.doc, async () => {
      for (const event of CLAIM_AUDIT) await audit.append(event);
    });
    expect(await audit.byDfid(CLAIM_AUDIT[0]!.dfid)).toEqual(CLAIM_AUDIT);
    const previousTable = await aws.newTable();
    const before = await measureCapacity(aws.doc, async () => {
      let seq = 0;
      for (const event of CLAIM_AUDIT)
        await aws.doc.send(new PutCommand({ TableName: previousTable, Item: previousItem(event, ++seq) }));
    });
    expect({ before: before.capacity.wru, after: after.capacity.wru }).toEqual({ before: 15, after: 10 });
  });
});
