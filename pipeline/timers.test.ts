import { describe, expect, it } from "vitest";
import { createInMemoryAuditLog } from "./in-memory.ts";
import type { ClaimRecord } from "../core/claims/claim-record.ts";
import { createInMemoryClaimRepository, createInMemoryRefundLedger, createInMemoryReviewRepository, createInMemoryWorkQueues, createRecordingPublisher } from "./in-memory.ts";
import { handleTimer, sweepStalledClaims, timerDelaySeconds } from "./timers.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");

function ports(now = NOW) {
  const queues = createInMemoryWorkQueues();
  return { queues, claims: createInMemoryClaimRepository(), audit: createInMemoryAuditLog(), publisher: createRecordingPublisher(), reviews: createInMemoryReviewRepository(), ledger: createInMemoryRefundLedger(), clock: { now: () => now } };
}

function claim(id: string, status: ClaimRecord["status"], updatedMsAgo: number, structured = true): ClaimRecord {
  const at = new Date(NOW - updatedMsAgo).toISOString();
  return {
    claim_id: id, dfid: `dfid_${id}`, root_dfid: `dfid_${id}`, status, received_at: at, updated_at: at,
    input: structured ? { claim: { order_id: "ord_1", amount_eur: 10, category: "home", reason: "" } } : { claim_text: "ord_1 10 EUR" },
    ...(structured ? { claim: { order_id: "ord_1", amount_eur: 10, category: "home", reason: "" } } : {}),
  };
}

describe("timerDelaySeconds", () => {
  it.each([
    [NOW - 5000, 0],
    [NOW, 0],
    [NOW + 1, 1],
    [NOW + 120_000, 120],
    [NOW + 3_600_000, 900],
  ])("delays a timer due at %d by %d s (never more than SQS's 15 minutes)", (due, expected) => {
    expect(timerDelaySeconds(due, NOW)).toBe(expected);
  });
});

describe("handleTimer", () => {
  it("turns a due timer into a crew.tick at the current time on the claim's group", async () => {
    const p = ports();
    expect(await handleTimer({ claim_id: "c1", due_ms: NOW - 1 }, p)).toBe("TICKED");
    expect(p.queues.take()).toEqual({ queue: "crew-events", claimId: "c1", message: { type: "crew.tick", crewId: "c1", nowMs: NOW } });
  });
  it("re-arms a timer that is not due yet instead of ticking early", async () => {
    const p = ports();
    expect(await handleTimer({ claim_id: "c1", due_ms: NOW + 3_600_000 }, p)).toBe("REARMED");
    expect(p.queues.size()).toBe(0);
    expect(p.queues.timers).toEqual([{ queue: "timers", claimId: "c1", dueMs: NOW + 3_600_000 }]);
  });
});

describe("sweepStalledClaims", () => {
  it("restarts stalled received claims, ticks stalled running ones, and leaves fresh and final ones alone", async () => {
    const p = ports();
    for (const c of [
      claim("text-stuck", "RECEIVED", 600_000, false),
      claim("start-stuck", "RECEIVED", 600_000),
      claim("running-stuck", "RUNNING", 600_000),
      claim("running-fresh", "RUNNING", 10_000),
      claim("done", "DECIDED", 600_000),
      claim("review", "NEEDS_REVIEW", 600_000),
    ]) await p.claims.createClaim(c);
    const result = await sweepStalledClaims(p, { stalledAfterMs: 300_000, limit: 50 });
    expect(result.examined).toBe(3);
    expect(result.restarted.sort()).toEqual(["start-stuck", "text-stuck"]);
    expect(result.ticked).toEqual(["running-stuck"]);
    const sent = [p.queues.take(), p.queues.take(), p.queues.take()];
    expect(sent).toEqual(expect.arrayContaining([
      { queue: "extraction", claimId: "text-stuck" },
      { queue: "crew-events", claimId: "start-stuck", message: { type: "claim.start", crewId: "start-stuck" } },
      { queue: "crew-events", claimId: "running-stuck", message: { type: "crew.tick", crewId: "running-stuck", nowMs: NOW } },
    ]));
  });
  it("honours the limit, oldest first", async () => {
    const p = ports();
    await p.claims.createClaim(claim("newer", "RUNNING", 400_000));
    await p.claims.createClaim(claim("older", "RUNNING", 900_000));
    const result = await sweepStalledClaims(p, { stalledAfterMs: 300_000, limit: 1 });
    expect(result.ticked).toEqual(["older"]);
  });
});
