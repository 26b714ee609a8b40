// The payment-provider registry as the composition root reads it: every declared provider has its adapter, built
// from exactly its declared secrets (by their links) and settings; the webhook route answers only for the
// configured provider, verified with that provider's signing secret.
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAYMENT_PROVIDERS, paymentProvider } from "../../app/payment-provider.ts";
import { frozenClock } from "../../core/crew/index.ts";
import { startStripeWireMock } from "../../adapters/payments/stripe-wire.test-kit.ts";
import type { StripeWireMock } from "../../adapters/payments/stripe-wire.test-kit.ts";
import { apiEvent } from "../../local/testing/stack-fixture.ts";
import { createPaymentWebhookHandler } from "../payment-webhook.ts";
import { composeDeps } from "./compose.ts";
import { ConfigLoadError } from "./errors.ts";
import { PAYMENT_ADAPTERS } from "./payment-providers.ts";
import { paymentProviderFrom, webhookSecretFrom } from "./payments.ts";
import { linkedResources } from "./resources.ts";

const KEY = "sk_test_registry_0123456789";
const SECRET = "whsec_registry_test";
const NOW = Date.parse("2026-06-01T12:00:00Z");

/** Links that hold `values` (`Resource.<name>.value`) and refuse every other name, counting the reads. */
function links(values: Record<string, string>) {
  const read: string[] = [];
  const resources = linkedResources((name) => {
    read.push(name);
    if (!(name in values)) throw new Error(`"${name}" is not linked`);
    return { value: values[name] };
  });
  return { resources, read };
}

describe("every provider of the registry has its adapter", () => {
  it.each(PAYMENT_PROVIDERS.map((p) => [p.name, p] as const))(
    "%s: the adapter of that name, verifying webhooks exactly when the provider declares a route",
    (name, declared) => {
      const adapter = PAYMENT_ADAPTERS[name];
      expect(adapter.name).toBe(name);
      expect("readWebhook" in adapter).toBe("webhook" in declared);
    },
  );
});

describe("the provider PAYMENT_PROVIDER names, built from its declared secrets and settings", () => {
  let mock: StripeWireMock;
  beforeAll(async () => {
    mock = await startStripeWireMock(KEY);
  });
  afterAll(async () => mock?.close());

  const request = {
    executionId: "exe_registry_1",
    claimId: "clm_1",
    orderId: "ord_1",
    paymentRef: "pi_registry",
    amountMinor: 1234,
    currency: "EUR",
  };

  it("simulated (the default when unset or empty) reads no link and settles at once", async () => {
    for (const env of [{}, { PAYMENT_PROVIDER: "" }, { PAYMENT_PROVIDER: "simulated" }]) {
      const { resources, read } = links({});
      const port = paymentProviderFrom(env, resources);
      expect(port).toMatchObject({ name: "simulated", needsPaymentRef: false });
      expect(await port.refund(request)).toEqual({ status: "SETTLED", providerRef: "sim_re_exe_registry_1" });
      expect(read).toEqual([]);
    }
  });

  it("stripe pays with the key of its StripeApiKey link at STRIPE_API_BASE, and never reads the webhook's secret", async () => {
    const { resources, read } = links({ StripeApiKey: KEY, StripeWebhookSecret: SECRET });
    const port = paymentProviderFrom({ PAYMENT_PROVIDER: "stripe", STRIPE_API_BASE: mock.base }, resources);
    expect(port).toMatchObject({ name: "stripe", needsPaymentRef: true });
    const answer = await port.refund(request);
    expect(answer.status).toBe("SETTLED");
    expect(mock.requests.at(-1)).toMatchObject({
      auth: `Bearer ${KEY}`,
      idempotencyKey: "exe_registry_1",
      form: { payment_intent: "pi_registry", amount: "1234" },
    });
    expect(read).toEqual([paymentProvider("stripe").secrets.apiKey.link]);
  });

  it("refuses a provider the registry does not know, naming the known ones", () => {
    expect(() => paymentProviderFrom({ PAYMENT_PROVIDER: "paypal" }, links({}).resources)).toThrow(ConfigLoadError);
    expect(() => paymentProviderFrom({ PAYMENT_PROVIDER: "paypal" }, links({}).resources)).toThrow(
      `PAYMENT_PROVIDER must be one of ${PAYMENT_PROVIDERS.map((p) => p.name).join(", ")}, got "paypal"`,
    );
    expect(PAYMENT_PROVIDERS.map((p) => p.name).slice(0, 2)).toEqual(["simulated", "stripe"]);
  });

  it("gives a webhook's signing secret only for the configured provider that has a webhook", () => {
    const { resources } = links({ StripeWebhookSecret: SECRET });
    expect(webhookSecretFrom({ PAYMENT_PROVIDER: "stripe" }, resources)("stripe")).toBe(SECRET);
    expect(webhookSecretFrom({ PAYMENT_PROVIDER: "simulated" }, resources)("stripe")).toBeUndefined();
    expect(webhookSecretFrom({}, resources)("stripe")).toBeUndefined();
    expect(webhookSecretFrom({ PAYMENT_PROVIDER: "simulated" }, resources)("simulated")).toBeUndefined();
  });
});

describe("a provider's webhook route", () => {
  const body = JSON.stringify({ id: "evt_1", object: "event", type: "charge.succeeded", data: { object: {} } });
  const signed = Stripe.webhooks.generateTestHeaderString({
    payload: body,
    secret: SECRET,
    timestamp: Math.floor(NOW / 1000),
  });
  const post = (env: Record<string, string | undefined>, headers: Record<string, string>) => {
    const deps = composeDeps({
      env,
      resources: links({ StripeWebhookSecret: SECRET }).resources,
      clock: frozenClock(NOW),
      policy: () => {
        throw new Error("the webhook reads no policy");
      },
    });
    const handler = createPaymentWebhookHandler(() => deps);
    return handler(apiEvent("POST", "/webhooks/stripe", { body, headers }));
  };

  it("verifies the configured provider's signature: a signed event is acknowledged, an unsigned one is 400", async () => {
    const ok = await post({ PAYMENT_PROVIDER: "stripe" }, { "stripe-signature": signed });
    expect(ok.statusCode).toBe(200);
    expect(JSON.parse(ok.body ?? "")).toEqual({ received: true, recorded: false });
    const unsigned = await post({ PAYMENT_PROVIDER: "stripe" }, {});
    expect(unsigned.statusCode).toBe(400);
    expect(JSON.parse(unsigned.body ?? "").error.code).toBe("INVALID_SIGNATURE");
  });

  it("is 404 when another provider is configured, even signed with a secret it could read", async () => {
    for (const env of [{ PAYMENT_PROVIDER: "simulated" }, {}]) {
      const res = await post(env, { "stripe-signature": signed });
      expect(res.statusCode).toBe(404);
      expect(JSON.parse(res.body ?? "").error.code).toBe("NOT_FOUND");
    }
  });
});
