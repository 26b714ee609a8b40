// The sweep handler over in-memory ports: besides nudging stalled claims, it finishes a review decision
// whose reviewer's request died after claiming it (found by `npm run chaos`: an approval could stay claimed
// forever, its refund reserved and never announced).
import { describe, expect, it } from "vitest";
import { recordingLogger } from "../local/testing/stack-fixture.ts";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import { SWEEP_RESERVE_SECONDS } from "../app/manifest.ts";
import { SWEEP_BUDGET_MS, createSweepHandler, effectiveMaxTicks } from "./sweep.ts";
import type { MetricRecord } from "./observability/metrics.ts";
import { bundledConfig, bundledPipeline } from "../pipeline/bundled-config.test-kit.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { servedVault } from "../adapters/vault/key-files.ts";
import { PERSONAL_DATA_ERASURES_DFID, inMemoryRetentionWatermark } from "../pipeline/retention.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);

describe("the sweep", () => {
  it("finishes an approval that was claimed but never carried out: the refund is reserved and announced once", async () => {
    let now = NOW;
    const p = bundledPipeline(config, { now: () => now });
    const { record } = await p.decide(
      { claim: { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Laptop does not boot" } },
      { claimId: "clm_esc" },
    );
    expect(record?.verdict).toBe("ESCALATE");
    // The reviewer's request died right after claiming the decision (nothing else happened).
    const review = (await p.deps.reviews.getReview("clm_esc"))!;
    await p.deps.reviews.updateReview({
      ...review,
      intent: { decision: "APPROVE", amount_eur: 1000, reviewer: "alice", decided_at: new Date(now).toISOString() },
      version: review.version + 1,
    });

    now += 10 * 60_000;
    const log = recordingLogger();
    await createSweepHandler(() => p.deps, { logger: log.logger, env: {} })();
    expect(await p.deps.reviews.getReview("clm_esc")).toMatchObject({
      status: "APPROVED",
      approved_amount_eur: 1000,
      reviewer: "alice",
    });
    expect(p.publisher.published.filter((e) => e.detailType === "RefundExecuted").map((e) => e.detail)).toEqual([
      expect.objectContaining({ claim_id: "clm_esc", amount_eur: 1000, approved_by: "alice" }),
    ]);
    expect((await p.deps.ledger.get("ord_002"))?.claims).toEqual({ clm_esc: 100_000 });
    expect(log.lines.find((l) => l.message === "sweep done")?.fields).toEqual([
      expect.objectContaining({ reviewsRepaired: 1 }),
    ]);

    // A second sweep finds nothing left to finish.
    await createSweepHandler(() => p.deps, { logger: log.logger, env: {} })();
    expect(p.publisher.published.filter((e) => e.detailType === "RefundExecuted")).toHaveLength(1);
  });

  it("reports the live refunds near their legal deadline (RefundsDueSoon) and names them, reading the unsettled ones", async () => {
    let now = NOW;
    const p = bundledPipeline(config, { now: () => now });
    const at = new Date(NOW).toISOString();
    const base = { dfid: "dfid_x", order_id: "ord_002", amount_eur: 10, verdict_id: "vrd_x", provider: "stripe" };
    const pending = { ...base, claim_id: "clm_pending", execution_id: "exe_p", status: "PENDING" as const };
    const settled = { ...base, claim_id: "clm_settled", execution_id: "exe_s", status: "SETTLED" as const };
    for (const s of [pending, settled])
      await p.deps.settlements!.create({ ...s, requested_at: at, updated_at: at, attempts: [], version: 1 });
    const emitted: MetricRecord[] = [];
    const metrics = { emit: (r: MetricRecord) => void emitted.push(r), coldStart: () => undefined };
    const run = () => createSweepHandler(() => p.deps, { logger: recordingLogger().logger, metrics, env: {} })();
    const due = (records: MetricRecord[]) =>
      records.flatMap((r) => (r.metrics.RefundsDueSoon === undefined ? [] : [r]));

    expect((await run()).refundsDue).toEqual([]);
    expect(due(emitted)).toEqual([{ metrics: { RefundsDueSoon: 0 }, dimensions: [{ Flow: "live" }] }]);
    now = NOW + 10 * 86_400_000; // 14 − 4 days after the refund was decided (no returns policy: 14 days)
    emitted.length = 0;
    expect((await run()).refundsDue).toEqual([
      { claim_id: "clm_pending", due_at: new Date(NOW + 14 * 86_400_000).toISOString(), days_left: 4 },
    ]);
    expect(due(emitted)).toEqual([{ metrics: { RefundsDueSoon: 1 }, dimensions: [{ Flow: "live" }] }]);
  });
});

/** A RUNNING structured claim last updated `agoMs` before NOW. */
function runningClaim(id: string, agoMs: number): ClaimRecord {
  const at = new Date(NOW - agoMs).toISOString();
  const claim = { order_id: "ord_001", amount_eur: 10, category: "home", reason: "" };
  return {
    claim_id: id,
    dfid: `dfid_${id}`,
    root_dfid: `dfid_${id}`,
    status: "RUNNING",
    received_at: at,
    updated_at: at,
    input: { claim },
    claim,
  };
}

describe("the sweep's time budget", () => {
  it("pages until SWEEP_RESERVE_SECONDS before the function's timeout", () => {
    expect(SWEEP_BUDGET_MS).toBe(60_000 - SWEEP_RESERVE_SECONDS * 1000);
  });

  it("stops before a claim once its budget is spent, and the next run nudges the claims it left", async () => {
    // A clock that moves 1 s each time it is read during a run: the run's budget (2.5 s) runs out part way.
    let now = NOW;
    let step = 1_000;
    const p = bundledPipeline(config, { now: () => (now += step) });
    const ids = Array.from({ length: 6 }, (_, i) => `clm_stuck${i}`);
    for (const [i, id] of ids.entries()) await p.deps.claims.createClaim(runningClaim(id, 3_600_000 + i));
    const log = recordingLogger();
    const env = { CLAIMS_SWEEP_BUDGET_MS: "2500", CLAIMS_SWEEP_LIMIT: "2" };
    await createSweepHandler(() => p.deps, { logger: log.logger, env })();
    const first = log.lines.find((l) => l.message === "sweep done")?.fields[0] as { claims: string[] };
    expect(first.claims.length).toBeGreaterThan(0);
    expect(first.claims.length).toBeLessThan(ids.length);
    expect(log.lines.map((l) => l.message)).toContain(
      "sweep out of time: the claims not reached are left to the next run",
    );

    // The next run, with time to spare, reaches every claim.
    step = 0;
    const next = recordingLogger();
    await createSweepHandler(() => p.deps, { logger: next.logger, env })();
    const second = next.lines.find((l) => l.message === "sweep done")?.fields[0] as { claims: string[] };
    expect([...new Set([...first.claims, ...second.claims])].sort()).toEqual(ids);
    expect(next.lines.map((l) => l.message)).not.toContain(
      "sweep out of time: the claims not reached are left to the next run",
    );
  });
});

describe("the sweep's retention (retention.customer_text_days)", () => {
  it("erases the words of the claims received more than the policy's days ago, once, and logs counts only", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sweep-retention-"));
    try {
      let now = NOW;
      const p = bundledPipeline(config, { now: () => now });
      const vault = servedVault(dir);
      const words = new Map<string, string>();
      for (const [id, daysAgo] of [
        ["clm_old", 400],
        ["clm_older", 500],
        ["clm_new", 30],
      ] as const) {
        await p.deps.claims.createClaim({ ...runningClaim(id, daysAgo * 86_400_000), status: "DECIDED" });
        words.set(id, await vault.seal(id, `The words of ${id}`));
      }
      const watermark = inMemoryRetentionWatermark();
      const retention = () => ({ days: 365, vault, watermark });
      const log = recordingLogger();
      const result = await createSweepHandler(() => p.deps, { logger: log.logger, env: {}, retention })();
      expect(result.erased).toBe(2);
      expect(await vault.open(words.get("clm_old")!)).toBeUndefined();
      expect(await vault.open(words.get("clm_older")!)).toBeUndefined();
      expect(await vault.open(words.get("clm_new")!)).toBe("The words of clm_new");
      expect(log.lines.find((l) => l.message === "retention done")?.fields).toEqual([
        { days: 365, receivedBefore: new Date(NOW - 365 * 86_400_000).toISOString(), examined: 2, erased: 2 },
      ]);
      expect(JSON.stringify(log.lines)).not.toContain("The words of");
      const events = await p.deps.audit.byDfid(PERSONAL_DATA_ERASURES_DFID);
      expect(events.map((e) => e.details)).toEqual([
        expect.objectContaining({ claim_ids: ["clm_old", "clm_older"], cause: "retention", retention_days: 365 }),
      ]);

      // The next run, five minutes on: nothing new to erase, no event appended.
      now += 5 * 60_000;
      expect((await createSweepHandler(() => p.deps, { logger: log.logger, env: {}, retention })()).erased).toBe(0);
      expect(await p.deps.audit.byDfid(PERSONAL_DATA_ERASURES_DFID)).toHaveLength(1);
      expect(await vault.open(words.get("clm_new")!)).toBe("The words of clm_new");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("erases nothing and says so when the policy sets retention but the function composes no vault", async () => {
    const p = bundledPipeline(config, { now: () => NOW });
    const log = recordingLogger();
    const retention = () => ({ days: 365, vault: undefined, watermark: inMemoryRetentionWatermark() });
    expect((await createSweepHandler(() => p.deps, { logger: log.logger, env: {}, retention })()).erased).toBe(0);
    expect(log.lines.map((l) => l.message)).toContain(
      "retention.customer_text_days is set but the sweep composes no vault: nothing erased",
    );
  });
});

describe("effectiveMaxTicks", () => {
  const timeouts = { analystMs: 120_000, decisionMs: 240_000, fixerMs: 120_000 };
  it("waits out the longest queue redelivery (the LLM queues: 5 receives × 270 s) before a claim counts as STALLED", () => {
    // 22.5 minutes of redelivery at one nudge per 5 minutes: 5 nudges cover it, one more finds it truly stuck.
    expect(effectiveMaxTicks(3, 300_000, timeouts)).toBe(6);
    expect(6 * 300_000).toBeGreaterThan(5 * 270_000);
  });

  it("keeps a configured number above that", () => {
    expect(effectiveMaxTicks(20, 300_000, timeouts)).toBe(20);
  });

  it("covers a step timeout longer than every redelivery", () => {
    expect(effectiveMaxTicks(3, 60_000, { ...timeouts, decisionMs: 3_600_000 })).toBe(61);
  });
});
