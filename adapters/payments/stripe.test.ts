// The Stripe adapter against a MOCK of Stripe's wire format (stripe-wire.test-kit.ts): no real Stripe can run
// here, so these tests show the adapter speaks the protocol the SDK speaks (form-encoded refunds, the bearer key,
// Idempotency-Key = execution id) and translates Stripe's answers; what only a real account can show is listed
// in docs/payments.md.
import Stripe from "stripe";
import { afterEach, describe, expect, it } from "vitest";
import { PaymentUnavailableError } from "../../pipeline/errors.ts";
import type { ProviderRefundRequest } from "../../pipeline/payments.ts";
import { createStripePaymentProvider, readStripeWebhook } from "./stripe.ts";
import { startStripeWireMock } from "./stripe-wire.test-kit.ts";
import type { StripeWireMock } from "./stripe-wire.test-kit.ts";

const KEY = "sk_test_mock_0123456789";
let mock: StripeWireMock | undefined;
afterEach(async () => {
  await mock?.close();
  mock = undefined;
});

const request = (paymentRef: string | undefined, executionId = "exe_1"): ProviderRefundRequest => ({
  executionId,
  claimId: "clm_1",
  orderId: "ord_1",
  paymentRef,
  amountMinor: 29999,
  currency: "EUR",
});

describe("the Stripe payment provider (against a mock of Stripe's wire format)", () => {
  it("refunds a payment intent in minor units with the execution id as Idempotency-Key and the claim in metadata", async () => {
    mock = await startStripeWireMock(KEY);
    const provider = createStripePaymentProvider({ apiKey: KEY, apiBase: mock.base, maxNetworkRetries: 0 });
    const result = await provider.refund(request("pi_123"));
    expect(result).toEqual({ status: "SETTLED", providerRef: "re_mock_1" });
    const sent = mock.requests[0]!;
    expect(sent.idempotencyKey).toBe("exe_1");
    expect(sent.form).toMatchObject({
      payment_intent: "pi_123",
      amount: "29999",
      "metadata[claim_id]": "clm_1",
      "metadata[execution_id]": "exe_1",
    });
    expect(sent.form.charge).toBeUndefined();
  });

  it("refunds a charge as `charge`", async () => {
    mock = await startStripeWireMock(KEY);
    const provider = createStripePaymentProvider({ apiKey: KEY, apiBase: mock.base, maxNetworkRetries: 0 });
    await provider.refund(request("ch_9"));
    expect(mock.requests[0]!.form).toMatchObject({ charge: "ch_9" });
    expect(mock.requests[0]!.form.payment_intent).toBeUndefined();
  });

  it("a repeated call with the same execution id gets Stripe's stored refund: one refund, never two", async () => {
    mock = await startStripeWireMock(KEY);
    const provider = createStripePaymentProvider({ apiKey: KEY, apiBase: mock.base, maxNetworkRetries: 0 });
    const first = await provider.refund(request("pi_123"));
    const again = await provider.refund(request("pi_123"));
    expect(again).toEqual(first);
    expect(mock.refunds).toHaveLength(1);
    expect(mock.requests).toHaveLength(2);
  });

  it("a pending refund is PENDING with its reference (the webhook settles it)", async () => {
    mock = await startStripeWireMock(KEY, { pi_slow: { kind: "pending" } });
    const provider = createStripePaymentProvider({ apiKey: KEY, apiBase: mock.base, maxNetworkRetries: 0 });
    expect(await provider.refund(request("pi_slow"))).toEqual({ status: "PENDING", providerRef: "re_mock_1" });
  });

  it("a declined card and an insufficient balance are FAILED with Stripe's reason", async () => {
    mock = await startStripeWireMock(KEY, {
      pi_card: { kind: "card_declined" },
      pi_bal: { kind: "balance_insufficient" },
    });
    const provider = createStripePaymentProvider({ apiKey: KEY, apiBase: mock.base, maxNetworkRetries: 0 });
    const card = await provider.refund(request("pi_card", "exe_a"));
    expect(card.status).toBe("FAILED");
    expect(card.failureReason).toMatch(/^expired_card: The card has expired/);
    const balance = await provider.refund(request("pi_bal", "exe_b"));
    expect(balance).toMatchObject({ status: "FAILED", failureReason: expect.stringMatching(/^balance_insufficient:/) });
  });

  it("a 5xx is retryable (PaymentUnavailableError), and the retry with the same key pays once", async () => {
    mock = await startStripeWireMock(KEY, { pi_flaky: { kind: "server_error", times: 1 } });
    const provider = createStripePaymentProvider({ apiKey: KEY, apiBase: mock.base, maxNetworkRetries: 0 });
    await expect(provider.refund(request("pi_flaky"))).rejects.toBeInstanceOf(PaymentUnavailableError);
    expect(await provider.refund(request("pi_flaky"))).toMatchObject({ status: "SETTLED" });
    expect(mock.refunds).toHaveLength(1);
    expect(mock.requests.map((r) => r.idempotencyKey)).toEqual(["exe_1", "exe_1"]);
  });

  it("an unreachable Stripe is retryable, and a wrong key is not a FAILED refund", async () => {
    const down = createStripePaymentProvider({ apiKey: KEY, apiBase: "http://127.0.0.1:9", maxNetworkRetries: 0 });
    await expect(down.refund(request("pi_1"))).rejects.toBeInstanceOf(PaymentUnavailableError);
    mock = await startStripeWireMock(KEY);
    const wrong = createStripePaymentProvider({ apiKey: "sk_test_wrong", apiBase: mock.base, maxNetworkRetries: 0 });
    await expect(wrong.refund(request("pi_1"))).rejects.toThrow(/STRIPE_API_KEY/);
  });

  it("a payment_ref that is neither pi_ nor ch_ is FAILED without calling Stripe", async () => {
    mock = await startStripeWireMock(KEY);
    const provider = createStripePaymentProvider({ apiKey: KEY, apiBase: mock.base, maxNetworkRetries: 0 });
    expect(await provider.refund(request("cus_1"))).toMatchObject({ status: "FAILED" });
    expect(mock.requests).toHaveLength(0);
  });
});

