// The return's progress through the real pipeline (in memory, docs/returns.md): a return-required ACCEPT reserves its
// refund and waits AWAITING_RETURN; the policy's pay_on event executes the refund once, whatever came before, twice or
// out of order; a failed inspection goes to a person; no event by the deadline releases the refund and a late event
// then goes to a person; a low-value refund and a policy without returns pay at once, as before.
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { ClaimsContract } from "../core/integrity/index.ts";
import { returnDfid } from "../core/kernel/claim-record.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";
import { postReturnEvent, sweepReturns } from "./returns.ts";
import { decideReview } from "./review.ts";
import { sweepStalledClaims } from "./timers.ts";
import { replayClaim } from "../core/history/replay/index.ts";
import { checkMoneyInvariants } from "./testing/money-invariants.ts";
import { recordedReturnEvents } from "./decide/returns.ts";

const START = Date.parse("2026-06-01T12:00:00Z");
const DAY = 86_400_000;
const config = bundledConfig(START);

function pipeline(returns: ClaimsContract["returns"]) {
  let now = START;
  const contract = { ...config.agent.contract, ...(returns ? { returns } : {}) };
  const agent = { ...config.agent, contract };
  const p = createInProcessPipeline({
    agent,
    orders: config.orders,
    llm: createRulesModel({ contract, responsibility: config.agent.responsibility }),
    clock: { now: () => now },
  });
  const refunds = () => p.publisher.published.filter((e) => e.detailType === "RefundExecuted");
  const post = (event: string, event_id: string, at = new Date(now).toISOString()) =>
    postReturnEvent("clm_r", { event_id, event, at }, p.deps);
  const invariants = async () => {
    const ledger = await p.deps.ledger.get("ord_001");
    const recorded = recordedReturnEvents(await p.deps.audit.byDfid(returnDfid("clm_r")));
    return checkMoneyInvariants(p.publisher.published as never, {
      orderAmountEur: (id) => config.orders.find((o) => o.order_id === id)?.amount as number | undefined,
      limitEur: contract.max_refund_without_escalation,
      ...(ledger ? { ledgers: [{ orderId: "ord_001", claims: ledger.claims }] } : {}),
      returnEvents: (claimId) => (claimId === "clm_r" ? recorded : undefined),
    }).violations;
  };
  return { p, refunds, post, invariants, later: (ms: number) => (now += ms), now: () => now };
}

// ord_001: electronics, 299.99, bought 3 days before START.
const CLAIM = { claim: { order_id: "ord_001", amount_eur: 299.99, category: "electronics", reason: "Arrived broken" } };

/** The process dies once as it opens a review (the claim has moved already); the next opening works. The review store. */
function crashOnceOpeningReview(t: ReturnType<typeof pipeline>) {
  const reviews = t.p.deps.reviews;
  const openReview = reviews.openReview.bind(reviews);
  reviews.openReview = async () => {
    reviews.openReview = openReview;
    throw new Error("crashed");
  };
  return reviews;
}

