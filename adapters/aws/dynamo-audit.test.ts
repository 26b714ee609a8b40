// The audit log on dynalite beyond the shared contract: a redelivered identical event is stored once,
// queries page past LastEvaluatedKey, and a large event is stored compressed.
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { auditFixture, randomText } from "./contract.test-kit.ts";
import { createDynamoPorts } from "./dynamo-ports.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { countRequests, createRequestCounter } from "./request-counter.ts";

const aws = useEmulatedAws();

describe("DynamoDB audit log", () => {
  it("stores a redelivered identical event once, in its flow, its root flow and its simulation", async () => {
    const tableName = await aws.newTable();
    const { audit } = createDynamoPorts({ client: aws.doc, tableName });
    const event = auditFixture("dfid_clm_1", "2025-03-01T10:00:00.000Z", { type: "KERNEL_VERDICT", rootDfid: "dfid_sim", simulationId: "sim_1" });
    const changed = auditFixture("dfid_clm_1", "2025-03-01T10:00:00.000Z", { type: "KERNEL_VERDICT", rootDfid: "dfid_sim", simulationId: "sim_1", details: { other: true } });
    await audit.append(event);
    await audit.append(structuredClone(event));
    await Promise.all([audit.append(event), audit.append(event)]);
    await audit.append(changed);
    expect(await audit.byDfid("dfid_clm_1")).toEqual([event, changed]);
    expect(await audit.byDfid("dfid_sim")).toEqual([event, changed]);
    expect(await audit.bySimulation("sim_1")).toEqual([event, changed]);
    const items = (await aws.doc.send(new QueryCommand({ TableName: tableName, KeyConditionExpression: "pk = :pk", ExpressionAttributeValues: { ":pk": "DFID#dfid_clm_1" } }))).Items;
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
      auditFixture(`dfid_clm_${i % 2}`, `2025-03-01T10:00:${String(i).padStart(2, "0")}.000Z`, { rootDfid: "dfid_sim", simulationId: "sim_1", details: { i } }),
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
    const event = auditFixture("dfid_1", "2025-03-01T10:00:00.000Z", { details: { prompt: "lorem ipsum ".repeat(30_000), blob: randomText(100_000) } });
    await audit.append(event);
    expect(await audit.byDfid("dfid_1")).toEqual([event]);
  });
});