describe("Stripe webhooks, signed with the SDK", () => {
  const secret = "whsec_test_secret";
  const now = 1_800_000_000_000;
  const payload = (type: string, status: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      id: "evt_1",
      object: "event",
      type,
      created: now / 1000,
      data: {
        object: {
          id: "re_1",
          object: "refund",
          status,
          metadata: { claim_id: "clm_1", execution_id: "exe_1" },
          ...extra,
        },
      },
    });
  const sign = (body: string, key = secret, at = now) =>
    Stripe.webhooks.generateTestHeaderString({ payload: body, secret: key, timestamp: Math.floor(at / 1000) });

  it("a signed refund.updated is the provider's word on the execution", () => {
    const body = payload("refund.updated", "succeeded");
    expect(readStripeWebhook(body, sign(body), secret, now)).toEqual({
      ok: true,
      eventId: "evt_1",
      type: "refund.updated",
      update: { claim_id: "clm_1", execution_id: "exe_1", status: "SETTLED", provider_ref: "re_1" },
    });
  });

  it("refund.failed carries Stripe's failure reason", () => {
    const body = payload("refund.failed", "failed", { failure_reason: "expired_or_canceled_card" });
    const read = readStripeWebhook(body, sign(body), secret, now);
    expect(read).toMatchObject({ ok: true, update: { status: "FAILED", failure_reason: "expired_or_canceled_card" } });
  });

  it("refuses a wrong secret, a changed body, a missing header and a stale timestamp", () => {
    const body = payload("refund.updated", "succeeded");
    expect(readStripeWebhook(body, sign(body, "whsec_other"), secret, now).ok).toBe(false);
    expect(readStripeWebhook(body.replace("succeeded", "failed"), sign(body), secret, now).ok).toBe(false);
    expect(readStripeWebhook(body, undefined, secret, now).ok).toBe(false);
    expect(readStripeWebhook(body, sign(body, secret, now - 600_000), secret, now).ok).toBe(false);
  });

  it("refuses a timestamp more than 5 minutes in the future, as it refuses one more than 5 minutes old", () => {
    const body = payload("refund.updated", "succeeded");
    expect(readStripeWebhook(body, sign(body, secret, now + 86_400_000), secret, now)).toEqual({
      ok: false,
      message: "the Stripe signature's timestamp is 86400 s in the future (more than 300 s)",
    });
    expect(readStripeWebhook(body, sign(body, secret, now + 301_000), secret, now).ok).toBe(false);
    expect(readStripeWebhook(body, sign(body, secret, now + 300_000), secret, now).ok).toBe(true);
    expect(readStripeWebhook(body, sign(body, secret, now - 300_000), secret, now).ok).toBe(true);
    expect(readStripeWebhook(body, sign(body, secret, now - 301_000), secret, now).ok).toBe(false);
  });

  it("other events and refunds the app did not create are acknowledged without an update", () => {
    const other = JSON.stringify({ id: "evt_2", object: "event", type: "charge.succeeded", data: { object: {} } });
    expect(readStripeWebhook(other, sign(other), secret, now)).toEqual({
      ok: true,
      eventId: "evt_2",
      type: "charge.succeeded",
    });
    const foreign = payload("refund.updated", "succeeded", { metadata: {} });
    expect(readStripeWebhook(foreign, sign(foreign), secret, now)).not.toHaveProperty("update");
  });
});
