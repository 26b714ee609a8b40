// People on the review path (docs/reviews.md): the recorded reviewer is the authenticated one, DENY and a reduced
// APPROVE need a note, an APPROVE above the four-eyes bound waits for a different reviewer, and the reviewer who
// resubmitted a claim cannot approve it.
import { describe, expect, it } from "vitest";
import { replayClaim } from "../core/history/replay/index.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { checkMoneyInvariants } from "./testing/money-invariants.ts";
import { decideReview } from "./review.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";
import { orderTotalMajor } from "../core/kernel/order-view.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
const LAPTOP = { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Laptop does not boot" };
const ALICE = { id: "alice", name: "Alice Martin" };
const BOB = { id: "bob" };

function pipeline(secondApprovalAboveEur?: number) {
  let now = NOW;
  const agent =
    secondApprovalAboveEur === undefined ? config.agent : { ...config.agent, review: { secondApprovalAboveEur } };
  const p = createInProcessPipeline({
    agent,
    orders: config.orders,
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock: { now: () => now },
  });
  return { p, later: (ms: number) => (now += ms) };
}

async function escalated(secondApprovalAboveEur?: number) {
  const { p, later } = pipeline(secondApprovalAboveEur);
  const { record } = await p.decide({ claim: LAPTOP }, { claimId: "clm_esc" });
  expect(record?.verdict).toBe("ESCALATE");
  return { p, later };
}

const published = (p: ReturnType<typeof pipeline>["p"], type: string) =>
  p.publisher.published.filter((e) => e.detailType === type).map((e) => e.detail as Record<string, unknown>);

describe("the recorded reviewer", () => {
  it("is the authenticated identity on the review, ReviewDecided, RefundExecuted and the audit", async () => {
    const { p } = await escalated();
    const result = await decideReview("clm_esc", { decision: "APPROVE" }, p.deps, ALICE);
    expect(result.ok && result.body.review).toMatchObject({ status: "APPROVED", reviewer: "alice" });
    expect(published(p, "ReviewDecided")).toEqual([
      expect.objectContaining({
        reviewer: "alice",
        approvals: [{ reviewer: "alice", amount_eur: 1200, at: expect.any(String) }],
      }),
    ]);
    expect(published(p, "RefundExecuted")).toEqual([expect.objectContaining({ approved_by: "alice" })]);
    const audit = p.auditEvents().find((e) => e.event_type === "REVIEW_DECIDED");
    expect(audit?.details.reviewer).toBe("alice");
  });

  it("accepts a body reviewer that names the credential's own id or name, and refuses anyone else with 400", async () => {
    const { p } = await escalated();
    expect(
      await decideReview("clm_esc", { decision: "DENY", note: "no", reviewer: "mallory" }, p.deps, ALICE),
    ).toMatchObject({
      ok: false,
      status: 400,
      code: "REVIEWER_MISMATCH",
    });
    expect((await p.deps.reviews.getReview("clm_esc"))?.status).toBe("PENDING");
    const named = await decideReview(
      "clm_esc",
      { decision: "DENY", note: "no", reviewer: "Alice Martin" },
      p.deps,
      ALICE,
    );
    expect(named.ok && named.body.review).toMatchObject({ status: "DENIED", reviewer: "alice" });
  });
});

describe("NOTE_REQUIRED", () => {
  it.each([
    ["a DENY without a note", { decision: "DENY" }],
    ["a DENY with a blank note", { decision: "DENY", note: "  " }],
    ["an APPROVE of less than proposed without a note", { decision: "APPROVE", amount_eur: 900 }],
  ])("refuses %s with 400 and writes nothing", async (_name, body) => {
    const { p } = await escalated();
    expect(await decideReview("clm_esc", body, p.deps, ALICE)).toMatchObject({
      ok: false,
      status: 400,
      code: "NOTE_REQUIRED",
    });
    expect((await p.deps.reviews.getReview("clm_esc"))?.status).toBe("PENDING");
    expect(published(p, "ReviewDecided")).toEqual([]);
  });

  it("lets an APPROVE of the whole proposal go without a note, and a reduced one with a note", async () => {
    const whole = await escalated();
    expect((await decideReview("clm_esc", { decision: "APPROVE", amount_eur: 1200 }, whole.p.deps, ALICE)).ok).toBe(
      true,
    );
    const reduced = await escalated();
    const r = await decideReview(
      "clm_esc",
      { decision: "APPROVE", amount_eur: 900, note: "300 withheld" },
      reduced.p.deps,
      ALICE,
    );
    expect(r.ok && r.body.review).toMatchObject({ amount_eur: 900, note: "300 withheld" });
  });
});

describe("four eyes (second_approval_above_eur)", () => {
  it("records an APPROVE above the bound as the first approval: PENDING awaiting a second, nothing published or reserved", async () => {
    const { p } = await escalated(1000);
    const first = await decideReview("clm_esc", { decision: "APPROVE" }, p.deps, ALICE);
    expect(first.ok && first.body).toMatchObject({
      executed: false,
      review: { status: "PENDING", awaiting: "SECOND_APPROVAL", approvals: [{ reviewer: "alice", amount_eur: 1200 }] },
    });
    expect(
      p.publisher.published.filter((e) => e.detailType === "ReviewDecided" || e.detailType === "RefundExecuted"),
    ).toEqual([]);
    expect((await p.deps.ledger.get("ord_002"))?.refunded_cents ?? 0).toBe(0);
    expect(p.auditEvents().filter((e) => e.event_type === "REVIEW_APPROVAL_RECORDED")).toHaveLength(1);
    // A PENDING review with a first approval replays as such.
    expect(replayClaim("clm_esc", p.auditEvents()).status).toBe("IDENTICAL");
  });

  it("refuses the same reviewer's second approval with 409 SAME_REVIEWER, and completes on a different reviewer's", async () => {
    const { p, later } = await escalated(1000);
    await decideReview("clm_esc", { decision: "APPROVE" }, p.deps, ALICE);
    expect(await decideReview("clm_esc", { decision: "APPROVE" }, p.deps, ALICE)).toMatchObject({
      ok: false,
      status: 409,
      code: "SAME_REVIEWER",
    });
    later(60_000);
    const second = await decideReview("clm_esc", { decision: "APPROVE" }, p.deps, BOB);
    expect(second.ok && second.body).toMatchObject({ executed: true, review: { status: "APPROVED", reviewer: "bob" } });
    const [decided] = published(p, "ReviewDecided");
    expect(decided).toMatchObject({ reviewer: "bob", amount_eur: 1200 });
    expect((decided!.approvals as { reviewer: string }[]).map((a) => a.reviewer)).toEqual(["alice", "bob"]);
    expect(published(p, "RefundExecuted")).toEqual([expect.objectContaining({ approved_by: "bob", amount_eur: 1200 })]);
    expect((await p.deps.ledger.get("ord_002"))?.refunded_cents).toBe(120_000);
    // Repeating the completing approval reserves nothing more.
    expect((await decideReview("clm_esc", { decision: "APPROVE" }, p.deps, BOB)).ok).toBe(true);
    expect((await p.deps.ledger.get("ord_002"))?.refunded_cents).toBe(120_000);
    // (a repeat announces the same refund again, with the same execution id: consumers drop it)
    expect(new Set(published(p, "RefundExecuted").map((e) => JSON.stringify(e))).size).toBe(1);
    expect(replayClaim("clm_esc", p.auditEvents()).status).toBe("IDENTICAL");
    const orderAmountEur = (id: string) => orderTotalMajor(config.orders.find((o) => o.order_id === id));
    const limitEur = config.agent.contract.max_refund_without_escalation;
    expect(checkMoneyInvariants(p.publisher.published, { orderAmountEur, limitEur }).violations).toEqual([]);
  });

  it("lets the second reviewer approve less (with a note) but never more than the first approval", async () => {
    const { p } = await escalated(500);
    await decideReview("clm_esc", { decision: "APPROVE", amount_eur: 1000, note: "200 withheld" }, p.deps, ALICE);
    expect(
      await decideReview("clm_esc", { decision: "APPROVE", amount_eur: 1100, note: "x" }, p.deps, BOB),
    ).toMatchObject({
      status: 400,
      code: "INVALID_AMOUNT",
    });
    const second = await decideReview("clm_esc", { decision: "APPROVE", note: "agreed" }, p.deps, BOB);
    expect(second.ok && second.body.review).toMatchObject({ status: "APPROVED", amount_eur: 1000 });
  });

  it("does not apply at or below the bound: one approval completes", async () => {
    const { p } = await escalated(1200);
    const r = await decideReview("clm_esc", { decision: "APPROVE" }, p.deps, ALICE);
    expect(r.ok && r.body.review).toMatchObject({ status: "APPROVED" });
  });

  it("lets a first approval be denied by anyone", async () => {
    const { p } = await escalated(1000);
    await decideReview("clm_esc", { decision: "APPROVE" }, p.deps, ALICE);
    const denied = await decideReview("clm_esc", { decision: "DENY", note: "fraud pattern" }, p.deps, BOB);
    expect(denied.ok && denied.body.review).toMatchObject({ status: "DENIED", reviewer: "bob" });
    expect(published(p, "RefundExecuted")).toEqual([]);
    expect(replayClaim("clm_esc", p.auditEvents()).status).toBe("IDENTICAL");
  });
});

describe("a resubmitted claim", () => {
  it("cannot be approved by the reviewer who resubmitted it (409 SAME_REVIEWER); another reviewer can", async () => {
    const { p } = pipeline();
    const { record } = await p.decide(
      { claim_text: "Hi, the laptop I bought last month does not boot, I paid 1200 EUR. Please help." },
      { claimId: "clm_txt" },
    );
    expect(record?.status).toBe("NEEDS_REVIEW");
    const resubmitted = await decideReview("clm_txt", { decision: "RESUBMIT", claim: LAPTOP }, p.deps, ALICE);
    if (!resubmitted.ok) throw new Error(resubmitted.message);
    await p.drain();
    const child = resubmitted.body.resubmitted_claim_id!;
    const review = await p.deps.reviews.getReview(child);
    expect(review?.origin).toBe("ESCALATE");
    expect(await decideReview(child, { decision: "APPROVE" }, p.deps, ALICE)).toMatchObject({
      status: 409,
      code: "SAME_REVIEWER",
    });
    const approved = await decideReview(child, { decision: "APPROVE" }, p.deps, BOB);
    expect(approved.ok && approved.body.review).toMatchObject({ status: "APPROVED", reviewer: "bob" });
  });
});
