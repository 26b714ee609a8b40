// A failed refund's review decided through the review shell on the in-process pipeline: the provider fails the
// ACCEPT's refund, a reviewer RETRYs (paid once under the new execution) or CLOSEs (reservation released, the order
// not bound), repeats answer the stored result, other decisions are refused, and the money invariants hold.
import { describe, expect, it } from "vitest";
import type { RefundExecutedDetail } from "../core/kernel/events.ts";
import { createRulesModel } from "../core/agents/rules-model.ts";
import { retryExecutionId } from "../core/kernel/settlement.ts";
import type { SettlementStatus } from "../core/kernel/settlement.ts";
import { createInMemorySettlementRepository } from "./in-memory.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { checkMoneyInvariants } from "./testing/money-invariants.ts";
import { payRefund } from "./payments.ts";
import type { PaymentProvider } from "./payments.ts";
import { RefundReviewRequestSchema } from "./decide/refund-failed.ts";
import { repairRefundReviews } from "./refund-review.ts";
import { decideReview, listReviews, repairReviews } from "./review.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";
import { orderTotalMajor } from "../core/kernel/order-view.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);

/** The simulated provider, made to answer `outcomes` in turn (FAILED: refused with a reason), counting its calls. */
function provider(outcomes: SettlementStatus[]): PaymentProvider & { calls: string[] } {
  const calls: string[] = [];
  return {
    name: "simulated",
    needsPaymentRef: false,
    calls,
    refund: async (request) => {
      calls.push(request.executionId);
      const status = outcomes[calls.length - 1] ?? "SETTLED";
      return status === "FAILED"
        ? { status, failureReason: "insufficient_funds: the shop's balance is too low" }
        : { status, providerRef: `sim_re_${request.executionId}` };
    },
  };
}

async function failedRefund(outcomes: SettlementStatus[] = ["FAILED"]) {
  let now = NOW;
  const settlements = createInMemorySettlementRepository();
  const p = createInProcessPipeline({
    agent: config.agent,
    orders: config.orders,
    llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
    clock: { now: () => (now += 1000) },
    overrides: { settlements },
  });
  const { record } = await p.decide(
    { claim: { order_id: "ord_001", amount_eur: 50, category: "electronics", reason: "Screen arrived cracked" } },
    { claimId: "clm_pay" },
  );
  expect(record?.verdict).toBe("ACCEPT");
  const pays = provider(outcomes);
  const payDeps = { ...p.deps, settlements, provider: pays };
  /** What the refund executor does with every RefundExecuted published so far. */
  const execute = async () => {
    for (const e of p.publisher.published.filter((x) => x.detailType === "RefundExecuted"))
      await payRefund(payDeps, e.detail as RefundExecutedDetail);
  };
  await execute();
  expect((await settlements.get("clm_pay"))?.status).toBe("FAILED");
  const invariants = () =>
    checkMoneyInvariants(
      p.publisher.published.map((e) => ({ detailType: e.detailType, detail: e.detail as Record<string, unknown> })),
      { orderAmountEur: (id) => orderTotalMajor(config.orders.find((o) => o.order_id === id)), limitEur: 500 },
    );
  return { p, settlements, pays, execute, invariants };
}

const ana = { id: "ana" };

