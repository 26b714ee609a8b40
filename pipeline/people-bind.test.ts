// A person's decision binds the order (10c), and a customer's automatic refunds stay within customer_limits (11b)
// when their claims race, through the real pipeline (in memory here; one run on dynalite in
// adapters/aws/customer-limit-race.test.ts).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { CustomerLimits, Order } from "../core/integrity/index.ts";
import { createInMemoryReviewRepository } from "./in-memory.ts";
import { createInProcessPipeline } from "./in-process.ts";
import type { PipelineDeps } from "./deps.ts";
import type { RefundLedger, ReviewRepository } from "./ports.ts";
import { decideReview, listReviews, repairReviews } from "./review.ts";
import { releaseUnrefundedReservation } from "./customer-release.ts";
import { raceClaims, raceOutcome } from "./race.test-kit.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);

function pipeline(
  opts: { limits?: CustomerLimits; orders?: readonly Order[]; overrides?: Partial<PipelineDeps> } = {},
) {
  const contract = { ...config.agent.contract, ...(opts.limits ? { customer_limits: opts.limits } : {}) };
  const agent = { ...config.agent, contract };
  return createInProcessPipeline({
    agent,
    orders: opts.orders ?? config.orders,
    llm: createRulesModel({ contract, responsibility: config.agent.responsibility }),
    clock: { now: () => NOW },
    ...(opts.overrides ? { overrides: opts.overrides } : {}),
  });
}

const claimOn = (order_id: string, amount_eur: number, extra: Record<string, unknown> = {}) => ({
  claim: { order_id, amount_eur, category: "electronics", reason: "Laptop does not boot", ...extra },
});

describe("a person's decision binds the order", () => {
  it("after a DENY, a later claim on the order goes to a person (PRIOR_DECISION_ON_ORDER), never refunded", async () => {
    const p = pipeline();
    expect((await p.decide(claimOn("ord_002", 1200), { claimId: "clm_big" })).record?.verdict).toBe("ESCALATE");
    expect((await decideReview("clm_big", { decision: "DENY", reviewer: "r", note: "fraud pattern" }, p.deps)).ok).toBe(
      true,
    );
    expect((await p.deps.ledger.get("ord_002"))?.decisions).toEqual([{ claim_id: "clm_big", decision: "DENY" }]);
    const { record } = await p.decide(claimOn("ord_002", 400), { claimId: "clm_again" });
    expect(record).toMatchObject({ verdict: "ESCALATE", reason_code: "PRIOR_DECISION_ON_ORDER", executed: false });
    expect(record?.reason).toContain("a person denied claim clm_big");
    expect(p.publisher.published.filter((e) => e.detailType === "RefundExecuted")).toHaveLength(0);
  });

  it("after an APPROVE of 900 of 1200, a claim for the withheld 300 goes to a person; a full approval binds nothing", async () => {
    const p = pipeline();
    await p.decide(claimOn("ord_002", 1200), { claimId: "clm_big" });
    const approved = await decideReview(
      "clm_big",
      { decision: "APPROVE", amount_eur: 900, reviewer: "r", note: "300 withheld for damage" },
      p.deps,
    );
    expect(approved.ok).toBe(true);
    const { record } = await p.decide(claimOn("ord_002", 300), { claimId: "clm_rest" });
    expect(record).toMatchObject({ verdict: "ESCALATE", reason_code: "PRIOR_DECISION_ON_ORDER" });
    expect(record?.reason).toContain("for 900.0 of the 1200.0 EUR proposed");

    // ord_011 (650 EUR): 600 escalated, approved in full; 50 more is refunded automatically.
    await p.decide(claimOn("ord_011", 600), { claimId: "clm_full" });
    expect((await decideReview("clm_full", { decision: "APPROVE", reviewer: "r" }, p.deps)).ok).toBe(true);
    expect((await p.decide(claimOn("ord_011", 50), { claimId: "clm_more" })).record?.verdict).toBe("ACCEPT");
  });

  it("is recorded once when the review shell dies between recording it and recording the review, and the repair finishes", async () => {
    const inner = createInMemoryReviewRepository();
    let crashes = 1;
    const reviews: ReviewRepository = {
      ...inner,
      async updateReview(next) {
        if (next.status !== "PENDING" && crashes-- > 0) throw new Error("injected crash before the review is recorded");
        return inner.updateReview(next);
      },
    };
    const p = pipeline({ overrides: { reviews } });
    await p.decide(claimOn("ord_002", 1200), { claimId: "clm_big" });
    await expect(decideReview("clm_big", { decision: "DENY", reviewer: "r", note: "no" }, p.deps)).rejects.toThrow(
      /injected crash/,
    );
    // The ledger already binds the order while the review is still PENDING with its intent claimed: the mark
    // went and the decision came in one write, so the order is never open in between.
    expect((await p.deps.ledger.get("ord_002"))?.decisions).toEqual([{ claim_id: "clm_big", decision: "DENY" }]);
    expect((await p.decide(claimOn("ord_002", 100), { claimId: "clm_x" })).record?.reason_code).toBe(
      "PRIOR_DECISION_ON_ORDER",
    );
    expect(await repairReviews(p.deps)).toBe(1);
    expect((await reviews.getReview("clm_big"))?.status).toBe("DENIED");
    const entry = await p.deps.ledger.get("ord_002");
    expect(entry?.decisions).toEqual([{ claim_id: "clm_big", decision: "DENY" }]);
    expect(entry?.pending_reviews).toEqual(["clm_x"]);
  });
});

