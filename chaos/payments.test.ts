// Chaos flows with a payment provider that fails, times out and settles late: the production refund executor,
// webhook path and RETRY / CLOSE reviews keep every money invariant, and each invariant is seen to fail — on a
// flow's observation with the damage done to it, and on whole flows over a deliberately broken provider double
// (one that loses the idempotency key, reports a paid refund failed, pays more than asked, or an executor port
// that records SETTLED without paying).
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import type { PipelineDeps } from "../pipeline/deps.ts";
import { chaosEnv, runChaosFlow } from "./flow.ts";
import type { FlowOptions } from "./flow.ts";
import { closeReleasesReservation } from "../core/kernel/settlement.ts";
import { checkFlowInvariants } from "./invariants.ts";
import type { FlowObservation } from "./invariants.ts";
import type { ProviderPayout } from "./payment-provider.ts";
import type { PaymentPlan } from "./plan.ts";
import { addToTally, createTally } from "./tally.ts";
import { orderTotalMajor } from "../core/kernel/order-view.ts";

const env = chaosEnv(readFileSync(new URL("../scenarios/config.yaml", import.meta.url), "utf8"), "config.yaml");

/** A provider that does everything wrong that a provider may: refuses, times out, settles late, webhooks twice. */
const HARSH: PaymentPlan = {
  fail: 0.4,
  pending: 0.5,
  lateFail: 0.4,
  maxSettleMs: 3_600_000,
  timeout: 0.4,
  timeoutAfterWork: 0.5,
  duplicateWebhook: 0.5,
  staleWebhook: 0.5,
  forgedWebhook: 0.3,
  noPaymentRef: 0,
  reviewer: { decide: 1, retry: 0.6, concurrent: 0.3, repeat: 0.3 },
};
const SEED = 11;
const FLOWS = 40;

const observations: FlowObservation[] = [];
const tally = createTally();
const failures: string[] = [];

beforeAll(async () => {
  for (let k = 0; k < FLOWS; k++) {
    const r = await runChaosFlow(env, SEED, k, { keep: true, payments: HARSH });
    addToTally(tally, r);
    if (r.violations.length > 0) failures.push(`flow ${k}: ${r.violations.slice(0, 3).join("; ")}`);
    else observations.push(r.observation!);
  }
}, 600_000);

/** A copy of the first clean flow that has what `want` asks for. */
function flowWith(want: (o: FlowObservation) => boolean): FlowObservation {
  const o = observations.find(want);
  if (!o) throw new Error("no flow of the harsh run has what this test needs");
  return structuredClone(o);
}
const violations = (o: FlowObservation) => checkFlowInvariants(o).violations.join("\n");
const settlements = (o: FlowObservation) => o.payments!.settlements;
/** The provider's book, writable (the tests damage it). */
const book = (o: FlowObservation) => o.payments!.book as unknown as { payouts: Writable<ProviderPayout>[] };
type Writable<T> = { -readonly [K in keyof T]: T[K] };

describe("chaos flows with a faulty payment provider", () => {
  it(`${FLOWS} flows keep every invariant, and the provider's faults all happened`, () => {
    expect(failures).toEqual([]);
    const p = tally.payments;
    expect({
      replays: p.replays > 0,
      timeoutsBefore: p.timeoutsBefore > 0,
      timeoutsAfter: p.timeoutsAfter > 0,
      refusedAtOnce: p.refusedAtOnce > 0,
      late: p.late > 0,
      lateFailed: p.lateFailed > 0,
      duplicateWebhooks: p.duplicateWebhooks > 0,
      staleWebhooks: p.staleWebhooks > 0,
      forgedWebhooks: p.forgedWebhooks > 0,
      retried: p.retried > 0,
      closed: p.closed > 0,
      payouts: p.payouts > 0,
    }).toEqual({
      replays: true,
      timeoutsBefore: true,
      timeoutsAfter: true,
      refusedAtOnce: true,
      late: true,
      lateFailed: true,
      duplicateWebhooks: true,
      staleWebhooks: true,
      forgedWebhooks: true,
      retried: true,
      closed: true,
      payouts: true,
    });
  });
});

