// The simulated queues behave as SQS does for the pipeline: FIFO order per claim with one batch of a group in
// flight, the five-minute deduplication window, redelivery after the visibility timeout, the DLQ after
// maxReceiveCount receives, timers delayed until due (at most 15 minutes); and the faults do what they say.
import { describe, expect, it } from "vitest";
import { QUEUES, visibilityTimeoutSeconds } from "../app/manifest.ts";
import type { FaultPlan } from "./plan.ts";
import { createRng } from "./rng.ts";
import { createSimQueues } from "./sim-queues.ts";
import type { SimMessage } from "./sim-queues.ts";

const NO_FAULTS: FaultPlan = { duplicate: 0, delay: 0, maxDelayMs: 0, crashAfterCalls: [], race: 0, lostTimer: 0 };

function queues(faults: Partial<FaultPlan> = {}) {
  let now = 1_000_000;
  const q = createSimQueues({ clock: { now: () => now }, rng: createRng(7), faults: { ...NO_FAULTS, ...faults } });
  return { q, at: (ms: number) => (now = ms), now: () => now };
}
const tick = (crewId: string, nowMs: number) => ({ type: "crew.tick" as const, crewId, nowMs });
const bodies = (batch: readonly SimMessage[]) => batch.map((m) => JSON.parse(m.body) as unknown);

describe("the simulated queues", () => {
  it("deliver a claim's crew events in order, one batch of the group at a time", async () => {
    const { q, now } = queues();
    await q.port.sendCrewEvents("c1", [tick("c1", 1), tick("c1", 2)]);
    await q.port.sendCrewEvents("c2", [tick("c2", 1)]);
    const first = q.available(now());
    expect(first.map(bodies)).toEqual([[tick("c1", 1), tick("c1", 2)], [tick("c2", 1)]]);
    q.receive(first[0]!);
    await q.port.sendCrewEvents("c1", [tick("c1", 3)]);
    expect(q.available(now()).map(bodies)).toEqual([[tick("c2", 1)]]); // c1 is in flight
    q.settle(new Map(first[0]!.map((m) => [m, true])), now());
    expect(q.available(now()).map(bodies)).toEqual(expect.arrayContaining([[tick("c1", 3)], [tick("c2", 1)]]));
  });

  it("drop a crew event repeated within five minutes (FIFO deduplication), not after", async () => {
    const { q, at, now } = queues();
    await q.port.sendCrewEvents("c1", [{ type: "claim.start", crewId: "c1" }]);
    await q.port.sendCrewEvents("c1", [{ type: "claim.start", crewId: "c1" }]);
    expect(q.pending()).toBe(1);
    at(now() + 5 * 60_000);
    await q.port.sendCrewEvents("c1", [{ type: "claim.start", crewId: "c1" }]);
    expect(q.pending()).toBe(2);
  });

  it("redeliver a failed message after its visibility timeout, and move it to the DLQ after its last receive", async () => {
    const { q, at, now } = queues();
    await q.port.sendProposal({ claim_id: "c1", dfid: "d1", proposal: {} });
    for (let receive = 1; receive <= QUEUES.proposals.maxReceives; receive++) {
      const [batch] = q.available(now());
      expect(batch?.map((m) => m.receives)).toEqual([receive - 1]);
      q.receive(batch!);
      q.settle(new Map([[batch![0]!, false]]), now());
      expect(q.available(now())).toEqual([]);
      at(now() + visibilityTimeoutSeconds("proposals") * 1000);
    }
    expect(q.pending()).toBe(0);
    expect(q.deadLetters.map((m) => m.receives)).toEqual([QUEUES.proposals.maxReceives]);
  });

  it("hold a timer until it is due, at most 15 minutes", async () => {
    const { q, now } = queues();
    await q.port.scheduleTimer("c1", now() + 120_000);
    await q.port.scheduleTimer("c2", now() + 3_600_000);
    expect(q.available(now())).toEqual([]);
    expect(q.nextVisibleAt()).toBe(now() + 120_000);
    expect(
      q
        .available(now() + 900_000)
        .flat()
        .map((m) => (JSON.parse(m.body) as { claim_id: string }).claim_id)
        .sort(),
    ).toEqual(["c1", "c2"]);
  });

  it("refuse a message that does not match its schema, as the SQS adapter does", async () => {
    const { q } = queues();
    await expect(q.port.sendProposal({ claim_id: "", dfid: "d", proposal: {} })).rejects.toThrow(
      /does not match its schema/,
    );
  });

  it("duplicate, delay and lose messages as the flow's faults say", async () => {
    const dup = queues({ duplicate: 1 });
    await dup.q.port.sendAgentSteps([]);
    await dup.q.port.sendProposal({ claim_id: "c1", dfid: "d1", proposal: {} });
    expect({ pending: dup.q.pending(), counted: dup.q.counts.duplicate }).toEqual({ pending: 2, counted: 1 });
    const lost = queues({ lostTimer: 1 });
    await lost.q.port.scheduleTimer("c1", lost.now());
    expect({ pending: lost.q.pending(), counted: lost.q.counts.lostTimer }).toEqual({ pending: 0, counted: 1 });
    const late = queues({ delay: 1, maxDelayMs: 60_000 });
    await late.q.port.requestExtraction("c1");
    expect(late.q.available(late.now())).toEqual([]);
    expect(late.q.nextVisibleAt()).toBeGreaterThan(late.now());
    expect(late.q.available(late.now() + 60_000)).toHaveLength(1);
  });
});