describe("RETRY of a failed refund", () => {
  it("pays again under a new execution id, once, and the claim shows the refund settled", async () => {
    const { p, settlements, pays, execute, invariants } = await failedRefund();
    const first = await settlements.get("clm_pay");
    const answer = await decideReview("clm_pay", { decision: "RETRY" }, p.deps, ana);
    expect(answer).toMatchObject({
      ok: true,
      body: {
        executed: true,
        execution_id: retryExecutionId(first!.execution_id),
        review: { origin: "REFUND_FAILED", status: "RETRIED", decision: "RETRY", reviewer: "ana" },
      },
    });
    await execute();
    await execute(); // a redelivery pays nothing more
    expect(pays.calls).toEqual([first!.execution_id, retryExecutionId(first!.execution_id)]);
    expect(await settlements.get("clm_pay")).toMatchObject({
      status: "SETTLED",
      execution_id: retryExecutionId(first!.execution_id),
    });
    const decided = p.publisher.published.filter((e) => e.detailType === "ReviewDecided");
    expect(decided.map((e) => e.detail)).toEqual([expect.objectContaining({ decision: "RETRY", reviewer: "ana" })]);
    expect(p.auditEvents().filter((e) => e.event_type === "REVIEW_DECIDED")).toHaveLength(1);
    expect(invariants().violations).toEqual([]);
  });

  it("is idempotent: the same RETRY answers the stored result; CLOSE afterwards is 409 REVIEW_ALREADY_DECIDED", async () => {
    const { p, execute, pays } = await failedRefund();
    const once = await decideReview("clm_pay", { decision: "RETRY" }, p.deps, ana);
    const twice = await decideReview("clm_pay", { decision: "RETRY" }, p.deps, ana);
    expect(twice).toEqual(once);
    expect(p.auditEvents().filter((e) => e.event_type === "REVIEW_DECIDED")).toHaveLength(1);
    await execute();
    expect(pays.calls).toHaveLength(2);
    expect(
      await decideReview("clm_pay", { decision: "CLOSE", paid_out_of_band: false, note: "x" }, p.deps, ana),
    ).toMatchObject({
      ok: false,
      status: 409,
      code: "REVIEW_ALREADY_DECIDED",
    });
  });

  it("a retry that fails again opens a new review of its own", async () => {
    const { p, settlements, execute } = await failedRefund(["FAILED", "FAILED"]);
    const first = (await settlements.get("clm_pay"))!.review!.review_id;
    await decideReview("clm_pay", { decision: "RETRY" }, p.deps, ana);
    await execute();
    const again = await settlements.get("clm_pay");
    expect(again?.review).toMatchObject({ status: "PENDING" });
    expect(again?.review?.review_id).not.toBe(first);
  });
});

describe("CLOSE of a failed refund", () => {
  const next = { order_id: "ord_001", amount_eur: 40, category: "electronics", reason: "Charger missing" };

  it("needs a note and paid_out_of_band; unpaid it releases the reservation, counts nothing as refunded, and binds the order", async () => {
    const { p, invariants } = await failedRefund();
    expect(await decideReview("clm_pay", { decision: "CLOSE", paid_out_of_band: false }, p.deps, ana)).toMatchObject({
      ok: false,
      status: 400,
      code: "NOTE_REQUIRED",
    });
    expect(await decideReview("clm_pay", { decision: "CLOSE", note: "customer withdrew" }, p.deps, ana)).toMatchObject({
      ok: false,
      status: 400,
      code: "INVALID_INPUT",
    });
    expect((await p.deps.ledger.get("ord_001"))?.claims).toHaveProperty("clm_pay");
    const body = { decision: "CLOSE", paid_out_of_band: false, note: "customer withdrew" };
    const answer = await decideReview("clm_pay", body, p.deps, ana);
    expect(answer).toMatchObject({
      ok: true,
      body: { executed: false, review: { status: "CLOSED", note: "customer withdrew", reviewer: "ana" } },
    });
    const entry = await p.deps.ledger.get("ord_001");
    expect(entry?.claims ?? {}).not.toHaveProperty("clm_pay");
    expect(entry?.refunded_cents ?? 0).toBe(0);
    expect(entry?.decisions).toEqual([{ claim_id: "clm_pay", decision: "CLOSE", paid_out_of_band: false }]);
    // A repeat answers the same and releases nothing more; the next claim on the order goes to a person.
    expect(await decideReview("clm_pay", body, p.deps, ana)).toEqual(answer);
    const { record } = await p.decide({ claim: next }, { claimId: "clm_next" });
    expect(record).toMatchObject({ verdict: "ESCALATE", reason_code: "PRIOR_DECISION_ON_ORDER" });
    expect(invariants().violations).toEqual([]);
    expect(invariants().refundedCents).toBe(0);
  });

  it("paid out of band keeps the reservation (counted as refunded) and sends the next claim on the order to a person", async () => {
    const { p, invariants } = await failedRefund();
    const reserved = (await p.deps.ledger.get("ord_001"))!.refunded_cents;
    expect(reserved).toBeGreaterThan(0);
    const body = { decision: "CLOSE", paid_out_of_band: true, note: "refunded by bank transfer" };
    const answer = await decideReview("clm_pay", body, p.deps, ana);
    expect(answer).toMatchObject({ ok: true, body: { executed: false, review: { status: "CLOSED" } } });
    const entry = await p.deps.ledger.get("ord_001");
    expect(entry?.claims).toHaveProperty("clm_pay");
    expect(entry?.refunded_cents).toBe(reserved);
    expect(entry?.decisions).toEqual([{ claim_id: "clm_pay", decision: "CLOSE", paid_out_of_band: true }]);
    const decided = p.publisher.published.filter((e) => e.detailType === "ReviewDecided").at(-1)?.detail;
    expect(decided).toMatchObject({ decision: "CLOSE", paid_out_of_band: true });
    // Changing one's mind is a different decision: refused.
    expect(await decideReview("clm_pay", { ...body, paid_out_of_band: false }, p.deps, ana)).toMatchObject({
      ok: false,
      status: 409,
      code: "REVIEW_ALREADY_DECIDED",
    });
    const { record } = await p.decide({ claim: next }, { claimId: "clm_next" });
    expect(record).toMatchObject({ verdict: "ESCALATE", reason_code: "PRIOR_DECISION_ON_ORDER" });
    expect(invariants().violations).toEqual([]);
    expect(invariants().refundedCents).toBe(reserved);
  });
});

