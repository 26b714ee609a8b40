// The kernel's decision, without ports: the verdict with its events, audit and review from the stored claim,
// the proposal, the order and the ledger at an instant; what a reservation's answer settles; and the effects
// that publish a stored verdict and record the claim.
import { type LedgerEntry, type ReserveResult } from "../../core/kernel/index.ts";
import { describe, expect, it } from "vitest";
import type { OutboundCrewEvent } from "../../core/crew/index.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { crewEffects } from "./crew-completion.ts";
import { ACCEPTABLE, claimRecord, ESCALATED, NOW, order, policy, shape } from "./decide.test-kit.ts";
import {
  afterReservation,
  decideProposal,
  orderDataInvalid,
  orderSourceUnavailable,
  plannedRefund,
  proposedOrderId,
  verdictToStore,
} from "./kernel-decision.ts";
import { decidedUpdate, publishEffects } from "./publication.ts";

const DECIDED_AT = new Date(NOW).toISOString();

/** The proposal the crew completion sends to the kernel for `claim`. */
function proposalFor(record: ClaimRecord): unknown {
  const output = { action: "REFUND", ...record.claim!, confidence: 0.9 };
  const sent = crewEffects(
    [{ type: "crew.completed", crewId: record.claim_id, output } as OutboundCrewEvent],
    record,
    NOW,
    policy,
  ).find((e) => e.kind === "proposal");
  if (sent?.kind !== "proposal") throw new Error("no proposal");
  return sent.message.proposal;
}

function decided(claim: typeof ACCEPTABLE, ledgerEntry?: LedgerEntry) {
  const record = claimRecord(claim);
  const proposal = proposalFor(record);
  const at = { order: order(claim.order_id), ledgerEntry, decidedAt: DECIDED_AT, now: NOW };
  return { record, proposal, decision: decideProposal(record, proposal, at, policy) };
}

