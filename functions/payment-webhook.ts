// Stripe's webhook endpoint (API Gateway HTTP API, payload 2.0): POST /webhooks/stripe, open at the gateway and
// verified here with Stripe's signature (Resource.StripeWebhookSecret) — its own credential, which neither the
// intake nor the reviewer token opens.
import { productionDeps } from "./composition/compose.ts";
import type { DepsSource } from "./composition/compose.ts";
import { createApiHandler } from "./http/http.ts";
import type { RouteHandler, RoutesOf } from "./http/http.ts";
import { createLogger } from "./observability/logger.ts";
import type { HandlerLogger } from "./observability/logger.ts";
import { measured } from "./observability/metrics.ts";
import type { HandlerMetrics } from "./observability/metrics.ts";
import { postStripeWebhook } from "./http/webhook-routes.ts";

/** The handler of every paymentWebhook route of app/manifest.ts. */
const HANDLERS: Record<RoutesOf<"paymentWebhook">, RouteHandler> = {
  "POST /webhooks/stripe": postStripeWebhook,
};

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
