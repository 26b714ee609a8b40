// The sweep handler over in-memory ports: besides nudging stalled claims, it finishes a review decision
// whose reviewer's request died after claiming it (found by `npm run chaos`: an approval could stay claimed
// forever, its refund reserved and never announced).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../core/claims/config.ts";
import { createRulesModel } from "../core/claims/rules-model.ts";
import { createInProcessPipeline } from "../pipeline/in-process.ts";
import { recordingLogger } from "../local/stack-fixture.ts";
import { createSweepHandler, effectiveMaxTicks } from "./sweep.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = parseConfig(
  readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"),
  "config.yaml",
  NOW,
);

describe("the sweep", () => {
  it("finishes an approval that was claimed but never carried out: the refund is reserved and announced once", async () => {
    let now = NOW;
    const p = createInProcessPipeline({
      agent: config.agent,
      orders: config.orders,
      llm: createRulesModel({ contract: config.agent.contract }),
      clock: { now: () => now },
    });
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
});

describe("effectiveMaxTicks", () => {
  const timeouts = { analystMs: 120_000, decisionMs: 240_000, fixerMs: 120_000 };
  it("waits out the longest queue redelivery (extraction: 3 receives × 720 s) before a claim counts as STALLED", () => {
    // 36 minutes of redelivery at one nudge per 5 minutes: 8 nudges cover it, one more finds it truly stuck.
    expect(effectiveMaxTicks(3, 300_000, timeouts)).toBe(9);
    expect(9 * 300_000).toBeGreaterThan(3 * 720_000);
  });

  it("keeps a configured number above that", () => {
    expect(effectiveMaxTicks(20, 300_000, timeouts)).toBe(20);
  });

  it("covers a step timeout longer than every redelivery", () => {
    expect(effectiveMaxTicks(3, 60_000, { ...timeouts, decisionMs: 3_600_000 })).toBe(61);
  });
});