describe("a RETRY / CLOSE a crash interrupted, never repeated (found by npm run chaos)", () => {
  it("is completed by the sweep's repair: the CLOSE announced, the RETRY's refund published and paid once", async () => {
    for (const decision of ["CLOSE", "RETRY"] as const) {
      const { p, settlements, execute, pays, invariants } = await failedRefund();
      // The reviewer's process dies right after the ledger release / the audit, before anything is published.
      let crash = true;
      const dying = {
        ...p.deps,
        publisher: {
          publish: async (entries: Parameters<typeof p.deps.publisher.publish>[0]) => {
            if (crash) throw new Error("the process died");
            await p.deps.publisher.publish(entries);
          },
        },
      };
      await expect(
        decideReview(
          "clm_pay",
          { decision, note: "paid by bank transfer", ...(decision === "CLOSE" ? { paid_out_of_band: true } : {}) },
          dying,
          ana,
        ),
      ).rejects.toThrow("the process died");
      crash = false;
      expect((await settlements.get("clm_pay"))?.review).toMatchObject({ decision });
      expect((await settlements.get("clm_pay"))?.review?.performed).toBeUndefined();
      expect(p.publisher.published.filter((e) => e.detailType === "ReviewDecided")).toHaveLength(0);
      expect(await repairRefundReviews(p.deps)).toBe(1);
      expect(await repairRefundReviews(p.deps)).toBe(0);
      await execute();
      expect((await settlements.get("clm_pay"))?.review?.performed).toBe(true);
      expect(p.publisher.published.filter((e) => e.detailType === "ReviewDecided")).toHaveLength(1);
      expect(pays.calls).toHaveLength(decision === "RETRY" ? 2 : 1);
      expect(invariants().violations, decision).toEqual([]);
    }
  });
});

describe("a decision on a failure whose RefundFailed a crash kept from going out (found by npm run chaos)", () => {
  it("announces RefundFailed first, so the RETRY / CLOSE names an execution the bus saw fail", async () => {
    for (const decision of ["RETRY", "CLOSE"] as const) {
      const { p, settlements, invariants } = await failedRefund();
      // The recorder died after storing FAILED, before announcing it.
      const stored = (await settlements.get("clm_pay"))!;
      const { announced: _announced, ...unannounced } = stored;
      await settlements.update({ ...unannounced, version: stored.version + 1 });
      p.publisher.published.splice(
        p.publisher.published.findIndex((e) => e.detailType === "RefundFailed"),
        1,
      );
      expect(
        await decideReview(
          "clm_pay",
          { decision, note: "paid by bank transfer", ...(decision === "CLOSE" ? { paid_out_of_band: true } : {}) },
          p.deps,
          ana,
        ),
      ).toMatchObject({
        ok: true,
      });
      const types = p.publisher.published.map((e) => e.detailType);
      expect(types.indexOf("RefundFailed"), decision).toBeGreaterThan(-1);
      expect(types.indexOf("RefundFailed")).toBeLessThan(types.indexOf("ReviewDecided"));
      expect(invariants().violations, decision).toEqual([]);
    }
  });
});

