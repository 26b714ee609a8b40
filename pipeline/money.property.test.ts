// Money you can trust, as a property (docs/kernel.md, docs/reviews.md, docs/guarantees.md): over random interleavings of claims
// on shared orders, the queued work of the pipeline delivered in random order and in concurrent bursts, and
// reviewers approving (some for less) or denying pending reviews at the same time — on the in-memory adapters,
// through the real services — automatic refunds per order never pass the limit in total, nothing refunds above
// the order or twice, every ACCEPT has its RefundExecuted and every RefundExecuted its ACCEPT or approval.
import { assertLedgerEntry } from "../core/kernel/index.ts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { createInProcessPipeline, handleWork } from "./in-process.ts";
import { checkMoneyInvariants } from "./testing/money-invariants.ts";
import { VersionConflictError } from "../core/errors.ts";
import { decideReview } from "./review.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";
import { orderTotalMajor } from "../core/kernel/order-view.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);
const LIMIT_EUR = config.agent.contract.max_refund_without_escalation;
/** Orders the claims compete for: 1200 EUR (above the limit), 100 EUR and 80 EUR. */
const ORDERS = ["ord_016", "ord_012", "ord_007"] as const;
const amountOf = (id: string) => orderTotalMajor(config.orders.find((o) => o.order_id === id));

type Op =
  | { kind: "claim"; order: number; cents: number }
  | { kind: "deliver"; picks: number[] }
  | { kind: "review"; pick: number; approve: boolean; fraction: number; twice: boolean };

const op: fc.Arbitrary<Op> = fc.oneof(
  // Mostly small claims on the 1200 EUR order, so automatic refunds race each other to the 500 EUR limit.
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("claim" as const),
      order: fc.constantFrom(0, 0, 0, 1, 2),
      cents: fc.oneof(fc.integer({ min: 100, max: 25_000 }), fc.integer({ min: 100, max: 70_000 })),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("deliver" as const),
      picks: fc.array(fc.nat(), { minLength: 1, maxLength: 12 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("review" as const),
      pick: fc.nat(),
      approve: fc.boolean(),
      fraction: fc.double({ min: 0.1, max: 1, noNaN: true }),
      twice: fc.boolean(),
    }),
  },
);

async function run(ops: readonly Op[], after: readonly Extract<Op, { kind: "review" }>[]) {
  const p = createInProcessPipeline({
    agent: config.agent,
    orders: config.orders,
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock: { now: () => NOW },
  });
  let n = 0;
  /** Delivers queued work concurrently; a message that lost an optimistic race goes back on the queue, as SQS redelivers it. */
  const deliver = async (picks: readonly number[]) => {
    const taken = picks.map((i) => p.queues.takeAt(i)).filter((w) => w !== undefined);
    await Promise.all(
      taken.map(async (work) => {
        try {
          await handleWork(work, p.deps);
        } catch (error) {
          if (!(error instanceof VersionConflictError)) throw error;
          if (work.queue === "crew-events") await p.queues.sendCrewEvents(work.claimId, [work.message]);
        }
      }),
    );
  };
  const review = async (o: Extract<Op, { kind: "review" }>) => {
    const pending = (await p.deps.reviews.listReviews({ status: "PENDING", limit: 500 })).items;
    const r = pending[o.pick % Math.max(pending.length, 1)];
    if (!r) return;
    const body = o.approve
      ? {
          decision: "APPROVE",
          amount_eur: Math.max(0.01, Math.floor((r.amount_eur ?? 0) * o.fraction * 100) / 100),
          reviewer: "r1",
          note: "part",
        }
      : { decision: "DENY", note: "no", reviewer: "r2" };
    const other = o.approve ? { decision: "DENY", note: "race", reviewer: "r3" } : body;
    await Promise.all([
      decideReview(r.claim_id, body, p.deps),
      ...(o.twice ? [decideReview(r.claim_id, other, p.deps)] : []),
    ]);
  };
  // Operations run in bursts of up to three at once, so claims, deliveries and reviews interleave.
  for (let i = 0; i < ops.length; i += 3) {
    await Promise.all(
      ops.slice(i, i + 3).map(async (o) => {
        if (o.kind === "claim") {
          await p.submit(
            {
              claim: {
                order_id: ORDERS[o.order],
                amount_eur: o.cents / 100,
                category: "electronics",
                reason: "broken",
              },
            },
            { claimId: `clm_${n++}` },
          );
        } else if (o.kind === "deliver") await deliver(o.picks);
        else await review(o);
      }),
    );
  }
  await p.drain();
  // Then reviewers work through what is left, several at once (approvals compete for the orders' balance).
  for (let i = 0; i < after.length; i += 4) await Promise.all(after.slice(i, i + 4).map(review));
  await p.drain();
  return p;
}

const reviewOp = fc.record({
  kind: fc.constant("review" as const),
  pick: fc.nat(),
  approve: fc.boolean(),
  fraction: fc.double({ min: 0.1, max: 1, noNaN: true }),
  twice: fc.boolean(),
});