describe("each money invariant of the payments can fail", () => {
  it("a failed refund is not money paid", () => {
    const o = flowWith((x) => settlements(x).some((s) => s.status === "FAILED"));
    const failed = settlements(o).find((s) => s.status === "FAILED")!;
    book(o).payouts.push({
      refundId: "re_x",
      key: failed.execution_id,
      claimId: failed.claim_id,
      orderId: failed.order_id,
      amountMinor: 1,
      at: 0,
    });
    expect(violations(o)).toMatch(
      /is recorded FAILED, but the provider paid 1 cents under it: a failed refund is money paid/,
    );
  });

  it("a settled refund is money paid", () => {
    const o = flowWith((x) => settlements(x).some((s) => s.status === "SETTLED"));
    const settled = settlements(o).find((s) => s.status === "SETTLED")!;
    book(o).payouts.splice(
      book(o).payouts.findIndex((p) => p.key === settled.execution_id),
      1,
    );
    expect(violations(o)).toMatch(/is recorded SETTLED, but the provider paid nothing under it/);
  });

  it("every settlement names its RefundExecuted", () => {
    const o = flowWith((x) => settlements(x).length > 0);
    settlements(o)[0]!.execution_id = "exe_nobody_authorised";
    expect(violations(o)).toMatch(/names exe_nobody_authorised, which no RefundExecuted announced/);
  });

  it("the provider pays at most once per claim and per idempotency key, never more than authorised", () => {
    const o = flowWith((x) => x.payments!.book.payouts.length > 0);
    const paid = book(o).payouts[0]!;
    book(o).payouts.push({ ...paid, refundId: "re_again" });
    expect(violations(o)).toMatch(new RegExp(`the provider paid 2 times under the idempotency key ${paid.key}`));
    expect(violations(o)).toMatch(new RegExp(`the provider paid claim ${paid.claimId} 2 times`));
    const more = flowWith((x) => x.payments!.book.payouts.length > 0);
    book(more).payouts[0]!.amountMinor += 1;
    expect(violations(more)).toMatch(/more than the \d+ authorised/);
  });

  it("a CLOSEd refund is not refunded and holds no reservation", () => {
    const o = flowWith((x) => settlements(x).some((s) => s.review?.status === "CLOSED"));
    const closed = settlements(o).find((s) => s.review?.status === "CLOSED")!;
    book(o).payouts.push({
      refundId: "re_x",
      key: "exe_other",
      claimId: closed.claim_id,
      orderId: closed.order_id,
      amountMinor: 100,
      at: 0,
    });
    expect(violations(o)).toMatch(/was CLOSED unpaid, but the provider paid it 100 cents/);
    // A CLOSE recorded as paid out of band keeps its reservation on purpose (issue 34): take one closed unpaid.
    const held = flowWith((x) => settlements(x).some((s) => closeReleasesReservation(s.review)));
    const c = settlements(held).find((s) => closeReleasesReservation(s.review))!;
    held.ledgers = [...held.ledgers, { entry: { order_id: c.order_id, claims: { [c.claim_id]: 100 } } as never }];
    expect(violations(held)).toMatch(/was CLOSED, but the ledger of \w+ still holds its reservation/);
    // One CLOSEd as paid out of band must keep it: the money left by bank transfer still counts against the order.
    const oob = flowWith((x) =>
      settlements(x).some((s) => s.review?.status === "CLOSED" && !closeReleasesReservation(s.review)),
    );
    const b = settlements(oob).find((s) => s.review?.status === "CLOSED" && !closeReleasesReservation(s.review))!;
    oob.ledgers = oob.ledgers.map(({ scope, entry }) => ({
      ...(scope ? { scope } : {}),
      entry: { ...entry, claims: Object.fromEntries(Object.entries(entry.claims).filter(([id]) => id !== b.claim_id)) },
    }));
    expect(violations(oob)).toMatch(/was CLOSED as paid out of band, but the ledger of \w+ does not hold it/);
    // The ledger records the CLOSEd claim released, so no repaired approval can reserve it again (issue 39).
    const forgot = flowWith((x) =>
      settlements(x).some((s) => closeReleasesReservation(s.review) && s.review?.performed),
    );
    const f = settlements(forgot).find((s) => closeReleasesReservation(s.review) && s.review?.performed)!;
    forgot.ledgers = forgot.ledgers.map(({ scope, entry }) => ({
      ...(scope ? { scope } : {}),
      entry: { ...entry, released: (entry.released ?? []).filter((c) => c !== f.claim_id) },
    }));
    expect(violations(forgot)).toMatch(/was CLOSED, but the ledger of \w+ does not record it released/);
  });

  it("a RETRY names a failed execution", () => {
    const o = flowWith((x) => settlements(x).some((s) => s.attempts.length > 0));
    const retried = settlements(o).find((s) => s.attempts.length > 0)!;
    retried.attempts[0]!.status = "SETTLED";
    expect(violations(o)).toMatch(/which its settlement does not record as a failed execution \(SETTLED\)/);
  });

  it("what the provider paid stays within the order and the automatic limit, and nothing is left PENDING", () => {
    const o = flowWith((x) => x.payments!.book.payouts.length > 0);
    const paid = book(o).payouts[0]!;
    const order = o.orders.find((x) => x.order_id === paid.orderId)!;
    book(o).payouts.push({
      ...paid,
      key: "exe_x",
      claimId: "clm_x",
      amountMinor: Math.round(orderTotalMajor(order) * 100),
    });
    expect(violations(o)).toMatch(new RegExp(`the provider paid \\d+ cents on order ${paid.orderId}, more than its`));
    const automatic = (x: FlowObservation) =>
      x.payments!.book.payouts.some((p) =>
        x.events.some(
          (e) =>
            e.detailType === "RefundExecuted" &&
            e.detail.execution_id === p.key &&
            e.detail.approved_by === undefined &&
            e.detail.retry_of === undefined,
        ),
      );
    const auto = flowWith(automatic);
    auto.limitEur = 0.01;
    expect(violations(auto)).toMatch(
      /the provider paid \d+ cents automatically on order \w+, more than the 1-cent limit/,
    );
    const customer = flowWith(automatic);
    const autoPaid = customer.payments!.book.payouts.find((p) =>
      customer.events.some(
        (e) =>
          e.detailType === "RefundExecuted" && e.detail.execution_id === p.key && e.detail.approved_by === undefined,
      ),
    )!;
    customer.orders.find((x) => x.order_id === autoPaid.orderId)!.customer_id = "cus_test";
    customer.customerLimits = { window_days: 30, max_automatic_refunds: 0, max_automatic_eur: 0 };
    expect(violations(customer)).toMatch(/the provider paid customer cus_test \d+ automatic refunds/);
    const pending = flowWith((x) => settlements(x).length > 0);
    settlements(pending)[0]!.status = "PENDING";
    expect(violations(pending)).toMatch(/is still PENDING after the flow drained/);
  });
});

