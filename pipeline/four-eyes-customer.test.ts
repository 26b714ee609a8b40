// Four eyes per customer (docs/reviews.md#four-eyes): with customer limits, the money one reviewer alone approved for
// the order's customer across their orders in `window_days`, plus this approval, is checked against
// `second_approval_above_eur` — on both sides of the bound, under racing approvals, and without the approved refunds
// ever counting against the customer's automatic limits.
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { CustomerLimits, Order } from "../core/integrity/index.ts";
import type { ReviewerIdentity } from "../core/kernel/review.ts";
import { createInProcessPipeline } from "./in-process.ts";
import type { RefundLedger } from "./ports.ts";
import { decideReview, repairReviews } from "./review.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const DAY = 86_400_000;
const config = bundledConfig(NOW);
const LIMITS: CustomerLimits = { window_days: 30, max_automatic_refunds: 2, max_automatic_eur: 500 };
const ALICE: ReviewerIdentity = { id: "alice" };
const BOB: ReviewerIdentity = { id: "bob" };

/** Three orders of 2000 EUR of customer cus_1 (ord_c0…c2) and one of no customer (ord_n0). */
const ORDERS: Order[] = [
  ...[0, 1, 2].map((i) => ({
    order_id: `ord_c${i}`,
    purchase_date: new Date(NOW - 2 * DAY).toISOString(),
    category: "electronics",
    amount: 2000,
    currency: "EUR" as const,
    customer_id: "cus_1",
  })),
  {
    order_id: "ord_n0",
    purchase_date: new Date(NOW - 2 * DAY).toISOString(),
    category: "electronics",
    amount: 2000,
    currency: "EUR" as const,
  },
];

function pipeline(opts: { limits?: CustomerLimits | null; ledger?: RefundLedger; clock?: { now: () => number } } = {}) {
  const limits = opts.limits === undefined ? LIMITS : opts.limits;
  const { customer_limits: _bundled, ...bounds } = config.agent.contract;
  const contract = { ...bounds, ...(limits ? { customer_limits: limits } : {}) };
  const agent = { ...config.agent, contract, review: { secondApprovalAboveEur: 1000 } };
  return createInProcessPipeline({
    agent,
    orders: ORDERS,
    llm: createRulesModel({ contract, responsibility: config.agent.responsibility }),
    clock: opts.clock ?? { now: () => NOW },
    ...(opts.ledger ? { overrides: { ledger: opts.ledger } } : {}),
  });
}

type Pipeline = ReturnType<typeof pipeline>;

/** An escalated claim of `amount` EUR on `order` (above the 500 EUR a refund reaches without a person). */
async function escalated(p: Pipeline, claimId: string, order: string, amount = 800): Promise<void> {
  const { record } = await p.decide(
    {
      claim: {
        order_id: order,
        amount_eur: amount,
        category: "electronics",
        reason: "Laptop does not boot",
        ...(order.startsWith("ord_c") ? { customer_id: "cus_1" } : {}),
      },
    },
    { claimId },
  );
  expect(record?.verdict).toBe("ESCALATE");
}

const approve = (p: Pipeline, claimId: string, by: ReviewerIdentity, amount?: number) =>
  decideReview(
    claimId,
    { decision: "APPROVE", note: "checked", ...(amount !== undefined ? { amount_eur: amount } : {}) },
    p.deps,
    by,
  );

const statusOf = (r: Awaited<ReturnType<typeof approve>>) =>
  r.ok ? (r.body.review as { status: string; awaiting?: string }) : { status: r.code };

