// The review desk (docs/reviews.md#the-desk): a reviewer takes a review, a lease in their name; another reviewer's
// take or decision is 409 TAKEN_BY until the lease runs out or the holder decides; the queue shows due_at and who
// holds what, the soonest due first and then the larger amount.
import { describe, expect, it } from "vitest";
import type { RefundExecutedDetail } from "../core/kernel/events.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { REVIEW_LEASE_MS, byDueThenAmount, reviewListItem } from "../core/kernel/review.ts";
import { createInMemorySettlementRepository } from "./in-memory.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { payRefund } from "./payments.ts";
import { listReviews, decideReview } from "./review.ts";
import { reviewDesk, takeReview } from "./review-desk.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
const ALICE = { id: "alice" };
const BOB = { id: "bob" };
const LAPTOP = { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Laptop does not boot" };

function pipeline(agent = config.agent) {
  let now = NOW;
  const settlements = createInMemorySettlementRepository();
  const p = createInProcessPipeline({
    agent,
    orders: config.orders,
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock: { now: () => now },
    overrides: { settlements },
  });
  return { p, settlements, later: (ms: number) => (now += ms), now: () => now };
}

async function escalated() {
  const t = pipeline();
  const { record } = await t.p.decide({ claim: LAPTOP }, { claimId: "clm_esc" });
  expect(record?.verdict).toBe("ESCALATE");
  return t;
}

describe("taking a review", () => {
  it("leases it to the taker for 15 minutes; another reviewer's take and decision are 409 TAKEN_BY meanwhile", async () => {
    const { p } = await escalated();
    const taken = await takeReview("clm_esc", ALICE, p.deps);
    expect(taken).toEqual({
      ok: true,
      body: {
        claim_id: "clm_esc",
        review_id: expect.stringMatching(/^rev_/),
        taken_by: "alice",
        taken_until: new Date(NOW + REVIEW_LEASE_MS).toISOString(),
      },
    });
    const byBob = await takeReview("clm_esc", BOB, p.deps);
    expect(byBob).toMatchObject({ ok: false, status: 409, code: "TAKEN_BY" });
    expect(!byBob.ok && byBob.message).toMatch(/taken by alice until 2026-06-01T12:15:00\.000Z/);
    for (const body of [{ decision: "DENY", note: "no" }, { decision: "APPROVE" }])
      expect(await decideReview("clm_esc", body, p.deps, BOB)).toMatchObject({
        ok: false,
        status: 409,
        code: "TAKEN_BY",
      });
    expect((await p.deps.reviews.getReview("clm_esc"))?.status).toBe("PENDING");
    expect(p.publisher.published.filter((e) => e.detailType === "ReviewDecided")).toEqual([]);
    // The holder decides; the decision ends the lease.
    const denied = await decideReview("clm_esc", { decision: "DENY", note: "fraud pattern" }, p.deps, ALICE);
    expect(denied.ok && denied.body.review).toMatchObject({ status: "DENIED", reviewer: "alice" });
    const stored = await p.deps.reviews.getReview("clm_esc");
    expect(stored).not.toHaveProperty("taken_by");
    expect(await takeReview("clm_esc", BOB, p.deps)).toMatchObject({ status: 409, code: "REVIEW_ALREADY_DECIDED" });
  });

  it("is free again once the lease runs out: the other reviewer may take it or decide", async () => {
    const { p, later } = await escalated();
    await takeReview("clm_esc", ALICE, p.deps);
    later(REVIEW_LEASE_MS - 1);
    expect(await takeReview("clm_esc", BOB, p.deps)).toMatchObject({ code: "TAKEN_BY" });
    later(1);
    expect(await takeReview("clm_esc", BOB, p.deps)).toMatchObject({ ok: true, body: { taken_by: "bob" } });
    expect(await decideReview("clm_esc", { decision: "DENY", note: "n" }, p.deps, ALICE)).toMatchObject({
      code: "TAKEN_BY",
    });
  });

  it("renews the holder's own lease when taken again", async () => {
    const { p, later } = await escalated();
    await takeReview("clm_esc", ALICE, p.deps);
    later(10 * 60_000);
    const again = await takeReview("clm_esc", ALICE, p.deps);
    expect(again.ok && again.body.taken_until).toBe(new Date(NOW + 10 * 60_000 + REVIEW_LEASE_MS).toISOString());
  });

  it("ends the first approver's lease with a first approval under four eyes, so a second reviewer can take it", async () => {
    const t = pipeline({ ...config.agent, review: { secondApprovalAboveEur: 1000 } });
    await t.p.decide({ claim: LAPTOP }, { claimId: "clm_esc" });
    await takeReview("clm_esc", ALICE, t.p.deps);
    const first = await decideReview("clm_esc", { decision: "APPROVE" }, t.p.deps, ALICE);
    expect(first.ok && first.body.review).toMatchObject({ status: "PENDING", awaiting: "SECOND_APPROVAL" });
    expect(await takeReview("clm_esc", BOB, t.p.deps)).toMatchObject({ ok: true });
    const second = await decideReview("clm_esc", { decision: "APPROVE" }, t.p.deps, BOB);
    expect(second.ok && second.body.review).toMatchObject({ status: "APPROVED", reviewer: "bob" });
  });

  it("answers 404 for an unknown claim and NO_PENDING_REVIEW for a claim without a review", async () => {
    const { p } = pipeline();
    expect(await takeReview("clm_nobody", ALICE, p.deps)).toMatchObject({ status: 404, code: "NOT_FOUND" });
    await p.decide(
      { claim: { order_id: "ord_001", amount_eur: 50, category: "electronics", reason: "cracked" } },
      { claimId: "clm_ok" },
    );
    expect(await takeReview("clm_ok", ALICE, p.deps)).toMatchObject({ status: 409, code: "NO_PENDING_REVIEW" });
  });

  it("takes a failed refund's review too: another reviewer's RETRY or CLOSE is 409 TAKEN_BY", async () => {
    const { p, settlements } = pipeline();
    await p.decide(
      { claim: { order_id: "ord_001", amount_eur: 50, category: "electronics", reason: "cracked" } },
      { claimId: "clm_pay" },
    );
    const refused = {
      name: "simulated" as const,
      needsPaymentRef: false,
      refund: async () => ({ status: "FAILED" as const, failureReason: "x" }),
    };
    for (const e of p.publisher.published.filter((x) => x.detailType === "RefundExecuted"))
      await payRefund({ ...p.deps, settlements, provider: refused }, e.detail as RefundExecutedDetail);
    const review = (await settlements.get("clm_pay"))!.review!;
    expect(await takeReview("clm_pay", ALICE, p.deps)).toMatchObject({
      ok: true,
      body: { review_id: review.review_id },
    });
    expect(await decideReview("clm_pay", { decision: "RETRY" }, p.deps, BOB)).toMatchObject({ code: "TAKEN_BY" });
    expect(
      await decideReview("clm_pay", { decision: "CLOSE", paid_out_of_band: false, note: "n" }, p.deps, BOB),
    ).toMatchObject({
      code: "TAKEN_BY",
    });
    const listed = (await listReviews({}, p.deps)).refundReviews[0];
    expect(listed).toMatchObject({ taken_by: "alice", due_at: expect.any(String) });
    const retried = await decideReview("clm_pay", { decision: "RETRY" }, p.deps, ALICE);
    expect(retried.ok && retried.body.review).toMatchObject({ status: "RETRIED" });
    expect((await settlements.get("clm_pay"))?.review).not.toHaveProperty("taken_by");
  });
});

describe("the queue", () => {
  it("shows due_at (requested + the policy's due) and who holds each review", async () => {
    const t = pipeline({ ...config.agent, review: { dueMs: 24 * 3_600_000 } });
    await t.p.decide({ claim: LAPTOP }, { claimId: "clm_esc" });
    await takeReview("clm_esc", ALICE, t.p.deps);
    const [item] = (await listReviews({}, t.p.deps)).items;
    const listed = reviewListItem(item!.review, item!.context, reviewDesk(t.p.deps));
    expect(listed).toMatchObject({
      requested_at: new Date(NOW).toISOString(),
      due_at: new Date(NOW + 24 * 3_600_000).toISOString(),
      taken_by: "alice",
      taken_until: new Date(NOW + REVIEW_LEASE_MS).toISOString(),
    });
    t.later(REVIEW_LEASE_MS);
    expect(reviewListItem(item!.review, item!.context, reviewDesk(t.p.deps))).not.toHaveProperty("taken_by");
  });

  it("orders the soonest due first, then the larger amount, then the claim id", () => {
    const items = [
      { claim_id: "c", due_at: "2026-06-02T00:00:00.000Z", amount_eur: 10 },
      { claim_id: "b", due_at: "2026-06-01T00:00:00.000Z", amount_eur: 10 },
      { claim_id: "a", due_at: "2026-06-02T00:00:00.000Z", amount_eur: 900 },
      { claim_id: "d", due_at: "2026-06-02T00:00:00.000Z", amount_eur: 10 },
    ];
    expect(items.sort(byDueThenAmount).map((i) => i.claim_id)).toEqual(["b", "a", "c", "d"]);
  });
});

describe("ReviewOpened", () => {
  it("announces every review that opens with its due time: an escalation, and a failed refund's own review", async () => {
    const t = pipeline({ ...config.agent, review: { dueMs: 6 * 3_600_000 } });
    await t.p.decide({ claim: LAPTOP }, { claimId: "clm_esc" });
    const opened = () => t.p.publisher.published.filter((e) => e.detailType === "ReviewOpened").map((e) => e.detail);
    const review = await t.p.deps.reviews.getReview("clm_esc");
    expect(opened()).toEqual([
      {
        review_id: review!.review_id,
        claim_id: "clm_esc",
        dfid: review!.dfid,
        origin: "ESCALATE",
        reason_code: "AMOUNT_ABOVE_LIMIT",
        reason: review!.reason,
        order_id: "ord_002",
        amount_eur: 1200,
        amount: { value: "1200.00", currency: "EUR" },
        requested_at: review!.requested_at,
        due_at: new Date(Date.parse(review!.requested_at) + 6 * 3_600_000).toISOString(),
      },
    ]);
    await t.p.decide(
      { claim: { order_id: "ord_001", amount_eur: 50, category: "electronics", reason: "cracked" } },
      { claimId: "clm_pay" },
    );
    const refused = {
      name: "simulated" as const,
      needsPaymentRef: false,
      refund: async () => ({ status: "FAILED" as const, failureReason: "x" }),
    };
    for (const e of t.p.publisher.published.filter((x) => x.detailType === "RefundExecuted"))
      await payRefund(
        { ...t.p.deps, settlements: t.settlements, provider: refused, reviewDueMs: () => 6 * 3_600_000 },
        e.detail as RefundExecutedDetail,
      );
    const failed = (await t.settlements.get("clm_pay"))!.review!;
    expect(opened()[1]).toEqual({
      review_id: failed.review_id,
      claim_id: "clm_pay",
      dfid: expect.any(String),
      origin: "REFUND_FAILED",
      reason_code: "REFUND_FAILED",
      reason: failed.reason,
      order_id: "ord_001",
      amount_eur: 50,
      amount: { value: "50.00", currency: "EUR" },
      requested_at: failed.requested_at,
      due_at: new Date(Date.parse(failed.requested_at) + 6 * 3_600_000).toISOString(),
    });
  });
});
