// Four eyes per order and reviewer limits (docs/reviews.md#four-eyes, #reviewer-limits): the money one reviewer
// alone approves on an order, across its claims, plus this approval, is checked against
// `second_approval_above_eur` and the reviewer's own `max_approval`; above either the approval waits for a
// different reviewer (whose limit covers it), and two approvals racing on one order are decided one after the other.
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { ReviewerIdentity } from "../core/kernel/review.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { decideReview, repairReviews } from "./review.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
const LAPTOP = { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Laptop does not boot" };
const FOLLOW_UP = { ...LAPTOP, amount_eur: 500, reason: "The charger is missing too" };
const ALICE: ReviewerIdentity = { id: "alice" };
const BOB: ReviewerIdentity = { id: "bob" };

function pipeline(secondApprovalAboveEur?: number) {
  const agent =
    secondApprovalAboveEur === undefined ? config.agent : { ...config.agent, review: { secondApprovalAboveEur } };
  return createInProcessPipeline({
    agent,
    orders: config.orders,
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock: { now: () => NOW },
  });
}

type Pipeline = ReturnType<typeof pipeline>;

/** Two escalated claims on the laptop's order (1200 EUR): the laptop, and a follow-up of 500 EUR. */
async function twoClaims(p: Pipeline): Promise<void> {
  const first = await p.decide({ claim: LAPTOP }, { claimId: "clm_one" });
  expect(first.record?.verdict).toBe("ESCALATE");
  const second = await p.decide({ claim: FOLLOW_UP }, { claimId: "clm_two" });
  expect(second.record?.verdict).toBe("ESCALATE");
}

const refunded = async (p: Pipeline) => (await p.deps.ledger.get("ord_002"))?.refunded_cents ?? 0;

describe("four eyes per order", () => {
  it("makes one reviewer's second approval on the order a first approval once their total passes the bound", async () => {
    const p = pipeline(1000);
    await twoClaims(p);
    const one = await decideReview("clm_one", { decision: "APPROVE", amount_eur: 700, note: "worn" }, p.deps, ALICE);
    expect(one.ok && one.body.review).toMatchObject({ status: "APPROVED" });
    // 700 + 500 = 1200 EUR approved by alice alone on ord_002: above 1000, so a second reviewer is needed.
    const two = await decideReview("clm_two", { decision: "APPROVE" }, p.deps, ALICE);
    expect(two.ok && two.body).toMatchObject({
      executed: false,
      review: { status: "PENDING", awaiting: "SECOND_APPROVAL", approvals: [{ reviewer: "alice", amount_eur: 500 }] },
    });
    expect(await refunded(p)).toBe(70_000);
    const bob = await decideReview("clm_two", { decision: "APPROVE" }, p.deps, BOB);
    expect(bob.ok && bob.body.review).toMatchObject({ status: "APPROVED", reviewer: "bob" });
    expect(await refunded(p)).toBe(120_000);
  });

  it("lets the same reviewer approve both claims alone while their total stays at the bound", async () => {
    const p = pipeline(1200);
    await twoClaims(p);
    await decideReview("clm_one", { decision: "APPROVE", amount_eur: 700, note: "worn" }, p.deps, ALICE);
    const two = await decideReview("clm_two", { decision: "APPROVE" }, p.deps, ALICE);
    expect(two.ok && two.body.review).toMatchObject({ status: "APPROVED", reviewer: "alice" });
    expect(await refunded(p)).toBe(120_000);
  });

  it("counts only what the reviewer approved alone: another reviewer's approvals on the order do not", async () => {
    const p = pipeline(1000);
    await twoClaims(p);
    await decideReview("clm_one", { decision: "APPROVE", amount_eur: 700, note: "worn" }, p.deps, BOB);
    const two = await decideReview("clm_two", { decision: "APPROVE" }, p.deps, ALICE);
    expect(two.ok && two.body.review).toMatchObject({ status: "APPROVED", reviewer: "alice" });
  });

  it("decides two approvals racing on one order one after the other: one completes, the other waits for a second reviewer", async () => {
    const p = pipeline(1000);
    await twoClaims(p);
    const [one, two] = await Promise.all([
      decideReview("clm_one", { decision: "APPROVE", amount_eur: 700, note: "worn" }, p.deps, ALICE),
      decideReview("clm_two", { decision: "APPROVE" }, p.deps, ALICE),
    ]);
    const statuses = [one, two].map((r) => (r.ok ? (r.body.review as { status: string }).status : r.code));
    expect(statuses.sort()).toEqual(["APPROVED", "PENDING"]);
    // Whichever landed first, alice alone reserved at most one of the two.
    expect([70_000, 50_000]).toContain(await refunded(p));
    const waiting = [one, two].findIndex((r) => r.ok && (r.body.review as { status: string }).status === "PENDING");
    expect(waiting).toBeGreaterThanOrEqual(0);
    const completed = await decideReview(waiting === 0 ? "clm_one" : "clm_two", { decision: "APPROVE" }, p.deps, BOB);
    expect(completed.ok && completed.body.review).toMatchObject({ status: "APPROVED", reviewer: "bob" });
    expect(await refunded(p)).toBe(120_000);
  });
});

describe("four eyes per order, under the sweep's repair", () => {
  it("never carries out an approval on a stale approved count: the repair of an interrupted approval is refused APPROVALS_CHANGED like the request", async () => {
    const p = pipeline(1000);
    await twoClaims(p);
    // Alice's approval of clm_two (500 EUR, alone 500 ≤ 1000) is claimed on the review, then the process dies before
    // the reservation: the intent stays, decided on an order with no approved refund.
    const reserve = p.deps.ledger.reserve.bind(p.deps.ledger);
    let crash = true;
    p.deps.ledger.reserve = async (request) => {
      if (crash && request.claimId === "clm_two") {
        crash = false;
        throw new Error("injected crash before the reservation");
      }
      return reserve(request);
    };
    await expect(decideReview("clm_two", { decision: "APPROVE" }, p.deps, ALICE)).rejects.toThrow(/injected crash/);
    expect((await p.deps.reviews.getReview("clm_two"))?.intent).toMatchObject({
      decision: "APPROVE",
      approved_count: 0,
    });
    // Meanwhile alice approves 700 EUR on clm_one alone: the order now holds one approved refund.
    const one = await decideReview("clm_one", { decision: "APPROVE", amount_eur: 700, note: "worn" }, p.deps, ALICE);
    expect(one.ok && one.body.review).toMatchObject({ status: "APPROVED" });
    // The sweep finds clm_two's intent. Carried out as it stands it would make 1200 EUR approved by alice alone
    // (above 1000): the repair reserves on the intent's count, is refused, and withdraws the intent.
    await repairReviews(p.deps);
    expect(await refunded(p)).toBe(70_000);
    const review = await p.deps.reviews.getReview("clm_two");
    expect(review).toMatchObject({ status: "PENDING" });
    expect(review?.intent).toBeUndefined();
    // Decided again, it is a first approval waiting for a second reviewer.
    const again = await decideReview("clm_two", { decision: "APPROVE" }, p.deps, ALICE);
    expect(again.ok && again.body.review).toMatchObject({ status: "PENDING", awaiting: "SECOND_APPROVAL" });
    expect(await refunded(p)).toBe(70_000);
  });
});

describe("reviewer limits (max_approval)", () => {
  it("makes an approval above the reviewer's limit a first approval, refuses a second reviewer whose limit does not cover it (409 APPROVAL_LIMIT), and completes on one whose does", async () => {
    const p = pipeline();
    const { record } = await p.decide({ claim: LAPTOP }, { claimId: "clm_one" });
    expect(record?.verdict).toBe("ESCALATE");
    const junior = await decideReview("clm_one", { decision: "APPROVE" }, p.deps, {
      id: "junior",
      maxApprovalEur: 500,
    });
    expect(junior.ok && junior.body).toMatchObject({
      executed: false,
      review: { status: "PENDING", awaiting: "SECOND_APPROVAL", approvals: [{ reviewer: "junior", amount_eur: 1200 }] },
    });
    const also = await decideReview("clm_one", { decision: "APPROVE" }, p.deps, { id: "mid", maxApprovalEur: 1199.99 });
    expect(also).toMatchObject({ ok: false, status: 409, code: "APPROVAL_LIMIT" });
    expect(await refunded(p)).toBe(0);
    const senior = await decideReview("clm_one", { decision: "APPROVE" }, p.deps, {
      id: "senior",
      maxApprovalEur: 1200,
    });
    expect(senior.ok && senior.body.review).toMatchObject({ status: "APPROVED", reviewer: "senior" });
    expect(await refunded(p)).toBe(120_000);
  });

  it("lets a reviewer approve alone up to their limit, and counts their earlier approvals on the order toward it", async () => {
    const p = pipeline();
    await twoClaims(p);
    const limited = { id: "alice", maxApprovalEur: 1000 };
    const one = await decideReview("clm_one", { decision: "APPROVE", amount_eur: 700, note: "worn" }, p.deps, limited);
    expect(one.ok && one.body.review).toMatchObject({ status: "APPROVED" });
    const two = await decideReview("clm_two", { decision: "APPROVE" }, p.deps, limited);
    expect(two.ok && two.body.review).toMatchObject({ status: "PENDING", awaiting: "SECOND_APPROVAL" });
  });
});