describe("money under random interleavings of claims, deliveries and reviews", () => {
  it("never lets automatic refunds pass the limit per order, refunds above an order or twice, and pairs every ACCEPT with its refund", async () => {
    const seen = { accepts: 0, approvedRefunds: 0, runsNearTheLimit: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 5, maxLength: 60 }),
        fc.array(reviewOp, { maxLength: 12 }),
        async (ops, after) => {
          const p = await run(ops, after);
          const money = checkMoneyInvariants(p.publisher.published, { orderAmountEur: amountOf, limitEur: LIMIT_EUR });
          expect(money.violations).toEqual([]);
          seen.accepts += money.accepts;
          seen.approvedRefunds += money.approvedRefunds;
          if (((await p.deps.ledger.get("ord_016"))?.automatic_cents ?? 0) >= 30_000) seen.runsNearTheLimit++;
          // The ledger agrees with the bus: what it holds per order is what RefundExecuted announced.
          for (const orderId of ORDERS) {
            const entry = await p.deps.ledger.get(orderId);
            if (entry) assertLedgerEntry(entry);
            const announced = p.publisher.published.filter(
              (e) => e.detailType === "RefundExecuted" && e.detail.order_id === orderId,
            );
            const cents = new Map(
              announced.map((e) => [
                e.detail.claim_id,
                Math.round(Number((e.detail as { amount_eur: number }).amount_eur) * 100),
              ]),
            );
            expect(entry?.claims ?? {}, orderId).toEqual(Object.fromEntries(cents));
            expect(entry?.automatic_cents ?? 0).toBeLessThanOrEqual(LIMIT_EUR * 100);
          }
          // No claim is left behind: every one is final once the queues drain.
          for (const c of p.claims.all()) expect(["DECIDED", "NEEDS_REVIEW"], c.claim_id).toContain(c.status);
        },
      ),
      { numRuns: 80 },
    );
    // The runs did exercise what the property is about: refunds by the kernel, by reviewers, and an order near its limit.
    expect(seen.accepts).toBeGreaterThan(0);
    expect(seen.approvedRefunds).toBeGreaterThan(0);
    expect(seen.runsNearTheLimit).toBeGreaterThan(0);
  });
});

describe("a reservation that loses the race", () => {
  /** Two claims run up to their proposals; both proposals are then decided at once. */
  async function racingProposals(euros: [number, number]) {
    const p = createInProcessPipeline({
      agent: config.agent,
      orders: config.orders,
      llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
      clock: { now: () => NOW },
    });
    for (const [i, eur] of euros.entries())
      await p.submit(
        { claim: { order_id: "ord_016", amount_eur: eur, category: "electronics", reason: "broken" } },
        { claimId: `clm_race_${i}` },
      );
    const proposals = [];
    for (let work = p.queues.take(); work; work = p.queues.take()) {
      if (work.queue === "proposals") proposals.push(work);
      else await handleWork(work, p.deps);
    }
    expect(proposals).toHaveLength(2);
    await Promise.all(proposals.map((w) => handleWork(w, p.deps)));
    return p;
  }

  it("is decided again against the ledger it now sees: one ACCEPT with its refund, one ESCALATE, never both announced as ACCEPT", async () => {
    const p = await racingProposals([300, 300]);
    const verdicts = p.publisher.published
      .filter((e) => e.detailType === "ClaimVerdict")
      .map((e) => e.detail as { verdict: string; reason_code: string });
    expect(verdicts.map((v) => `${v.verdict} ${v.reason_code}`).sort()).toEqual([
      "ACCEPT VALIDATION_PASSED",
      "ESCALATE AMOUNT_ABOVE_LIMIT",
    ]);
    expect(
      checkMoneyInvariants(p.publisher.published, { orderAmountEur: amountOf, limitEur: LIMIT_EUR }).violations,
    ).toEqual([]);
    expect((await p.deps.ledger.get("ord_016"))?.automatic_cents).toBe(30_000);
    // The loser's audit notes the lost race before its final decision; replay counts it (PROPOSAL_SUBMITTED.lost_races).
    const loser = p.claims.all().find((c) => c.verdict === "ESCALATE")!;
    expect(
      p
        .auditEvents()
        .filter((e) => e.details.claim_id === loser.claim_id && e.event_type === "CLAIM_REFUND_NOT_EXECUTED"),
    ).toHaveLength(1);
    expect(
      p.auditEvents().find((e) => e.details.claim_id === loser.claim_id && e.event_type === "PROPOSAL_SUBMITTED")
        ?.details.lost_races,
    ).toBe(1);
  });

  it("lets both through when both fit under the limit", async () => {
    const p = await racingProposals([200, 300]);
    expect(p.claims.all().map((c) => c.verdict)).toEqual(["ACCEPT", "ACCEPT"]);
    expect((await p.deps.ledger.get("ord_016"))?.automatic_cents).toBe(50_000);
  });
});