// ---- customer limits under concurrency ---------------------------------------------------------------------------

const customerOrders = (n: number, amount = 100): Order[] =>
  Array.from({ length: n }, (_, i) => ({
    order_id: `ord_c${i}`,
    purchase_date: new Date(NOW - 2 * 86_400_000).toISOString(),
    category: "electronics",
    amount,
    currency: "EUR",
    customer_id: "cus_1",
  }));

/** Counts the customer-window races lost (versioned writes retried) on top of a ledger. */
function countingConflicts(ledger: RefundLedger): RefundLedger & { conflicts: () => number } {
  let conflicts = 0;
  return {
    ...ledger,
    async reserveCustomer(request) {
      const out = await ledger.reserveCustomer(request);
      conflicts += out.conflicts;
      return out;
    },
    conflicts: () => conflicts,
  };
}

describe("customer limits hold when one customer's claims race on several orders", () => {
  it("lets exactly max_automatic_refunds of 6 racing claims through; the rest go to a person, nothing leaks", async () => {
    const ledger = countingConflicts(pipeline().deps.ledger);
    const limits = { window_days: 30, max_automatic_refunds: 3, max_automatic_eur: 500 };
    const p = pipeline({ limits, orders: customerOrders(6), overrides: { ledger } });
    await raceClaims(
      p,
      Array.from({ length: 6 }, (_, i) => claimOn(`ord_c${i}`, 50, { customer_id: "cus_1" })),
    );
    const { accepted, escalated, refunds } = await raceOutcome(p, 6);
    expect(accepted).toHaveLength(3);
    expect(escalated).toHaveLength(3);
    expect(escalated.every((r) => r?.reason_code === "CUSTOMER_LIMIT_EXCEEDED")).toBe(true);
    expect(refunds).toHaveLength(3);
    const window = await p.deps.ledger.getCustomerWindow("cus_1");
    expect(window?.reservations.map((r) => r.claim_id).sort()).toEqual(accepted.map((r) => r!.claim_id).sort());
  });

  it("shows a reviewer the customer's automatic refunds in the window, beside a claim the limit sent to them", async () => {
    const limits = { window_days: 30, max_automatic_refunds: 2, max_automatic_eur: 500 };
    const p = pipeline({ limits, orders: customerOrders(3) });
    for (const [i, id] of ["clm_c0", "clm_c1", "clm_c2"].entries())
      await p.decide(claimOn(`ord_c${i}`, 50 + i, { customer_id: "cus_1" }), { claimId: id });
    const { items } = await listReviews({}, p.deps);
    const third = items.find((i) => i.review.claim_id === "clm_c2");
    expect(third?.review).toMatchObject({ reason_code: "CUSTOMER_LIMIT_EXCEEDED" });
    // clm_c0's 50 and clm_c1's 51 EUR, refunded automatically in the window.
    expect(third?.context.facts).toMatchObject({ customer_window: { refunds: 2, refunded_eur: 101 } });
    // An order without a customer is bound by no window, and none is shown.
    const noCustomer = customerOrders(1, 2000).map((o) => ({ ...o, customer_id: undefined }));
    const unbound = pipeline({ limits, orders: noCustomer });
    await unbound.decide(claimOn("ord_c0", 1200), { claimId: "clm_big" });
    const [big] = (await listReviews({}, unbound.deps)).items;
    expect(big?.review.claim_id).toBe("clm_big");
    expect(big?.context.facts).not.toHaveProperty("customer_window");
  });

  it("property: N racing claims never pass the limits, every claim ends ACCEPT or ESCALATE, and a refused one could not fit", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 8 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 50, max: 400 }),
        fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 8, maxLength: 8 }),
        async (n, maxRefunds, maxEur, amounts) => {
          const ledger = countingConflicts(pipeline().deps.ledger);
          const limits = { window_days: 30, max_automatic_refunds: maxRefunds, max_automatic_eur: maxEur };
          const p = pipeline({ limits, orders: customerOrders(n, 300), overrides: { ledger } });
          await raceClaims(
            p,
            Array.from({ length: n }, (_, i) => claimOn(`ord_c${i}`, amounts[i]!, { customer_id: "cus_1" })),
          );
          const { accepted, escalated, refundedCents } = await raceOutcome(p, n);
          expect(accepted.length + escalated.length).toBe(n);
          expect(accepted.length).toBeLessThanOrEqual(maxRefunds);
          expect(refundedCents).toBeLessThanOrEqual(maxEur * 100);
          for (const r of escalated) {
            expect(r?.reason_code).toBe("CUSTOMER_LIMIT_EXCEEDED");
            // Refused only when it could not fit beside what was accepted: the limit is never under-used by a lost race.
            const amount = Math.round(r!.claim!.amount_eur * 100);
            expect(accepted.length === maxRefunds || refundedCents + amount > maxEur * 100).toBe(true);
          }
          const window = await p.deps.ledger.getCustomerWindow("cus_1");
          expect(window?.reservations.length ?? 0).toBe(accepted.length);
        },
      ),
      { numRuns: 40, seed: 20 },
    );
  });

  it("releases a reservation whose refund never happened (the kernel died between the window and the order)", async () => {
    const base = pipeline().deps.ledger;
    let dying = true;
    const ledger: RefundLedger = {
      ...base,
      async reserve(request) {
        if (dying) {
          dying = false;
          throw new Error("injected crash between the customer's window and the order's ledger");
        }
        return base.reserve(request);
      },
    };
    const limits = { window_days: 30, max_automatic_refunds: 1, max_automatic_eur: 500 };
    const p = pipeline({ limits, orders: customerOrders(2), overrides: { ledger } });
    await p.submit(claimOn("ord_c0", 50, { customer_id: "cus_1" }), { claimId: "clm_dead" });
    // Run until the kernel dies; its proposal is then lost for good (as if its message went to the DLQ).
    await expect(p.drain()).rejects.toThrow(/injected crash/);
    for (let w = p.queues.take(); w; w = p.queues.take());
    expect((await p.deps.ledger.getCustomerWindow("cus_1"))?.reservations.map((r) => r.claim_id)).toEqual(["clm_dead"]);
    // The claim is ended for a person (overdue / stalled): its reservation is released, the limit does not leak.
    const record = (await p.claims.getClaim("clm_dead"))!;
    expect(await releaseUnrefundedReservation(record, p.deps)).toBe(true);
    expect((await p.deps.ledger.getCustomerWindow("cus_1"))?.reservations).toEqual([]);
    expect(
      (await p.decide(claimOn("ord_c1", 50, { customer_id: "cus_1" }), { claimId: "clm_next" })).record?.verdict,
    ).toBe("ACCEPT");
    // A claim whose refund the order holds keeps its reservation.
    expect(await releaseUnrefundedReservation((await p.claims.getClaim("clm_next"))!, p.deps)).toBe(false);
    expect((await p.deps.ledger.getCustomerWindow("cus_1"))?.reservations.map((r) => r.claim_id)).toEqual(["clm_next"]);
  });
});
