// The crew start's session-layout stamp on dynalite, through the real SDK (issue 37): a start made by the intake that
// stored the claim says the claim's session can only be in the step layout, so the orchestrator's first load is one
// Query (not two: the head layout of older releases is not looked for); a start without the stamp — an older
// release's, the sweep's restart — still finds a session an older release wrote as a head; a redelivered stamped
// start finds the step its first delivery wrote.
import { PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { bundledConfig, bundledPipeline } from "../../pipeline/bundled-config.test-kit.ts";
import { CrewQueueMessageSchema, mayHaveLegacySession } from "../../pipeline/messages.ts";
import type { CrewQueueMessage } from "../../pipeline/messages.ts";
import { handleCrewMessage } from "../../pipeline/orchestrator.ts";
import { measureCapacity } from "./capacity.test-kit.ts";
import { createDynamoSessionRepository } from "./dynamo-sessions.ts";
import { useEmulatedAws } from "./emulators.test-kit.ts";
import { keys, SESSION_STEP_PREFIX } from "./table.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
const aws = useEmulatedAws();
const CLAIM = { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Screen is dead on arrival" };

/** A pipeline (in-memory but for its sessions, on dynalite) with one structured claim submitted; its crew start taken. */
async function submitted() {
  const tableName = await aws.newTable();
  const p = bundledPipeline(config, { now: () => NOW });
  const memorySessions = p.deps.sessions;
  p.deps.sessions = createDynamoSessionRepository({
    client: aws.doc,
    tableName,
    clock: { now: () => NOW },
    pageSize: undefined,
  });
  const submit = await p.submit({ claim: CLAIM });
  if (!submit.ok) throw new Error(`not submitted: ${submit.message}`);
  const work = p.queues.take();
  if (work?.queue !== "crew-events" || work.message.type !== "claim.start") throw new Error("expected the crew start");
  const steps = async () =>
    (
      await aws.doc.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :steps)",
          ExpressionAttributeValues: { ":pk": keys.sessionStep(submit.claimId, 1).pk, ":steps": SESSION_STEP_PREFIX },
          ConsistentRead: true,
        }),
      )
    ).Items ?? [];
  return { p, tableName, claimId: submit.claimId, start: work.message, memorySessions, steps };
}

describe("the crew start's session-layout stamp", () => {
  it("is checked by the crew queue's schema, and a batch holding a stamped start skips the older layout", () => {
    const start = { type: "claim.start", crewId: "clm_1" } as const;
    expect(CrewQueueMessageSchema.parse({ ...start, sessionLayout: "steps" })).toEqual({
      ...start,
      sessionLayout: "steps",
    });
    const other = CrewQueueMessageSchema.safeParse({ ...start, sessionLayout: "head" });
    expect(other.success).toBe(false);
    expect(other.error?.issues.map((i) => i.path.join("."))).toEqual(["sessionLayout"]);
    const tick = { type: "crew.tick", crewId: "clm_1", nowMs: NOW } as const;
    expect(mayHaveLegacySession([start, tick])).toBe(true);
    expect(mayHaveLegacySession([tick, { ...start, sessionLayout: "steps" }])).toBe(false);
  });

  it("a start made by the intake that stored the claim is stamped, and its first load is one Query", async () => {
    const { p, start, steps } = await submitted();
    expect(start).toMatchObject({ type: "claim.start", sessionLayout: "steps" });
    const { result, capacity } = await measureCapacity(aws.doc, () => handleCrewMessage(start, p.deps));
    expect(result).toBe("STARTED");
    // The claims are in memory here: every DynamoDB request is the session's. Unstamped, the load was 2 Queries.
    expect(capacity.requests).toEqual({ Query: 1, PutItem: 1 });
    expect((await steps()).map((i) => i.version)).toEqual([1]);
  });

  it("a redelivered stamped start finds the step its first delivery wrote and starts no second crew", async () => {
    const { p, start, steps } = await submitted();
    expect(await handleCrewMessage(start, p.deps)).toBe("STARTED");
    const again = await handleCrewMessage(start, p.deps);
    expect(again).not.toBe("STARTED");
    expect((await steps()).map((i) => i.version)).toEqual([1]);
  });

  it("an unstamped start still finds a session an older release wrote as the claim's head", async () => {
    const { p, tableName, claimId, start, memorySessions, steps } = await submitted();
    // The crew's first step as an older release stored it: one head item per claim, its body packed JSON.
    const sessions = p.deps.sessions;
    p.deps.sessions = memorySessions;
    expect(await handleCrewMessage(start, p.deps)).toBe("STARTED");
    const first = await memorySessions.loadSession(claimId);
    if (!first) throw new Error("expected the crew's first step");
    await aws.doc.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...keys.session(claimId),
          entity: "session",
          claim_id: claimId,
          version: first.version,
          body_kind: "packed",
          body: JSON.stringify({ snapshot: first.snapshot, outbox: [] }),
        },
      }),
    );
    p.deps.sessions = sessions;
    const { sessionLayout: _stamp, ...unstamped } = start as Extract<CrewQueueMessage, { type: "claim.start" }>;
    const { result, capacity } = await measureCapacity(aws.doc, () => handleCrewMessage(unstamped, p.deps));
    expect(result).toBe("DUPLICATE");
    expect(capacity.requests).toEqual({ Query: 2 });
    expect(await steps()).toEqual([]);
    expect(await sessions.loadSession(claimId)).toMatchObject({ version: 1, snapshot: first.snapshot, outbox: [] });
  });
});