describe("a return-required ACCEPT", () => {
  it("reserves the refund, announces ReturnRequested and waits AWAITING_RETURN, paying nothing yet", async () => {
    const t = pipeline({ return_required: true, pay_on: "delivered", return_deadline_days: 10 });
    const { record } = await t.p.decide(CLAIM, { claimId: "clm_r" });
    expect(record).toMatchObject({ status: "AWAITING_RETURN", verdict: "ACCEPT", executed: false });
    expect(record?.return).toMatchObject({ order_id: "ord_001", pay_on: "delivered", amount_eur: 299.99 });
    expect(record?.return?.lines).toEqual([{ line_id: "1", quantity: 1 }]);
    expect(Date.parse(record!.return!.return_by) - Date.parse(record!.received_at)).toBeGreaterThanOrEqual(10 * DAY);
    expect(t.p.publisher.published.map((e) => e.detailType)).toContain("ReturnRequested");
    expect(t.refunds()).toHaveLength(0);
    expect((await t.p.deps.ledger.get("ord_001"))?.claims).toEqual({ clm_r: 29_999 });
    expect(await t.invariants()).toEqual([]);
  });

  it("pays exactly once on pay_on, after an earlier event, a duplicate and an out-of-order one", async () => {
    const t = pipeline({ return_required: true, pay_on: "delivered" });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    expect(await t.post("in_transit", "ev1")).toMatchObject({ ok: true, status: "AWAITING_RETURN" });
    expect(t.refunds()).toHaveLength(0);
    expect(await t.post("delivered", "ev2")).toMatchObject({ ok: true, status: "DECIDED", decision: "PAY" });
    // The same delivery again, and an inspection after it: nothing more is paid.
    expect(await t.post("delivered", "ev2")).toMatchObject({ ok: true, decision: "RECORDED" });
    expect(await t.post("inspected_ok", "ev3")).toMatchObject({ ok: false, code: "NOT_AWAITING_RETURN" });
    expect(t.refunds()).toHaveLength(1);
    const record = await t.p.claims.getClaim("clm_r");
    expect(record).toMatchObject({ status: "DECIDED", executed: true, return: { outcome: "PAID", decided_by: "ev2" } });
    expect(t.refunds()[0]?.detail).toMatchObject({ execution_id: record?.return?.execution_id, amount_eur: 299.99 });
    expect(await t.invariants()).toEqual([]);
  });

  it("records the return events under the return's own flow, each once", async () => {
    const t = pipeline({ return_required: true, pay_on: "inspected" });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    await t.post("delivered", "ev2");
    await t.post("delivered", "ev2");
    await t.post("inspected_ok", "ev3");
    const flow = (await t.p.deps.audit.byDfid(returnDfid("clm_r"))).map((e) => e.event_type);
    expect(flow).toEqual(["RETURN_REQUESTED", "RETURN_EVENT_RECORDED", "RETURN_EVENT_RECORDED", "RETURN_COMPLETED"]);
    expect(t.refunds()).toHaveLength(1);
  });

  it("replays IDENTICAL with its return events recorded, from the audit alone", async () => {
    const t = pipeline({ return_required: true, pay_on: "delivered" });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    await t.post("in_transit", "ev1");
    await t.post("delivered", "ev2");
    const replay = replayClaim("clm_r", t.p.auditEvents());
    expect(replay.status).toBe("IDENTICAL");
    expect(replay.steps.find((s) => s.step === "return")).toMatchObject({ status: "IDENTICAL" });
    // A recorded outcome the recorded events do not give is found.
    const forged = t.p
      .auditEvents()
      .map((e) => (e.event_type === "RETURN_COMPLETED" ? { ...e, details: { ...e.details, decided_by: "ev1" } } : e));
    expect(replayClaim("clm_r", forged).steps.find((s) => s.step === "return")).toMatchObject({ status: "DIFFERENT" });
  });

  it("replays a return closed by its deadline and the late event's review IDENTICAL", async () => {
    const t = pipeline({ return_required: true, return_deadline_days: 10 });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    t.later(11 * DAY);
    await sweepReturns(t.p.deps, { pageSize: 10, before: new Date(t.now()).toISOString() });
    await t.post("delivered", "late1");
    const replay = replayClaim("clm_r", t.p.auditEvents());
    expect(replay.steps.find((s) => s.step === "return")).toMatchObject({ status: "IDENTICAL" });
  });

  it("pays once when two deliveries race", async () => {
    const t = pipeline({ return_required: true, pay_on: "in_transit" });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    const answers = await Promise.all([
      t.post("in_transit", "scan1"),
      t.post("delivered", "del1"),
      t.post("in_transit", "scan1"),
    ]);
    expect(answers.every((a) => a.ok)).toBe(true);
    const ids = new Set(t.refunds().map((e) => (e.detail as { execution_id: string }).execution_id));
    expect(ids.size).toBe(1);
    expect((await t.p.claims.getClaim("clm_r"))?.status).toBe("DECIDED");
    expect(await t.invariants()).toEqual([]);
  });

  it("refuses bad input naming the field, an unknown claim, and an event id reused for another event", async () => {
    const t = pipeline({ return_required: true });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    const bad = await postReturnEvent("clm_r", { event_id: "e", event: "lost", at: "2026-06-02T00:00:00Z" }, t.p.deps);
    expect(bad).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "event" }] });
    const noAt = await postReturnEvent("clm_r", { event_id: "e", event: "delivered" }, t.p.deps);
    expect(noAt).toMatchObject({ ok: false, code: "INVALID_INPUT", issues: [{ path: "at" }] });
    expect(
      await postReturnEvent("clm_none", { event_id: "e", event: "delivered", at: "2026-06-02T00:00:00Z" }, t.p.deps),
    ).toMatchObject({ ok: false, code: "NOT_FOUND" });
    await t.post("in_transit", "ev1");
    expect(await t.post("delivered", "ev1")).toMatchObject({ ok: false, code: "EVENT_ID_REUSED" });
  });

  it("sends a failed inspection to a person, keeping the refund reserved until their DENY releases it", async () => {
    const t = pipeline({ return_required: true, pay_on: "inspected" });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    expect(await t.post("inspected_failed", "ev9")).toMatchObject({
      ok: true,
      status: "NEEDS_REVIEW",
      decision: "REVIEW",
    });
    expect(await t.p.claims.getClaim("clm_r")).toMatchObject({
      status: "NEEDS_REVIEW",
      reason_code: "RETURN_INSPECTION_FAILED",
    });
    expect(t.refunds()).toHaveLength(0);
    const review = await t.p.deps.reviews.getReview("clm_r");
    expect(review).toMatchObject({ status: "PENDING", reason_code: "RETURN_INSPECTION_FAILED" });
    const denied = await decideReview("clm_r", { decision: "DENY", note: "item damaged by the customer" }, t.p.deps, {
      id: "rev_a",
    });
    expect(denied).toMatchObject({ ok: true });
    expect((await t.p.deps.ledger.get("ord_001"))?.claims).toEqual({});
    expect(t.refunds()).toHaveLength(0);
  });

  it("lets a person refund part after a failed inspection: RESUBMIT releases the reservation, another approves the corrected claim", async () => {
    const t = pipeline({ return_required: true, pay_on: "inspected" });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    await t.post("inspected_failed", "ev9");
    const corrected = { ...CLAIM.claim, amount_eur: 100, reason: "Item came back scratched: part refund" };
    const resubmitted = await decideReview("clm_r", { decision: "RESUBMIT", claim: corrected }, t.p.deps, {
      id: "alice",
    });
    if (!resubmitted.ok) throw new Error(resubmitted.message);
    await t.p.drain();
    expect((await t.p.deps.ledger.get("ord_001"))?.claims).toEqual({});
    const child = resubmitted.body.resubmitted_claim_id!;
    expect(await t.p.deps.reviews.getReview(child)).toMatchObject({ origin: "ESCALATE", status: "PENDING" });
    const approved = await decideReview(child, { decision: "APPROVE" }, t.p.deps, { id: "bob" });
    expect(approved.ok).toBe(true);
    expect((await t.p.deps.ledger.get("ord_001"))?.claims).toEqual({ [child]: 10_000 });
    expect(t.refunds().map((e) => e.detail.amount_eur)).toEqual([100]);
  });

  it("releases the refund and ends RETURN_NOT_RECEIVED when nothing came by the deadline; a late event goes to a person", async () => {
    const t = pipeline({ return_required: true, return_deadline_days: 10 });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    const before = () => new Date(t.now()).toISOString();
    expect(await sweepReturns(t.p.deps, { pageSize: 10, before: before() })).toMatchObject({
      examined: 0,
      notReceived: [],
    });
    t.later(11 * DAY);
    expect(await sweepReturns(t.p.deps, { pageSize: 10, before: before() })).toMatchObject({ notReceived: ["clm_r"] });
    const closed = await t.p.claims.getClaim("clm_r");
    expect(closed).toMatchObject({ status: "DECIDED", executed: false, reason_code: "RETURN_NOT_RECEIVED" });
    expect((await t.p.deps.ledger.get("ord_001"))?.claims).toEqual({});
    // A second pass finds nothing to do.
    expect(await sweepReturns(t.p.deps, { pageSize: 10, before: before() })).toMatchObject({ examined: 0 });
    expect(await t.post("delivered", "late1")).toMatchObject({ ok: true, status: "NEEDS_REVIEW", decision: "REVIEW" });
    expect(await t.p.claims.getClaim("clm_r")).toMatchObject({ reason_code: "RETURN_AFTER_DEADLINE" });
    expect(t.refunds()).toHaveLength(0);
    expect(await t.invariants()).toEqual([]);
  });

  it("sends a return shipped after the deadline to a person, releasing its refund, even before the sweep closed it", async () => {
    const t = pipeline({ return_required: true, pay_on: "in_transit", return_deadline_days: 10 });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    t.later(10 * DAY + 60_000);
    // The carrier's first scan, a minute after the deadline, posted before any sweep ran (chaos seed 7731, flow 1522).
    expect(await t.post("in_transit", "late1")).toMatchObject({ ok: true, status: "NEEDS_REVIEW", decision: "REVIEW" });
    expect(await t.p.claims.getClaim("clm_r")).toMatchObject({ reason_code: "RETURN_AFTER_DEADLINE", executed: false });
    expect(t.refunds()).toHaveLength(0);
    expect((await t.p.deps.ledger.get("ord_001"))?.claims).toEqual({});
    expect(await t.invariants()).toEqual([]);
    expect(replayClaim("clm_r", t.p.auditEvents()).steps.filter((s) => s.status !== "IDENTICAL")).toEqual([]);
  });

  it("is ended by the five-minute sweep once its deadline passed, reading only claims old enough to be due", async () => {
    const t = pipeline({
      return_required: true,
      return_deadline_days: 10,
      categories: { toys: { return_deadline_days: 5 } },
    });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    const sweep = () => sweepStalledClaims(t.p.deps, { stalledAfterMs: 300_000, pageSize: 10, maxTicks: 3 });
    t.later(6 * DAY);
    expect((await sweep()).returns).toEqual({ examined: 0, notReceived: [], paid: [], reviewed: [] });
    t.later(5 * DAY);
    expect((await sweep()).returns).toMatchObject({ examined: 1, notReceived: ["clm_r"] });
    expect(await t.p.claims.getClaim("clm_r")).toMatchObject({ reason_code: "RETURN_NOT_RECEIVED" });
  });

  it("does not end a claim whose item was shipped before the deadline", async () => {
    const t = pipeline({ return_required: true, return_deadline_days: 10, pay_on: "inspected" });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    await t.post("in_transit", "ev1");
    t.later(11 * DAY);
    expect(await sweepReturns(t.p.deps, { pageSize: 10, before: new Date(t.now()).toISOString() })).toMatchObject({
      notReceived: [],
    });
    expect((await t.p.claims.getClaim("clm_r"))?.status).toBe("AWAITING_RETURN");
  });
});