describe("four eyes per customer", () => {
  it("makes a reviewer's approval on another order of the customer a first approval once their total for the customer passes the bound", async () => {
    const p = pipeline();
    await escalated(p, "clm_a", "ord_c0");
    await escalated(p, "clm_b", "ord_c1");
    expect(statusOf(await approve(p, "clm_a", ALICE, 600))).toMatchObject({ status: "APPROVED" });
    // 600 + 400.01 EUR approved by alice alone for cus_1: above 1000 (per order each is far below it).
    expect(statusOf(await approve(p, "clm_b", ALICE, 400.01))).toMatchObject({
      status: "PENDING",
      awaiting: "SECOND_APPROVAL",
    });
    expect((await p.deps.ledger.get("ord_c1"))?.refunded_cents ?? 0).toBe(0);
    expect(statusOf(await approve(p, "clm_b", BOB))).toMatchObject({ status: "APPROVED" });
    expect((await p.deps.ledger.get("ord_c1"))?.refunded_cents).toBe(40_001);
    const window = await p.deps.ledger.getCustomerWindow("cus_1");
    expect(window?.reservations.map((r) => [r.claim_id, r.cents, r.approved_by])).toEqual([
      ["clm_a", 60_000, ["alice"]],
      ["clm_b", 40_001, ["alice", "bob"]],
    ]);
  });

  it("lets exactly the bound pass alone", async () => {
    const p = pipeline();
    await escalated(p, "clm_a", "ord_c0");
    await escalated(p, "clm_b", "ord_c1");
    await approve(p, "clm_a", ALICE, 600);
    expect(statusOf(await approve(p, "clm_b", ALICE, 400))).toMatchObject({ status: "APPROVED" });
    expect((await p.deps.ledger.getCustomerWindow("cus_1"))?.approvals).toBe(2);
  });

  it("counts only what the reviewer approved alone: another reviewer's, and approvals given with a second reviewer, do not", async () => {
    const p = pipeline();
    await escalated(p, "clm_a", "ord_c0");
    await escalated(p, "clm_b", "ord_c1", 1200);
    await escalated(p, "clm_c", "ord_c2");
    await approve(p, "clm_a", BOB, 600);
    // 1200 EUR needs two people; alice's 1200 together with bob's counts for neither.
    expect(statusOf(await approve(p, "clm_b", ALICE))).toMatchObject({ awaiting: "SECOND_APPROVAL" });
    expect(statusOf(await approve(p, "clm_b", BOB))).toMatchObject({ status: "APPROVED" });
    expect(statusOf(await approve(p, "clm_c", ALICE))).toMatchObject({ status: "APPROVED" });
  });

  it("counts approvals in the last window_days only", async () => {
    let now = NOW;
    const p = pipeline({ clock: { now: () => now } });
    await escalated(p, "clm_a", "ord_c0");
    await escalated(p, "clm_b", "ord_c1");
    await approve(p, "clm_a", ALICE, 600);
    now = NOW + 30 * DAY;
    // Exactly window_days later the first approval still counts…
    expect(statusOf(await approve(p, "clm_b", ALICE, 500))).toMatchObject({ awaiting: "SECOND_APPROVAL" });
    const q = pipeline({ clock: { now: () => now } });
    now = NOW;
    await escalated(q, "clm_a", "ord_c0");
    await escalated(q, "clm_b", "ord_c1");
    await approve(q, "clm_a", ALICE, 600);
    now = NOW + 30 * DAY + 1;
    // …and no longer once it is older.
    expect(statusOf(await approve(q, "clm_b", ALICE, 500))).toMatchObject({ status: "APPROVED" });
  });

  it("applies only with customer limits and to orders of a customer", async () => {
    const unbound = pipeline({ limits: null });
    await escalated(unbound, "clm_a", "ord_c0");
    await escalated(unbound, "clm_b", "ord_c1");
    await approve(unbound, "clm_a", ALICE, 600);
    expect(statusOf(await approve(unbound, "clm_b", ALICE, 500))).toMatchObject({ status: "APPROVED" });
    expect(await unbound.deps.ledger.getCustomerWindow("cus_1")).toBeUndefined();
    const p = pipeline();
    await escalated(p, "clm_a", "ord_c0");
    await escalated(p, "clm_n", "ord_n0");
    await approve(p, "clm_a", ALICE, 600);
    expect(statusOf(await approve(p, "clm_n", ALICE, 500))).toMatchObject({ status: "APPROVED" });
  });

  it("never counts approved refunds against the customer's automatic limits", async () => {
    const p = pipeline();
    await escalated(p, "clm_a", "ord_c0");
    await escalated(p, "clm_b", "ord_c1");
    await approve(p, "clm_a", ALICE, 600);
    await approve(p, "clm_b", BOB, 700);
    // 1300 EUR approved for cus_1 in two refunds, yet two automatic refunds (max_automatic_refunds) still pass; a
    // third is the one the limit stops.
    const claim = (amount_eur: number) => ({
      claim: {
        order_id: "ord_c2",
        amount_eur,
        category: "electronics",
        reason: "Laptop does not boot",
        customer_id: "cus_1",
      },
    });
    expect((await p.decide(claim(200), { claimId: "clm_x" })).record?.verdict).toBe("ACCEPT");
    expect((await p.decide(claim(200), { claimId: "clm_y" })).record?.verdict).toBe("ACCEPT");
    expect((await p.decide(claim(1), { claimId: "clm_z" })).record?.reason_code).toBe("CUSTOMER_LIMIT_EXCEEDED");
  });

  it("decides two approvals racing on two orders of the customer one after the other: one completes, the other waits", async () => {
    const p = pipeline();
    await escalated(p, "clm_a", "ord_c0");
    await escalated(p, "clm_b", "ord_c1");
    const raced = await Promise.all([approve(p, "clm_a", ALICE, 600), approve(p, "clm_b", ALICE, 600)]);
    expect(raced.map((r) => statusOf(r).status).sort()).toEqual(["APPROVED", "PENDING"]);
    const window = await p.deps.ledger.getCustomerWindow("cus_1");
    expect(window?.reservations.map((r) => r.cents)).toEqual([60_000]);
    const waiting = raced.findIndex((r) => statusOf(r).status === "PENDING");
    expect(statusOf(await approve(p, waiting === 0 ? "clm_a" : "clm_b", BOB))).toMatchObject({ status: "APPROVED" });
  });

  it("answers 409 APPROVALS_CHANGED after three tries while other approvals keep landing, and leaves nothing reserved", async () => {
    const p0 = pipeline();
    const base = p0.deps.ledger;
    let landed = 0;
    const ledger: RefundLedger = {
      ...base,
      async reserveCustomer(request) {
        // Before each of this approval's reservations, another reviewer's approval for the customer lands.
        if (request.approvals !== undefined)
          await base.reserveCustomer({
            ...request,
            reservation: { ...request.reservation, claim_id: `clm_other${landed++}`, approved_by: ["carol"] },
            approvals: undefined,
          });
        return base.reserveCustomer(request);
      },
    };
    const p = pipeline({ ledger });
    await escalated(p, "clm_a", "ord_c0");
    expect(await approve(p, "clm_a", ALICE, 600)).toMatchObject({ ok: false, status: 409, code: "APPROVALS_CHANGED" });
    expect(landed).toBe(3);
    expect((await p.deps.ledger.get("ord_c0"))?.refunded_cents ?? 0).toBe(0);
    const window = await p.deps.ledger.getCustomerWindow("cus_1");
    expect(window?.reservations.map((r) => r.claim_id)).toEqual(["clm_other0", "clm_other1", "clm_other2"]);
    expect((await p.deps.reviews.getReview("clm_a"))?.status).toBe("PENDING");
  });

  it("never records an interrupted approval on a stale customer count: the sweep's repair is refused APPROVALS_CHANGED like the request", async () => {
    const p = pipeline();
    await escalated(p, "clm_a", "ord_c0");
    await escalated(p, "clm_b", "ord_c1");
    // Alice's approval of clm_b (600, alone for cus_1: 600 ≤ 1000) is claimed, then the process dies before the window.
    const reserveCustomer = p.deps.ledger.reserveCustomer.bind(p.deps.ledger);
    let crash = true;
    p.deps.ledger.reserveCustomer = async (request) => {
      if (crash && request.reservation.claim_id === "clm_b") {
        crash = false;
        throw new Error("injected crash before the window");
      }
      return reserveCustomer(request);
    };
    await expect(approve(p, "clm_b", ALICE, 600)).rejects.toThrow(/injected crash/);
    expect((await p.deps.reviews.getReview("clm_b"))?.intent).toMatchObject({ customer_approvals: 0 });
    // Meanwhile alice approves 600 on clm_a alone: cus_1's window now holds one approval.
    expect(statusOf(await approve(p, "clm_a", ALICE, 600))).toMatchObject({ status: "APPROVED" });
    // Carried out as it stands, clm_b would make 1200 EUR approved by alice alone for cus_1: the repair is refused.
    await repairReviews(p.deps);
    expect((await p.deps.ledger.get("ord_c1"))?.refunded_cents ?? 0).toBe(0);
    expect(await p.deps.reviews.getReview("clm_b")).toMatchObject({ status: "PENDING" });
    expect(statusOf(await approve(p, "clm_b", ALICE, 600))).toMatchObject({ awaiting: "SECOND_APPROVAL" });
  });
});