describe("what else the refund review answers", () => {
  it("other decisions on it are 409 DECISION_NOT_ALLOWED; RETRY / CLOSE on a claim without one too", async () => {
    const { p } = await failedRefund();
    for (const body of [{ decision: "DENY", note: "no" }, { decision: "APPROVE" }])
      expect(await decideReview("clm_pay", body, p.deps, ana)).toMatchObject({
        ok: false,
        status: 409,
        code: "DECISION_NOT_ALLOWED",
      });
    const { record } = await p.decide(
      { claim: { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Laptop does not boot" } },
      { claimId: "clm_esc" },
    );
    expect(record?.verdict).toBe("ESCALATE");
    for (const body of [{ decision: "RETRY" }, { decision: "CLOSE", paid_out_of_band: false, note: "x" }])
      expect(await decideReview("clm_esc", body, p.deps, ana)).toMatchObject({
        ok: false,
        status: 409,
        code: "DECISION_NOT_ALLOWED",
      });
  });

  it("is recorded under the authenticated reviewer (a body naming someone else is 400)", async () => {
    const { p } = await failedRefund();
    expect(await decideReview("clm_pay", { decision: "RETRY", reviewer: "bo" }, p.deps, ana)).toMatchObject({
      ok: false,
      status: 400,
      code: "REVIEWER_MISMATCH",
    });
  });

  it("is listed in GET /reviews while pending, and no more once decided", async () => {
    const { p, settlements } = await failedRefund();
    const pending = await listReviews({}, p.deps);
    const reviewId = (await settlements.get("clm_pay"))!.review!.review_id;
    expect(pending.refundReviews).toEqual([
      expect.objectContaining({ review_id: reviewId, origin: "REFUND_FAILED", status: "PENDING", claim_id: "clm_pay" }),
    ]);
    await decideReview("clm_pay", { decision: "RETRY" }, p.deps, ana);
    const after = await listReviews({}, p.deps);
    expect(after.refundReviews).toEqual([]);
  });

  it("pages through claims' reviews and failed refunds' reviews together, oldest first, limit at a time", async () => {
    const { p, settlements } = await failedRefund();
    const { record } = await p.decide(
      { claim: { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Laptop does not boot" } },
      { claimId: "clm_esc" },
    );
    expect(record?.verdict).toBe("ESCALATE");
    const first = await listReviews({ limit: 1 }, p.deps);
    expect(first.items).toEqual([]);
    expect(first.refundReviews).toEqual([
      expect.objectContaining({
        claim_id: "clm_pay",
        execution_id: (await settlements.get("clm_pay"))!.execution_id,
        amount_eur: 50,
        failure_reason: "insufficient_funds: the shop's balance is too low",
      }),
    ]);
    expect(first.nextCursor).toBeDefined();
    const second = await listReviews({ limit: 1, cursor: first.nextCursor! }, p.deps);
    expect(second.items.map((i) => i.review.claim_id)).toEqual(["clm_esc"]);
    expect(second.refundReviews).toEqual([]);
    expect(second.nextCursor).toBeUndefined();
    const both = await listReviews({ limit: 2 }, p.deps);
    expect([both.refundReviews.length, both.items.length, both.nextCursor]).toEqual([1, 1, undefined]);
    // Decided reviews list no failed refund's review: it is PENDING only.
    expect((await listReviews({ status: "APPROVED" }, p.deps)).refundReviews).toEqual([]);
  });
});

describe("an approval a crash cut short after it announced its refund, whose refund then failed and was decided (issue 39, chaos seeds 1270884192/2647, /3619, 908927419/5259)", () => {
  // What a refund review's decision leaves on the order's ledger once the approval is repaired after it: a CLOSE
  // releases the reservation for good, a RETRY keeps it. The review desk's CLOSE (issue 34) says whether the refund
  // was paid out of band: paid keeps the reservation, not paid releases it — those cases run once the review API
  // takes `paid_out_of_band`, and must pass unchanged then.
  const CASES = [
    { name: "CLOSE", body: { decision: "CLOSE", note: "customer withdrew the claim" }, keeps: false, payouts: 1 },
    { name: "RETRY", body: { decision: "RETRY" }, keeps: true, payouts: 2 },
    {
      name: "CLOSE paid out of band",
      body: { decision: "CLOSE", paid_out_of_band: true, note: "refunded by bank transfer" },
      keeps: true,
      payouts: 1,
    },
    {
      name: "CLOSE not paid",
      body: { decision: "CLOSE", paid_out_of_band: false, note: "customer withdrew the claim" },
      keeps: false,
      payouts: 1,
    },
  ];
  const APPROVE = { decision: "APPROVE", amount_eur: 900, note: "300 withheld" };
  const REPAIRS = ["the sweep", "the reviewer's repeat"] as const;

  for (const c of CASES)
    for (const repair of REPAIRS)
      it.skipIf(!RefundReviewRequestSchema.safeParse(c.body).success)(
        `${c.name}, then the approval repaired by ${repair}: the reservation ${c.keeps ? "is kept once" : "stays released"}, nothing paid twice`,
        async () => {
          let now = NOW;
          const settlements = createInMemorySettlementRepository();
          const p = createInProcessPipeline({
            agent: config.agent,
            orders: config.orders,
            llm: createRulesModel({ contract: config.agent.contract, responsibility: config.agent.responsibility }),
            clock: { now: () => (now += 1000) },
            overrides: { settlements },
          });
          const { record } = await p.decide(
            {
              claim: { order_id: "ord_002", amount_eur: 1200, category: "electronics", reason: "Laptop does not boot" },
            },
            { claimId: "clm_esc" },
          );
          expect(record?.verdict).toBe("ESCALATE");
          // The approval's process dies right after it published RefundExecuted and ReviewDecided, before it recorded
          // the review APPROVED: the decision stays claimed on the review (its intent) for a repair.
          let dies = true;
          const dying = {
            ...p.deps,
            publisher: {
              publish: async (entries: Parameters<typeof p.deps.publisher.publish>[0]) => {
                await p.deps.publisher.publish(entries);
                if (dies) throw new Error("the process died");
              },
            },
          };
          await expect(decideReview("clm_esc", APPROVE, dying, ana)).rejects.toThrow("the process died");
          dies = false;
          expect((await p.deps.reviews.getReview("clm_esc"))?.intent).toMatchObject({ decision: "APPROVE" });
          // The refund executor pays the announced refund; the provider refuses it; a reviewer decides the failure.
          const pays = provider(["FAILED", "SETTLED"]);
          const execute = async () => {
            for (const e of p.publisher.published.filter((x) => x.detailType === "RefundExecuted"))
              await payRefund({ ...p.deps, settlements, provider: pays }, e.detail as RefundExecutedDetail);
          };
          await execute();
          expect((await settlements.get("clm_esc"))?.review?.status).toBe("PENDING");
          expect(await decideReview("clm_esc", c.body, p.deps, ana)).toMatchObject({ ok: true });
          await execute();
          // Now the approval is carried out again, from its claimed intent.
          if (repair === "the sweep") expect(await repairReviews(p.deps)).toBe(1);
          else expect(await decideReview("clm_esc", APPROVE, p.deps, ana)).toMatchObject({ ok: true });
          await execute();
          expect(await repairReviews(p.deps)).toBe(0);

          const review = await p.deps.reviews.getReview("clm_esc");
          expect(review).toMatchObject({ status: "APPROVED", decision: "APPROVE" });
          expect(review?.intent).toBeUndefined();
          const entry = await p.deps.ledger.get("ord_002");
          if (c.keeps) {
            expect(entry?.claims).toEqual({ clm_esc: 90000 });
            expect(entry?.released ?? []).toEqual([]);
          } else {
            expect(entry?.claims ?? {}).toEqual({});
            expect(entry?.refunded_cents ?? 0).toBe(0);
            expect(entry?.released).toEqual(["clm_esc"]);
          }
          // The provider was asked once per execution, and paid at most once.
          expect(pays.calls).toHaveLength(c.payouts);
          expect(new Set(pays.calls).size).toBe(pays.calls.length);
          const money = checkMoneyInvariants(
            p.publisher.published.map((e) => ({
              detailType: e.detailType,
              detail: e.detail as Record<string, unknown>,
            })),
            {
              orderAmountEur: (id) => orderTotalMajor(config.orders.find((o) => o.order_id === id)),
              limitEur: 500,
              ledgers: entry ? [{ orderId: entry.order_id, claims: entry.claims }] : [],
            },
          );
          expect(money.violations).toEqual([]);
          expect(money.refundedCents).toBe(c.keeps ? 90000 : 0);
        },
      );
});