describe("decideProposal", () => {
  it("accepts a refund within the policy: the verdict, its audit with the kernel's inputs, no review", () => {
    const { decision } = decided(ACCEPTABLE);
    expect(decision.verdict.verdict).toBe("ACCEPT");
    expect(decision.events.map((e) => e.detailType)).toEqual(["ClaimVerdict"]);
    expect(decision.audit.map((e) => e.event_type)).toEqual(["PROPOSAL_SUBMITTED", "KERNEL_VERDICT"]);
    expect(decision.audit[0]?.details.kernel_inputs).toMatchObject({ order: order("ord_001"), ledgerEntry: null });
    expect(decision.review).toBeUndefined();
    expect(verdictToStore("key", "clm_1", decision)).toMatchObject({ execution: "PENDING", published: false });
  });

  it("escalates above the automatic limit and opens the review with the verdict and the proposal", () => {
    const { decision, proposal } = decided(ESCALATED);
    expect(decision.verdict.verdict).toBe("ESCALATE");
    expect(decision.events.map((e) => e.detailType)).toEqual(["ClaimVerdict", "ReviewRequested"]);
    expect(decision.audit.map((e) => e.event_type)).toEqual([
      "PROPOSAL_SUBMITTED",
      "KERNEL_VERDICT",
      "REVIEW_REQUESTED",
    ]);
    expect(decision.review).toMatchObject({
      origin: "ESCALATE",
      order_id: "ord_002",
      amount_eur: 1200,
      verdict_id: decision.record.verdict_id,
      verdict_decided_at: DECIDED_AT,
      proposal,
    });
    expect(verdictToStore("key", "clm_1", decision)).toMatchObject({
      execution: "NOT_APPLICABLE",
      review: decision.review,
    });
  });

  it("decides the same when repeated at the same instant", () => {
    expect(decided(ACCEPTABLE).decision).toEqual(decided(ACCEPTABLE).decision);
  });

  it("records what a shadow policy decides beside the live one and changes nothing else", () => {
    // A shadow policy that refunds no category: it rejects every claim the live policy accepts or escalates.
    const shadow = { ...policy.agent, contract: { ...policy.agent.contract, allowed_refund_categories: ["none"] } };
    const shadowed = { ...policy, agent: { ...policy.agent, shadow } };
    for (const claim of [ACCEPTABLE, ESCALATED]) {
      const record = claimRecord(claim);
      const proposal = proposalFor(record);
      const at = { order: order(claim.order_id), ledgerEntry: undefined, decidedAt: DECIDED_AT, now: NOW };
      const live = decideProposal(record, proposal, at, policy);
      const beside = decideProposal(record, proposal, at, shadowed);
      expect(beside.verdict).toEqual(live.verdict);
      expect(beside.record).toEqual(live.record);
      expect(beside.events).toEqual(live.events);
      expect(beside.review).toEqual(live.review);
      const verdictAudit = (d: typeof live) => d.audit.find((e) => e.event_type === "KERNEL_VERDICT")!.details;
      expect(verdictAudit(live).shadow).toBeUndefined();
      const { shadow: recorded, ...rest } = verdictAudit(beside);
      expect(rest).toEqual(verdictAudit(live));
      expect(recorded).toMatchObject({ verdict: "REJECT", agrees: false, policy: { contract: shadow.contract } });
      expect(beside.audit.filter((e) => e.event_type !== "KERNEL_VERDICT")).toEqual(
        live.audit.filter((e) => e.event_type !== "KERNEL_VERDICT"),
      );
    }
  });

  it("records a shadow policy that agrees with the live one as agreeing", () => {
    const shadowed = { ...policy, agent: { ...policy.agent, shadow: policy.agent } };
    const record = claimRecord(ACCEPTABLE);
    const at = { order: order("ord_001"), ledgerEntry: undefined, decidedAt: DECIDED_AT, now: NOW };
    const decision = decideProposal(record, proposalFor(record), at, shadowed);
    expect(decision.audit[1]?.details.shadow).toMatchObject({
      verdict: "ACCEPT",
      reason_code: "VALIDATION_PASSED",
      agrees: true,
    });
  });

  it("reads the proposal's order id without trusting its shape", () => {
    expect(proposedOrderId(proposalFor(claimRecord(ACCEPTABLE)))).toBe("ord_001");
    expect([null, {}, { params: { order_id: 7 } }, { params: { order_id: "" } }].map(proposedOrderId)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe("afterReservation", () => {
  const { record, proposal, decision } = decided(ACCEPTABLE);
  const stored = verdictToStore("key", "clm_1", decision);
  const refund = plannedRefund(stored, proposal, "clm_1")!;
  const entry = (claims: Record<string, number>, extra: Partial<LedgerEntry> = {}): LedgerEntry => ({
    order_id: "ord_001",
    refunded_cents: Object.values(claims).reduce((a, b) => a + b, 0),
    claims,
    ...extra,
  });
  const step = (result: ReserveResult) =>
    afterReservation(
      { current: stored, raced: [], record, proposal, refund, order: order("ord_001"), result, now: NOW },
      policy,
    );

  it("plans the proposal's refund", () => {
    expect(refund).toMatchObject({ order_id: "ord_001", amount_cents: 29999, amount_eur: 299.99 });
  });

  it.each([
    ["reserved", { ok: true, entry: entry({ clm_1: 29999 }) } as const],
    [
      "found reserved by this claim for the same amount (a repeat)",
      { ok: false, code: "ALREADY_REFUNDED_FOR_CLAIM", message: "m", entry: entry({ clm_1: 29999 }) } as const,
    ],
  ])("settles EXECUTED with its RefundExecuted when %s", (_name, result) => {
    const settled = step(result);
    expect(settled).toMatchObject({ settled: { execution: "EXECUTED", record: stored.record } });
    if (!("settled" in settled)) throw new Error("not settled");
    expect(settled.settled.events.map((e) => e.detailType)).toEqual(["ClaimVerdict", "RefundExecuted"]);
    expect(settled.settled.audit?.map((e) => e.event_type)).toEqual([
      "PROPOSAL_SUBMITTED",
      "KERNEL_VERDICT",
      "CLAIM_REFUND_EXECUTED",
    ]);
  });

  it("refuses, announcing nothing, a proposal whose claim holds another refund", () => {
    const result = {
      ok: false,
      code: "ALREADY_REFUNDED_FOR_CLAIM",
      message: "m",
      entry: entry({ clm_1: 100 }),
    } as const;
    expect(step(result)).toMatchObject({
      settled: {
        execution: "REFUSED",
        events: [],
        audit: [{ event_type: "CLAIM_REFUND_NOT_EXECUTED", state: "DECIDED" }],
      },
    });
  });

  it("decides again on a lost race: the new decision replaces the ACCEPT, the race noted first", () => {
    const result = {
      ok: false,
      code: "EXCEEDS_ORDER_AMOUNT",
      message: "m",
      entry: entry({ clm_2: 29999 }, { automatic_cents: 29999 }),
    } as const;
    const settled = step(result);
    if (!("settled" in settled)) throw new Error("not settled");
    expect(settled.settled.execution).toBe("NOT_APPLICABLE");
    expect(settled.settled.record?.verdict).not.toBe("ACCEPT");
    expect(settled.settled.record?.decided_at).toBe(DECIDED_AT);
    expect(settled.settled.audit?.map((e) => e.event_type).slice(0, 3)).toEqual([
      "CLAIM_REFUND_NOT_EXECUTED",
      "PROPOSAL_SUBMITTED",
      "KERNEL_VERDICT",
    ]);
    expect(settled.settled.audit?.[1]?.details.lost_races).toBe(1);
  });

  it.each([
    ["EUR", ACCEPTABLE, "Refund of 299.99 EUR not reserved: m; "],
    [
      "JPY",
      { order_id: "ord_041", amount_eur: 500, category: "electronics", reason: "Dead on arrival" },
      "Refund of 500 JPY not reserved: m; ",
    ],
  ] as const)("names a lost race's refund in the order's currency (%s; issue 32)", (_currency, claim, note) => {
    // The shell once wrote a JPY order's lost reservation as EUR cents; replay (core/history/replay/kernel.ts) reads
    // the same text back. The chaos flow that found it (seed 61871 flow 41247) no longer takes the path.
    const mine = decided(claim);
    const current = verdictToStore("key", "clm_1", mine.decision);
    const planned = plannedRefund(current, mine.proposal, "clm_1")!;
    const cents = planned.amount_cents;
    const result = {
      ok: false,
      code: "EXCEEDS_ORDER_AMOUNT",
      message: "m",
      entry: { order_id: claim.order_id, refunded_cents: cents, claims: { clm_2: cents }, automatic_cents: cents },
    } as const;
    const raced = afterReservation(
      {
        current,
        raced: [],
        record: mine.record,
        proposal: mine.proposal,
        refund: planned,
        order: order(claim.order_id),
        result,
        now: NOW,
      },
      policy,
    );
    const audit = "settled" in raced ? raced.settled.audit : raced.raced;
    const lost = audit?.find((e) => e.event_type === "CLAIM_REFUND_NOT_EXECUTED");
    expect(String(lost?.details.reason).startsWith(note)).toBe(true);
  });

  it("tries again when the new decision is still an ACCEPT, counting the races", () => {
    const result = { ok: false, code: "EXCEEDS_AUTOMATIC_LIMIT", message: "m", entry: entry({}) } as const;
    const again = step(result);
    if (!("again" in again)) throw new Error("settled");
    expect(again.raced.map((e) => e.event_type)).toEqual(["CLAIM_REFUND_NOT_EXECUTED"]);
    expect(again.again).toMatchObject({ execution: "PENDING", record: { verdict: "ACCEPT", decided_at: DECIDED_AT } });
    expect(again.again.audit?.[0]?.details.lost_races).toBe(1);
  });
});

describe("publishing and recording a verdict", () => {
  it("appends the audit, opens the review, then publishes", () => {
    const stored = verdictToStore("key", "clm_1", decided(ESCALATED).decision);
    expect(shape(publishEffects(stored))).toEqual([
      "audit PROPOSAL_SUBMITTED",
      "audit KERNEL_VERDICT",
      "audit REVIEW_REQUESTED",
      "review_open",
      "publish ClaimVerdict,ReviewRequested",
    ]);
    expect(shape(publishEffects({ ...stored, review: undefined, events: [] }))).toEqual([
      "audit PROPOSAL_SUBMITTED",
      "audit KERNEL_VERDICT",
      "audit REVIEW_REQUESTED",
    ]);
  });

  it.each([
    ["EXECUTED", true],
    ["NOT_APPLICABLE", false],
  ] as const)("records the claim DECIDED from an open status, executed when %s", (execution, executed) => {
    const { decision, proposal } = decided(ACCEPTABLE);
    const stored = { ...verdictToStore("key", "clm_1", decision), execution };
    expect(decidedUpdate(stored, NOW, proposal)).toEqual({
      kind: "claim_update",
      claimId: "clm_1",
      patch: {
        status: "DECIDED",
        verdict: "ACCEPT",
        verdict_id: stored.record.verdict_id,
        reason_code: stored.record.reason_code,
        reason: stored.record.reason,
        executed,
        // The verdict's amount in its currency, as its ClaimVerdict event carries it.
        amount: { value: "299.99", currency: "EUR" },
        // The Decision Maker's output the proposal was built from, as the claim view shows it.
        proposal: { action: "REFUND", ...ACCEPTABLE, confidence: 0.9 },
        updated_at: DECIDED_AT,
      },
      onlyFrom: ["RECEIVED", "RUNNING"],
    });
  });

  it("records no proposal for a claim decided without one (triage) or with one not built from an output", () => {
    const stored = verdictToStore("key", "clm_1", decided(ACCEPTABLE).decision);
    for (const proposal of [undefined, { params: { order_id: "ord_001" } }, "garbage", null]) {
      expect(decidedUpdate(stored, NOW, proposal).patch).not.toHaveProperty("proposal");
    }
  });

  it.each([
    ["corrupt order data", (p: unknown) => orderDataInvalid(claimRecord(ACCEPTABLE), "bad amount", NOW, p)],
    [
      "an order source that stayed down",
      (p: unknown) => orderSourceUnavailable(claimRecord(ACCEPTABLE), "down", 600_000, NOW, p),
    ],
  ])("keeps the proposal with the claim's NEEDS_REVIEW update on %s", (_name, effectsFor) => {
    const { proposal } = decided(ACCEPTABLE);
    const update = effectsFor(proposal).at(-1);
    expect(update).toMatchObject({
      kind: "claim_update",
      patch: { status: "NEEDS_REVIEW", proposal: { action: "REFUND", ...ACCEPTABLE, confidence: 0.9 } },
    });
  });
});