describe("an ACCEPT that asks no return", () => {
  it.each([
    ["no returns policy", undefined],
    ["return_required false", { return_required: false }],
    ["below keep_item_below", { return_required: true, keep_item_below: { EUR: 300 } }],
  ])("pays at once (%s)", async (_name, returns) => {
    const t = pipeline(returns);
    const { record } = await t.p.decide(CLAIM, { claimId: "clm_r" });
    expect(record).toMatchObject({ status: "DECIDED", verdict: "ACCEPT", executed: true });
    expect(record?.return).toBeUndefined();
    expect(t.refunds()).toHaveLength(1);
    expect(await t.post("delivered", "ev1")).toMatchObject({ ok: false, code: "NOT_AWAITING_RETURN" });
  });
});

describe("replay of a return that went to a person", () => {
  it("replays the claim IDENTICAL after a failed inspection and the person's DENY, both audited in the return's flow", async () => {
    const t = pipeline({ return_required: true, pay_on: "inspected" });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    await t.post("inspected_failed", "ev9");
    expect(replayClaim("clm_r", t.p.auditEvents()).steps.filter((s) => s.status !== "IDENTICAL")).toEqual([]);
    await decideReview("clm_r", { decision: "DENY", note: "damaged by use" }, t.p.deps, { id: "rev_a" });
    const replay = replayClaim("clm_r", t.p.auditEvents());
    expect(replay.steps.filter((s) => s.status !== "IDENTICAL")).toEqual([]);
    expect(replay.status).toBe("IDENTICAL");
    const flow = (await t.p.deps.audit.byDfid(returnDfid("clm_r"))).map((e) => e.event_type);
    expect(flow).toEqual(expect.arrayContaining(["CLAIM_NEEDS_REVIEW", "REVIEW_REQUESTED", "REVIEW_DECIDED"]));
  });

  it("opens the review of a failed inspection on the next event when a crash cut it off after the claim moved", async () => {
    const t = pipeline({ return_required: true, pay_on: "inspected" });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    // The process dies as it opens the review: the claim has moved to NEEDS_REVIEW already (chaos seed 7731, flow 466).
    const reviews = crashOnceOpeningReview(t);
    const at = new Date(t.now()).toISOString();
    await expect(t.post("inspected_failed", "ev9", at)).rejects.toThrow("crashed");
    expect(await t.p.claims.getClaim("clm_r")).toMatchObject({ status: "NEEDS_REVIEW" });
    expect(await reviews.getReview("clm_r")).toBeUndefined();
    t.later(60_000);
    // The warehouse posts the event again: the claim awaits nothing any more, and its review opens.
    expect(await t.post("inspected_failed", "ev9", at)).toMatchObject({ ok: true, decision: "RECORDED" });
    expect(await reviews.getReview("clm_r")).toMatchObject({
      status: "PENDING",
      reason_code: "RETURN_INSPECTION_FAILED",
    });
    expect((await t.p.deps.ledger.get("ord_001"))?.claims).toEqual({ clm_r: 29_999 });
    expect(t.refunds()).toHaveLength(0);
    expect(await t.invariants()).toEqual([]);
    expect(replayClaim("clm_r", t.p.auditEvents()).steps.filter((s) => s.status !== "IDENTICAL")).toEqual([]);
  });
});

