// Store credit through Stripe (docs/payments.md#store-credit) against a MOCK of Stripe's wire format
// (stripe-wire.test-kit.ts): the payment's customer is read, then a customer balance transaction with a negative
// amount in the payment's currency is created under the execution id as Idempotency-Key.
import { afterEach, describe, expect, it } from "vitest";
import type { ProviderRefundRequest } from "../../pipeline/payments.ts";
import { createStripePaymentProvider } from "./stripe.ts";
import { startStripeWireMock } from "./stripe-wire.test-kit.ts";
import type { StripeWireMock } from "./stripe-wire.test-kit.ts";

const KEY = "sk_test_mock_credit";
let mock: StripeWireMock | undefined;
afterEach(async () => {
  await mock?.close();
  mock = undefined;
});

const request = (paymentRef: string | undefined, executionId = "exe_c1"): ProviderRefundRequest => ({
  executionId,
  claimId: "clm_1",
  orderId: "ord_1",
  paymentRef,
  amountMinor: 8800,
  currency: "EUR",
});

const provider = (m: StripeWireMock) =>
  createStripePaymentProvider({ apiKey: KEY, apiBase: m.base, maxNetworkRetries: 0 });

describe("store credit through Stripe (against a mock of Stripe's wire format)", () => {
  it("credits the payment intent's customer a negative balance transaction in its currency, keyed by the execution", async () => {
    mock = await startStripeWireMock(KEY);
    const result = await provider(mock).issueCredit!(request("pi_123"));
    expect(result).toEqual({ status: "SETTLED", providerRef: "cbtxn_mock_1" });
    const credit = mock.requests.find((r) => r.path.endsWith("/balance_transactions"))!;
    expect(credit.path).toBe("/v1/customers/cus_mock_pi_123/balance_transactions");
    expect(credit.idempotencyKey).toBe("exe_c1");
    expect(credit.form).toMatchObject({
      amount: "-8800",
      currency: "eur",
      "metadata[claim_id]": "clm_1",
      "metadata[execution_id]": "exe_c1",
    });
    expect(mock.refunds).toHaveLength(0);
  });

  it("reads a charge's customer the same way", async () => {
    mock = await startStripeWireMock(KEY);
    await provider(mock).issueCredit!(request("ch_9"));
    expect(mock.requests.map((r) => r.path)).toEqual([
      "/v1/charges/ch_9",
      "/v1/customers/cus_mock_ch_9/balance_transactions",
    ]);
  });

  it("a repeated call under the same execution credits once (Stripe replays the stored transaction)", async () => {
    mock = await startStripeWireMock(KEY);
    const first = await provider(mock).issueCredit!(request("pi_123"));
    const again = await provider(mock).issueCredit!(request("pi_123"));
    expect(again).toEqual(first);
    expect(mock.credits).toHaveLength(1);
  });

  it("a payment without a customer, or a payment_ref that is no payment, is FAILED with the reason and credits nothing", async () => {
    mock = await startStripeWireMock(KEY);
    expect(await provider(mock).issueCredit!(request("pi_guest_1"))).toEqual({
      status: "FAILED",
      failureReason: "payment pi_guest_1 of order ord_1 has no Stripe customer to credit",
    });
    expect(await provider(mock).issueCredit!(request("sub_1"))).toMatchObject({
      status: "FAILED",
      failureReason: expect.stringMatching(/neither a payment intent/),
    });
    expect(mock.credits).toHaveLength(0);
  });
});
