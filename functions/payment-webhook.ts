// The payment provider's webhook endpoint (API Gateway HTTP API, payload 2.0): the configured provider's webhook
// route (app/payment-providers/; Stripe's POST /webhooks/stripe), open at the gateway and verified here with the
// provider's signature (its signing secret by link, Resource.StripeWebhookSecret) — its own credential, which
// neither the intake nor the reviewer token opens.
import { WEBHOOK_ROUTES } from "../app/manifest.ts";
import { productionDeps } from "./composition/compose.ts";
import type { DepsSource } from "./composition/compose.ts";
import { createApiHandler } from "./http/http.ts";
import type { RouteHandler, RoutesOf } from "./http/http.ts";
import { createLogger } from "./observability/logger.ts";
import type { HandlerLogger } from "./observability/logger.ts";
import { measured } from "./observability/metrics.ts";
import type { HandlerMetrics } from "./observability/metrics.ts";
import { paymentWebhookRoute } from "./http/webhook-routes.ts";

/** The handler of every paymentWebhook route of app/manifest.ts: one per provider with a webhook. */
const HANDLERS = Object.fromEntries(
  Object.entries(WEBHOOK_ROUTES).map(([key, route]) => [key, paymentWebhookRoute(route.provider)]),
) as Record<RoutesOf<"paymentWebhook">, RouteHandler>;

/** The webhook handler over `getDeps`. */
export function createPaymentWebhookHandler(
  getDeps: DepsSource,
  options: { logger?: HandlerLogger; metrics?: HandlerMetrics } = {},
) {
  return measured("paymentWebhook", getDeps, options.metrics, (deps, metrics) =>
    createApiHandler(HANDLERS, deps, options.logger ?? createLogger("claims-payment-webhook"), metrics),
  );
}

/** The deployed handler (infra/payments.ts: PaymentWebhook). */
export const handler = createPaymentWebhookHandler(productionDeps);
