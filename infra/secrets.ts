// Secrets, set per stage with `npx sst secret set <Name> <value> --stage <stage>`; a missing one stops the deploy.
import { orderSourceLinks } from "../app/order-source.ts";
import { paymentProvider, secretsOf } from "../app/payment-provider.ts";
import { settings } from "./settings.ts";

/** The API key of the OpenAI-compatible LLM endpoint (any non-empty value for servers without auth, e.g. Ollama). */
export const llmApiKey = new sst.Secret("LlmApiKey");

/** The bearer token the HTTP API's authorizer accepts (locally CLAIMS_API_TOKEN). */
export const apiToken = new sst.Secret("ApiToken");

// No ReviewerToken on AWS: reviewers present a JWT of their OpenID Connect issuer (infra/reviewers.ts); the
// shared reviewer token (CLAIMS_REVIEWER_TOKEN) is the local demo's.

/**
 * The secrets of the configured order source (app/order-sources/: with ORDER_SOURCE=http the shop's order API
 * token, OrderApiToken, locally ORDER_API_TOKEN), linked to the functions that read orders only
 * (app/order-source.ts ORDER_READERS); none with the table.
 */
export const orderSourceSecrets: Readonly<Record<string, unknown>> = Object.fromEntries(
  orderSourceLinks(settings.orders.source).map((link) => [link, new sst.Secret(link)]),
);

/**
 * The secrets of the configured payment provider (app/payment-providers/: with PAYMENT_PROVIDER=stripe its API key
 * StripeApiKey for the refund executor and its webhook's signing secret StripeWebhookSecret); none without a
 * provider or with `simulated`.
 */
export const paymentProviderSecrets: Readonly<Record<string, unknown>> = Object.fromEntries(
  settings.paymentProvider === undefined
    ? []
    : secretsOf(paymentProvider(settings.paymentProvider)).map(({ secret }) => [
        secret.link,
        new sst.Secret(secret.link),
      ]),
);
