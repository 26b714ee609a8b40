// The flow invariants: what a clean flow leaves passes, and each kind of damage to it is named — a claim left
// open, a review left half decided, a stale review mark on the ledger, a verdict the claim does not record, a
// ClaimVerdict for a claim in review, a reservation nobody announced, an audit event lost.
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { chaosEnv, runChaosFlow } from "./flow.ts";
import { checkFlowInvariants } from "./invariants.ts";
import type { FlowObservation } from "./invariants.ts";

const env = chaosEnv(readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"), "config.yaml");
let clean: FlowObservation;

/** A flow with a refunded ACCEPT and a claim in review (the first such flow of seed 3 from 125 on; it moves when the plans change). */
beforeAll(async () => {
  for (let k = 125; k < 400; k++) {
    const r = await runChaosFlow(env, 3, k, { keep: true });
    const o = r.observation!;
    // A refund that stands: executed, and not failed at the provider (that releases its reservation).
    const accepted =
      o.claims.some((c) => c.verdict === "ACCEPT" && c.executed) &&
      !o.events.some((e) => e.detailType === "RefundFailed");
    const inReview =
      o.claims.some((c) => c.status === "NEEDS_REVIEW") && o.reviews.some((x) => x.status === "PENDING" && x.order_id);
    if (r.violations.length === 0 && accepted && inReview) {
      clean = o;
      return;
    }
  }
  throw new Error("no flow of seed 3 from 125 on has a refunded ACCEPT and a claim in review");
}, 300_000); // a search over up to 275 flows: CPU-bound, given room on a loaded machine

const copy = (): FlowObservation => structuredClone(clean);
const violations = (o: FlowObservation) => checkFlowInvariants(o).violations.join("\n");

describe("checkFlowInvariants", () => {
  it("passes a flow that kept every invariant, replaying every final claim", () => {
    const result = checkFlowInvariants(clean);
    expect(result.violations).toEqual([]);
    expect(result.replayed).toBe(clean.claims.length);
  });

  it("names a claim left open", () => {
    const o = copy();
    o.claims[0]!.status = "RUNNING";
    expect(violations(o)).toMatch(new RegExp(`claim ${o.claims[0]!.claim_id} is stuck in RUNNING`));
  });

  it("names a claim the sweep had to end STALLED", () => {
    const o = copy();
    Object.assign(o.claims[0]!, {
      status: "NEEDS_REVIEW",
      reason_code: "STALLED",
      reason: "no progress through 3 sweeps",
    });
    expect(violations(o)).toMatch(new RegExp(`claim ${o.claims[0]!.claim_id} is stuck: the sweep ended it STALLED`));
  });

  it("names a review whose decision was claimed and never carried out", () => {
    const o = copy();
    o.reviews[0]!.intent = { decision: "DENY" };
    expect(violations(o)).toMatch(/is stuck with an unfinished DENY/);
  });

  it("names a review mark left on the ledger after its review was decided", () => {
    const o = copy();
    const pending = o.reviews.find((r) => r.status === "PENDING" && r.order_id)!;
    pending.status = "DENIED";
    pending.decision = "DENY";
    expect(violations(o)).toMatch(
      new RegExp(`still marks claim ${pending.claim_id} as awaiting review, but its review is DENIED`),
    );
  });

  it("names a pending review the ledger does not mark", () => {
    const o = copy();
    for (const l of o.ledgers) l.entry.pending_reviews = [];
    expect(violations(o)).toMatch(/review is PENDING but the ledger of \S+ does not mark it/);
  });

  it("names a decided claim whose verdict is not the one published, and a ClaimVerdict for a claim in review", () => {
    const o = copy();
    const decided = o.claims.find((c) => c.status === "DECIDED")!;
    decided.verdict_id = "ver_other";
    const inReview = o.claims.find((c) => c.status === "NEEDS_REVIEW")!;
    o.events = [
      ...o.events,
      { detailType: "ClaimVerdict", detail: { verdict_id: "ver_x", claim_id: inReview.claim_id, verdict: "REJECT" } },
    ];
    const found = violations(o);
    expect(found).toMatch(new RegExp(`claim ${decided.claim_id} \\(DECIDED \\w+ ver_other\\) has ClaimVerdict ids`));
    expect(found).toMatch(
      new RegExp(`claim ${inReview.claim_id} is NEEDS_REVIEW but the bus carries ClaimVerdict ver_x`),
    );
  });

  it("names a stored verdict never published: neither marked on its item nor the one its final claim records", () => {
    const o = copy();
    const decided = o.claims.find((c) => c.status === "DECIDED")!;
    const mine = o.verdicts.find((v) => v.claim_id === decided.claim_id)!;
    expect(violations(o)).not.toMatch(/was never published/); // the claim DECIDED with it proves it
    o.verdicts = o.verdicts.map((v) => (v === mine ? { ...v, published: false } : v));
    decided.verdict_id = "ver_other";
    expect(violations(o)).toMatch(
      new RegExp(`claim ${decided.claim_id}: stored verdict ${mine.record.verdict_id} was never published`),
    );
    o.verdicts = o.verdicts.map((v) => (v.claim_id === decided.claim_id ? { ...v, published: true } : v));
    expect(violations(o)).not.toMatch(/was never published/);
  });

  it("names a reservation no RefundExecuted announces", () => {
    const o = copy();
    o.events = o.events.filter((e) => e.detailType !== "RefundExecuted");
    expect(violations(o)).toMatch(/holds \d+ cents on \S+ but no RefundExecuted announces it/);
  });

  it("names a refund its return released that the ledger still holds (a crash cut the release off: the sweep repairs it)", () => {
    const o = copy();
    const c = o.claims.find((x) => x.verdict === "ACCEPT" && x.executed)!;
    // The claim as the deadline closes it, its reservation left on the ledger.
    Object.assign(c, {
      status: "DECIDED",
      executed: false,
      reason_code: "RETURN_NOT_RECEIVED",
      return: {
        claim_id: c.claim_id,
        order_id: "ord_x",
        execution_id: "exe_x",
        return_by: "2026-06-01T00:00:00.000Z",
        pay_on: "delivered",
        outcome: "NOT_RECEIVED",
      },
    });
    expect(violations(o)).toMatch(
      new RegExp(`claim ${c.claim_id} says executed=false but the ledger holds its refund`),
    );
  });

  it("names a final claim whose audit lost an event: replay is not IDENTICAL", () => {
    const o = copy();
    const accepted = o.claims.find((c) => c.verdict === "ACCEPT")!;
    o.audit = o.audit.filter((e) => !(e.details.claim_id === accepted.claim_id && e.event_type === "KERNEL_VERDICT"));
    expect(violations(o)).toMatch(new RegExp(`claims replay ${accepted.claim_id} is INCOMPLETE`));
  });
});
