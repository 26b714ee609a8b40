// The claim view's loading (GET /claims/{id}, GET /claims): which items it reads for a claim in each state, and
// that the view is the one `claimView` builds from the claim, its review and its settlement.
import { describe, expect, it } from "vitest";
import { claimView } from "../../core/kernel/claim-record.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { SettlementRecord } from "../../core/kernel/settlement.ts";
import { ACCEPTABLE, ESCALATED, NOW, claimRecord } from "../../pipeline/decide/decide.test-kit.ts";
import { reviewFor } from "../../pipeline/decide/needs-review.ts";
import { createInMemoryReviewRepository, createInMemorySettlementRepository } from "../../pipeline/in-memory.ts";
import { loadClaimView } from "./intake-routes.ts";

const AT = new Date(NOW).toISOString();

/** In-memory reviews and settlements that record every read by claim id. */
async function stores(record: ClaimRecord, with_: { review?: boolean; settlement?: boolean }) {
  const reviews = createInMemoryReviewRepository();
  const settlements = createInMemorySettlementRepository();
  const review = reviewFor(record, { origin: "ESCALATE", reasonCode: "AMOUNT_ABOVE_LIMIT", reason: "above", now: NOW });
  if (with_.review) await reviews.openReview(review);
  const settlement: SettlementRecord = {
    claim_id: record.claim_id,
    dfid: record.dfid,
    order_id: "ord_001",
    amount_eur: 299.99,
    verdict_id: "vrd_1",
    provider: "simulated",
    execution_id: "exe_1",
    status: "SETTLED",
    provider_ref: "re_1",
    requested_at: AT,
    updated_at: AT,
    attempts: [],
    announced: "SETTLED",
    version: 1,
  };
  if (with_.settlement) await settlements.create(settlement);
  const reads: string[] = [];
  return {
    reads,
    review,
    settlement,
    deps: {
      reviews: { ...reviews, getReview: (id: string) => (reads.push("review"), reviews.getReview(id)) },
      settlements: { ...settlements, get: (id: string) => (reads.push("settlement"), settlements.get(id)) },
    },
  };
}

describe("the claim view's reads", () => {
  it("read nothing beyond the claim while it is in progress", async () => {
    const record = claimRecord(ACCEPTABLE);
    const s = await stores(record, {});
    expect(await loadClaimView(record, s.deps)).toEqual(claimView(record));
    expect(s.reads).toEqual([]);
  });

  it("read nothing beyond the claim for a rejection", async () => {
    const record = claimRecord(ACCEPTABLE, { status: "DECIDED", verdict: "REJECT", reason_code: "ORDER_NOT_FOUND" });
    const s = await stores(record, {});
    const view = await loadClaimView(record, s.deps);
    expect(view).toEqual(claimView(record));
    expect(view.customer_message).toEqual(expect.any(String));
    expect(s.reads).toEqual([]);
  });

  it("read the settlement, and no review, for an executed acceptance", async () => {
    const record = claimRecord(ACCEPTABLE, { status: "DECIDED", verdict: "ACCEPT", executed: true });
    const s = await stores(record, { settlement: true });
    const view = await loadClaimView(record, s.deps);
    expect(view).toEqual(claimView(record, undefined, s.settlement));
    expect(view.refund).toBeDefined();
    expect(s.reads).toEqual(["settlement"]);
  });

  it("read the review of an escalated claim and of one that needs review", async () => {
    for (const overrides of [
      { status: "DECIDED", verdict: "ESCALATE" },
      { status: "NEEDS_REVIEW", reason_code: "STALLED" },
    ] as const) {
      const record = claimRecord(ESCALATED, overrides);
      const s = await stores(record, { review: true });
      const view = await loadClaimView(record, s.deps);
      expect(view).toEqual(claimView(record, s.review));
      expect(view.review).toMatchObject({ status: "PENDING" });
      expect(s.reads).toEqual(["review"]);
    }
  });

  it("read the review and the settlement of an escalated claim a person approved", async () => {
    const record = claimRecord(ESCALATED, { status: "DECIDED", verdict: "ESCALATE", executed: true });
    const s = await stores(record, { review: true, settlement: true });
    expect(await loadClaimView(record, s.deps)).toEqual(claimView(record, s.review, s.settlement));
    expect(s.reads.sort()).toEqual(["review", "settlement"]);
  });
});
