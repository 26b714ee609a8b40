import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createInMemoryAuditLog } from "./in-memory.ts";
import type { ClaimRecord } from "../core/claims/claim-record.ts";
import { createInMemoryClaimRepository, createInMemoryRefundLedger, createInMemoryReviewRepository, createInMemoryWorkQueues, createRecordingPublisher } from "./in-memory.ts";
import { handleTimer, sweepStalledClaims, timerDelaySeconds } from "./timers.ts";
import { parseConfig } from "../core/claims/config.ts";
import { createRulesModel } from "../core/llm/index.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { handleCrewMessage } from "./orchestrator.ts";

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
  it("audits the receipt of a claim it restarts when intake died before auditing it, so the claim replays (found by npm run chaos)", async () => {
    const p = ports();
    await p.claims.createClaim(claim("no-receipt", "RECEIVED", 600_000));
    await sweepStalledClaims(p, { stalledAfterMs: 300_000, limit: 50 });
    expect((await p.audit.byDfid("dfid_no-receipt")).map((e) => e.event_type)).toEqual(["CLAIM_RECEIVED"]);
    // Restarted again later: the same receipt, so the audit keeps it once.
    await sweepStalledClaims(p, { stalledAfterMs: 300_000, limit: 50 });
    expect((await p.audit.byDfid("dfid_no-receipt")).map((e) => e.event_type)).toEqual(["CLAIM_RECEIVED"]);
  });

  it("honours the limit, oldest first", async () => {
    const p = ports();
    await p.claims.createClaim(claim("newer", "RUNNING", 400_000));
    await p.claims.createClaim(claim("older", "RUNNING", 900_000));
    const result = await sweepStalledClaims(p, { stalledAfterMs: 300_000, limit: 1 });
    expect(result.ticked).toEqual(["older"]);
  });

  it("finds a claim whose worker died, and its tick hands the lost step to the fixer so the claim is decided", async () => {
    const config = parseConfig(readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"), "config.yaml", NOW);
    let now = NOW;
    const p = createInProcessPipeline({ agent: config.agent, orders: config.orders, llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }), clock: { now: () => now } });
    await p.submit({ claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Screen is dead" } }, { claimId: "clm_stalled" });
    const start = p.queues.take();
    if (start?.queue !== "crew-events") throw new Error("expected the crew start");
    await handleCrewMessage(start.message, p.deps);
    expect(p.queues.take()?.queue).toBe("agent-steps"); // the analyst's step, lost with its worker
    expect(p.queues.size()).toBe(0);

    now = NOW + 299_000;
    expect(await sweepStalledClaims(p.deps, { stalledAfterMs: 300_000, limit: 10 })).toEqual({ examined: 0, restarted: [], ticked: [] });
    now = NOW + 300_001;
    expect(await sweepStalledClaims(p.deps, { stalledAfterMs: 300_000, limit: 10 })).toEqual({ examined: 1, restarted: [], ticked: ["clm_stalled"] });
    await p.drain();
    expect(await p.claims.getClaim("clm_stalled")).toMatchObject({ status: "DECIDED", verdict: "ACCEPT", executed: true });
    expect(p.auditEvents().filter((e) => e.event_type === "AGENT_STEP_FAILED" && e.details.fixer).map((e) => (e.details.fixer as { reason: string }).reason)).toEqual(["stall"]);
  });
});
