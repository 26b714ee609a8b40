// Stripe (docs/payments.md): refunds through the official `stripe` SDK (adapters/payments/stripe.ts), its secret
// API key for the refund executor, and its refund webhooks at POST /webhooks/stripe signed with the endpoint's
// signing secret (its own credential: neither the intake nor the reviewer token opens the route).
import * as z from "zod";
import type { PaymentProviderDeclaration } from "./declaration.ts";

export const stripe = {
  name: "stripe",
  description: "a refund through the official `stripe` SDK against the order's `payment_ref`",
  secrets: {
    apiKey: {
      link: "StripeApiKey",
      env: "STRIPE_API_KEY",
      readBy: "refundExecutor",
      description: "the key refunds are paid with",
    },
    webhookSecret: {
      link: "StripeWebhookSecret",
      env: "STRIPE_WEBHOOK_SECRET",
      readBy: "paymentWebhook",
      description: "the webhook endpoint's signing secret",
    },
  },
  settings: {
    apiBase: { env: "STRIPE_API_BASE", description: "another endpoint for Stripe's API, for tests", deployed: false },
  },
  webhook: {
    path: "/webhooks/stripe",
    secret: "webhookSecret",
    output: "stripeWebhook",
    doc: {
      summary: "Stripe's refund webhooks",
      description:
        "Served only with PAYMENT_PROVIDER=stripe (docs/payments.md). No bearer token: the `Stripe-Signature` header is verified with the endpoint's signing secret (STRIPE_WEBHOOK_SECRET) over the raw body; an unverified delivery changes nothing. " +
        "`refund.updated` and `refund.failed` of refunds this app created settle or fail the claim's refund, once: the same event twice, or a late `pending` after `succeeded`, changes nothing. Other events are acknowledged.",
      signatureHeader: { name: "Stripe-Signature", description: "Stripe's signature header (t=…,v1=…)." },
      body: {
        description: "A Stripe event, as Stripe sends it.",
        schema: z
          .object({ id: z.string(), type: z.string(), data: z.object({ object: z.record(z.string(), z.unknown()) }) })
          .loose(),
      },
    },
  },
} as const satisfies PaymentProviderDeclaration;