/** The violations of flows 0..n-1 of the harsh run with `opts`, up to the first flow whose violations match `wanted`. */
async function broken(opts: FlowOptions, wanted: RegExp, n = 30): Promise<string> {
  const out: string[] = [];
  for (let k = 0; k < n && !wanted.test(out.join("\n")); k++)
    out.push(...(await runChaosFlow(env, SEED, k, { payments: HARSH, outage: null, ...opts })).violations);
  return out.join("\n");
}

describe("a broken provider or executor double is caught by whole flows", () => {
  it("a provider that ignores the idempotency key pays a claim twice", async () => {
    const wanted = /the provider paid claim clm_\w+ 2 times/;
    expect(await broken({ providerBugs: { ignoreIdempotencyKey: true } }, wanted)).toMatch(wanted);
  });

  it("a provider that reports a paid refund failed: a failed refund that is money paid", async () => {
    const wanted = /a failed refund is money paid/;
    expect(await broken({ providerBugs: { failAfterPaying: true } }, wanted)).toMatch(wanted);
  });

  it("a provider that pays more than asked", async () => {
    const wanted = /more than the \d+ authorised/;
    expect(await broken({ providerBugs: { overpay: true } }, wanted)).toMatch(wanted);
  });

  it("an executor port that records SETTLED without the provider paying", async () => {
    const wanted = /is recorded SETTLED, but the provider paid nothing under it/;
    const lying = (d: PipelineDeps): PipelineDeps => ({
      ...d,
      payments: {
        name: "stripe",
        needsPaymentRef: true,
        refund: async (r) => ({ status: "SETTLED", providerRef: `re_fake_${r.executionId}` }),
      },
    });
    expect(await broken({ mutate: lying }, wanted)).toMatch(wanted);
  });
});
