// The local stack's payment provider, read by the registry: the default, the provider's secrets as links and its
// settings as variables (the options over the environment), and its webhook only with its signing secret — never
// another provider's (simulated with STRIPE_WEBHOOK_SECRET set serves no Stripe route).
import { describe, expect, it } from "vitest";
import { localPayments } from "./payment-provider.ts";

describe("the local stack's payment provider", () => {
  it("is simulated when PAYMENT_PROVIDER is unset or empty: no secrets, no webhook, whatever Stripe's variables say", () => {
    const stripeVars = { STRIPE_API_KEY: "sk_x", STRIPE_WEBHOOK_SECRET: "whsec_x", STRIPE_API_BASE: "http://x" };
    for (const env of [{}, { PAYMENT_PROVIDER: "" }, { PAYMENT_PROVIDER: "simulated" }]) {
      expect(localPayments(undefined, { ...env, ...stripeVars })).toEqual({
        provider: "simulated",
        secrets: {},
        env: { PAYMENT_PROVIDER: "simulated" },
        webhook: false,
      });
    }
  });

  it("hands stripe its secrets by link and its settings as variables, its webhook on with the signing secret", () => {
    const env = { PAYMENT_PROVIDER: "stripe", STRIPE_API_KEY: "sk_env", STRIPE_WEBHOOK_SECRET: "whsec_env" };
    expect(localPayments(undefined, env)).toEqual({
      provider: "stripe",
      secrets: { StripeApiKey: "sk_env", StripeWebhookSecret: "whsec_env" },
      env: { PAYMENT_PROVIDER: "stripe" },
      webhook: true,
    });
    expect(
      localPayments(
        { provider: "stripe", env: { STRIPE_API_KEY: "sk_opt", STRIPE_API_BASE: "http://127.0.0.1:9" } },
        {
          STRIPE_API_KEY: "sk_env",
        },
      ),
    ).toEqual({
      provider: "stripe",
      secrets: { StripeApiKey: "sk_opt" },
      env: { PAYMENT_PROVIDER: "stripe", STRIPE_API_BASE: "http://127.0.0.1:9" },
      webhook: false,
    });
  });

  it("refuses a provider the registry does not know", () => {
    expect(() => localPayments({ provider: "paypal" }, {})).toThrow(
      'PAYMENT_PROVIDER must be one of simulated, stripe, got "paypal"',
    );
  });
});
