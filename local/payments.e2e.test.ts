// The refund executor and Stripe's webhook on the local stack: the bus delivers RefundExecuted (not a
// simulation's) to the executor, which pays through the provider and records the settlement; the webhook
// (signed with the SDK) settles a pending refund once, whatever order and however often Stripe sends it.
// Stripe is a MOCK of its wire format (adapters/payments/stripe-wire.test-kit.ts): no Stripe can run here.
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStripeWireMock } from "../adapters/payments/stripe-wire.test-kit.ts";
import type { StripeWireMock } from "../adapters/payments/stripe-wire.test-kit.ts";
import { apiEvent, startTestStack, TEST_NOW } from "./testing/stack-fixture.ts";
import type { LocalStack } from "./stack.ts";

const KEY = "sk_test_local_stack_0123456789";
const SECRET = "whsec_local_stack_test";

async function submit(stack: LocalStack, orderId: string, amount: number, simulationId?: string) {
  const out = await stack.runtime.submit({
    claim: { order_id: orderId, amount_eur: amount, category: "electronics", reason: "Screen is dead on arrival" },
    ...(simulationId ? { simulation_id: simulationId } : {}),
  });
  if (!out.ok) throw new Error(`the claim was refused: ${out.message}`);
  const record = await stack.runtime.settle(out.claimId);
  await stack.drained();
  return record!;
}

async function view(stack: LocalStack, claimId: string) {
  const res = await stack.handlers.intakeApi(apiEvent("GET", `/claims/${claimId}`));
  return JSON.parse(String((res as { body: string }).body)) as Record<string, unknown>;
}

describe("the simulated provider (the local default)", () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startTestStack({ payments: { provider: "simulated" } });
  }, 120_000);
  afterAll(async () => stack?.stop());

  it("settles an ACCEPT's refund at once and shows it on the claim", async () => {
    const record = await submit(stack, "ord_001", 299.99);
    expect(record.verdict).toBe("ACCEPT");
    expect((await view(stack, record.claim_id)).refund).toEqual({
      status: "SETTLED",
      provider_ref: expect.stringMatching(/^sim_re_/),
    });
  }, 120_000);

  it("never pays a simulation's refund", async () => {
    const record = await submit(stack, "ord_006", 299.99, "sim_payments_test");
    expect(record.verdict).toBe("ACCEPT");
    expect(await stack.deps.settlements?.get(record.claim_id)).toBeUndefined();
    expect((await view(stack, record.claim_id)).refund).toBeUndefined();
  }, 120_000);
});

describe("Stripe (a mock of its wire format) and its webhook", () => {
  let stack: LocalStack;
  let mock: StripeWireMock;
  beforeAll(async () => {
    mock = await startStripeWireMock(KEY, { pi_later: { kind: "pending" }, pi_expired: { kind: "card_declined" } });
    const base = await startTestStack();
    const orders = base.config.orders.map((o) =>
      o.order_id === "ord_001"
        ? { ...o, payment_ref: "pi_later" }
        : o.order_id === "ord_006"
          ? { ...o, payment_ref: "pi_expired" }
          : o,
    );
    await base.stop();
    stack = await startTestStack({
      orders,
      payments: {
        provider: "stripe",
        env: { STRIPE_API_KEY: KEY, STRIPE_API_BASE: mock.base, STRIPE_WEBHOOK_SECRET: SECRET },
      },
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await mock?.close();
  });

  const webhook = (body: string, signature?: string) =>
    stack.handlers.paymentWebhook!(
      apiEvent("POST", "/webhooks/stripe", {
        body,
        headers: { "content-type": "application/json", ...(signature ? { "stripe-signature": signature } : {}) },
      }),
    ) as Promise<{ statusCode: number; body: string }>;
  const event = (type: string, refund: Record<string, unknown>) =>
    JSON.stringify({ id: `evt_${type}_${String(refund.status)}`, object: "event", type, data: { object: refund } });
  const sign = (body: string) =>
    Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: Math.floor(TEST_NOW / 1000) });

  let claimId = "";
  it("pays a pending refund with the execution id as Idempotency-Key; the claim shows PENDING", async () => {
    const record = await submit(stack, "ord_001", 299.99);
    claimId = record.claim_id;
    expect(mock.refunds).toHaveLength(1);
    expect(mock.requests[0]!.form).toMatchObject({ payment_intent: "pi_later", amount: "29999" });
    const settlement = await stack.deps.settlements!.get(claimId);
    expect(mock.requests[0]!.idempotencyKey).toBe(settlement!.execution_id);
    expect((await view(stack, claimId)).refund).toEqual({ status: "PENDING", provider_ref: "re_mock_1" });
  }, 120_000);

  it("refuses an unsigned or wrongly signed webhook with 400 and changes nothing", async () => {
    const before = await stack.deps.settlements!.get(claimId);
    const body = event("refund.updated", {
      id: "re_mock_1",
      status: "succeeded",
      metadata: { claim_id: claimId, execution_id: before!.execution_id },
    });
    expect((await webhook(body)).statusCode).toBe(400);
    const forged = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: "whsec_someone_else" });
    expect((await webhook(body, forged)).statusCode).toBe(400);
    expect(await stack.deps.settlements!.get(claimId)).toEqual(before);
  });

  it("settles on a signed refund.updated once: the same event twice and a late pending change nothing", async () => {
    const executionId = (await stack.deps.settlements!.get(claimId))!.execution_id;
    const metadata = { claim_id: claimId, execution_id: executionId };
    const succeeded = event("refund.updated", { id: "re_mock_1", status: "succeeded", metadata });
    expect(JSON.parse((await webhook(succeeded, sign(succeeded))).body)).toMatchObject({ status: "SETTLED" });
    const after = await stack.deps.settlements!.get(claimId);
    await webhook(succeeded, sign(succeeded));
    const pending = event("refund.updated", { id: "re_mock_1", status: "pending", metadata });
    expect((await webhook(pending, sign(pending))).statusCode).toBe(200);
    expect(await stack.deps.settlements!.get(claimId)).toEqual(after);
    expect((await view(stack, claimId)).refund).toEqual({ status: "SETTLED", provider_ref: "re_mock_1" });
    const settledAudit = (await stack.deps.audit.byDfid(`dfid_pay_${claimId}`)).filter(
      (e) => e.event_type === "REFUND_SETTLED",
    );
    expect(settledAudit).toHaveLength(1);
  });

  it("a declined refund is FAILED with Stripe's reason and opens its own review on the claim", async () => {
    const record = await submit(stack, "ord_006", 299.99);
    const refund = (await view(stack, record.claim_id)).refund as Record<string, unknown>;
    expect(refund).toMatchObject({
      status: "FAILED",
      failure_reason: expect.stringMatching(/^expired_card/),
      review: { origin: "REFUND_FAILED", status: "PENDING", reason_code: "REFUND_FAILED" },
    });
  }, 120_000);
});