describe("the sweep completes a return a crash cut off after the claim moved (no further event posted)", () => {
  const sweep = (t: ReturnType<typeof pipeline>) =>
    sweepStalledClaims(t.p.deps, { stalledAfterMs: 300_000, pageSize: 10, maxTicks: 3 });
  /** The process dies the next time the ledger releases a refund. */
  const crashOnRelease = (t: ReturnType<typeof pipeline>) => {
    const ledger = t.p.deps.ledger;
    const release = ledger.releaseRefund.bind(ledger);
    ledger.releaseRefund = async () => {
      ledger.releaseRefund = release;
      throw new Error("crashed");
    };
  };

  it("releases the refund of a claim closed RETURN_NOT_RECEIVED whose release a crash cut off", async () => {
    const t = pipeline({ return_required: true, return_deadline_days: 10 });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    t.later(11 * DAY);
    // The sweep closes the claim and dies before the release (chaos seed 7731, flows 1385 and 1756; seed 5, flow 233).
    crashOnRelease(t);
    await expect(sweep(t)).rejects.toThrow("crashed");
    expect(await t.p.claims.getClaim("clm_r")).toMatchObject({ status: "DECIDED", reason_code: "RETURN_NOT_RECEIVED" });
    expect((await t.p.deps.ledger.get("ord_001"))?.claims).toEqual({ clm_r: 29_999 });
    t.later(300_000);
    expect((await sweep(t)).returnsRepaired).toEqual(["clm_r"]);
    expect((await t.p.deps.ledger.get("ord_001"))?.claims).toEqual({});
    // Done once: the next sweep finds nothing to repair.
    expect((await sweep(t)).returnsRepaired).toBeUndefined();
    expect(t.refunds()).toHaveLength(0);
    expect(await t.invariants()).toEqual([]);
    expect(replayClaim("clm_r", t.p.auditEvents()).steps.filter((s) => s.status !== "IDENTICAL")).toEqual([]);
  });

  it("releases the refund of a return shipped late, sent to a person, whose release a crash cut off", async () => {
    const t = pipeline({ return_required: true, pay_on: "in_transit", return_deadline_days: 10 });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    t.later(10 * DAY + 60_000);
    crashOnRelease(t);
    await expect(t.post("in_transit", "late1")).rejects.toThrow("crashed");
    expect(await t.p.claims.getClaim("clm_r")).toMatchObject({ reason_code: "RETURN_AFTER_DEADLINE" });
    expect(await t.p.deps.reviews.getReview("clm_r")).toMatchObject({ status: "PENDING" });
    expect((await t.p.deps.ledger.get("ord_001"))?.claims).toEqual({ clm_r: 29_999 });
    // A sweep within five minutes of the move leaves it to the invocation that made it (never racing a live one).
    expect((await sweep(t)).returnsRepaired).toBeUndefined();
    t.later(300_000);
    expect((await sweep(t)).returnsRepaired).toEqual(["clm_r"]);
    expect((await t.p.deps.ledger.get("ord_001"))?.claims).toEqual({});
    expect((await sweep(t)).returnsRepaired).toBeUndefined();
    expect(await t.invariants()).toEqual([]);
  });

  it("opens the review of a failed inspection a crash cut off, though the warehouse posts nothing more", async () => {
    const t = pipeline({ return_required: true, pay_on: "inspected" });
    await t.p.decide(CLAIM, { claimId: "clm_r" });
    const reviews = crashOnceOpeningReview(t);
    await expect(t.post("inspected_failed", "ev9")).rejects.toThrow("crashed");
    expect(await t.p.claims.getClaim("clm_r")).toMatchObject({ status: "NEEDS_REVIEW" });
    expect(await reviews.getReview("clm_r")).toBeUndefined();
    t.later(300_000);
    expect((await sweep(t)).returnsRepaired).toEqual(["clm_r"]);
    expect(await reviews.getReview("clm_r")).toMatchObject({
      status: "PENDING",
      reason_code: "RETURN_INSPECTION_FAILED",
    });
    // A failed inspection keeps its refund reserved while the person decides; the repair is done once.
    expect((await t.p.deps.ledger.get("ord_001"))?.claims).toEqual({ clm_r: 29_999 });
    expect((await sweep(t)).returnsRepaired).toBeUndefined();
    // The completion the crash did record, and the repair's: the same outcome (as the next post's repair records it).
    const completed = t.p
      .auditEvents()
      .filter((e) => e.event_type === "RETURN_COMPLETED" && e.details.claim_id === "clm_r")
      .map((e) => [e.details.outcome, e.details.reason_code]);
    expect(completed).toEqual([
      ["REVIEW", "RETURN_INSPECTION_FAILED"],
      ["REVIEW", "RETURN_INSPECTION_FAILED"],
    ]);
    expect(await t.invariants()).toEqual([]);
    expect(replayClaim("clm_r", t.p.auditEvents()).steps.filter((s) => s.status !== "IDENTICAL")).toEqual([]);
  });
});
