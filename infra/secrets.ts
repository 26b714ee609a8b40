// Secrets, set per stage with `npx sst secret set <Name> <value> --stage <stage>`; a missing one stops the deploy.
import { settings } from "./settings.ts";

/** The API key of the OpenAI-compatible LLM endpoint (any non-empty value for servers without auth, e.g. Ollama). */
export const llmApiKey = new sst.Secret("LlmApiKey");

/** The bearer token the HTTP API's authorizer accepts (locally CLAIMS_API_TOKEN). */
export const apiToken = new sst.Secret("ApiToken");

// No ReviewerToken on AWS: reviewers present a JWT of their OpenID Connect issuer (infra/reviewers.ts); the
// shared reviewer token (CLAIMS_REVIEWER_TOKEN) is the local demo's.

/**
 * The bearer token of the shop's order API (locally ORDER_API_TOKEN): only with ORDER_SOURCE=http at deploy, and then
 * linked to the functions that read orders only (app/order-source.ts ORDER_READERS).
 */
export const orderApiToken = settings.orders.source === "http" ? new sst.Secret("OrderApiToken") : undefined;
/** Stripe's secret API key (sk_…), for the refund executor: only with PAYMENT_PROVIDER=stripe. */
export const stripeApiKey = settings.paymentProvider === "stripe" ? new sst.Secret("StripeApiKey") : undefined;

/** The signing secret (whsec_…) of the Stripe webhook endpoint: only with PAYMENT_PROVIDER=stripe. */
export const stripeWebhookSecret =
  settings.paymentProvider === "stripe" ? new sst.Secret("StripeWebhookSecret") : undefined;
