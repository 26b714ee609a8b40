// The refund executor and the payment provider's webhook, deployed only when the operator sets PAYMENT_PROVIDER (a
// provider of app/payment-provider.ts: stripe or simulated) at deploy; without it RefundExecuted is the end and
// paying is the consumer's job. The executor consumes its own queue, fed by its own rule (app/manifest.ts
// PAYMENT_RULE: RefundExecuted that is not a simulation's), with a DLQ and alarms like every other consumer
// (infra/monitoring.ts); the webhook function exists only for a provider that has a webhook (stripe; not
// simulated), serves its route (infra/api.ts: POST /webhooks/stripe) and checks the provider's signature itself.
import { deliverRule } from "./bus.ts";
import { FUNCTIONS, PAYMENT_RULE, PAYMENTS_QUEUE } from "../app/manifest.ts";
import { paymentProvider } from "../app/payment-provider.ts";
import type { PaymentProviderModule } from "../app/payment-provider.ts";
import { functionArgs } from "./lambda.ts";
import { settings } from "./settings.ts";

/** Visibility timeout of the executor's queue: 6x the executor's timeout, as every work queue. */
const VISIBILITY_SECONDS = 6 * FUNCTIONS.refundExecutor.timeoutSeconds;

const provider: PaymentProviderModule | undefined =
  settings.paymentProvider === undefined ? undefined : paymentProvider(settings.paymentProvider);
/** PAYMENT_PROVIDER and the provider's deployed settings, for both payment functions. */
const environment = settings.paymentEnvironment ?? {};

/** The executor's queue with its DLQ, fed by the payments rule; undefined without PAYMENT_PROVIDER. */
export const paymentsRule = provider
  ? deliverRule(PAYMENT_RULE.name, "Payments", PAYMENT_RULE.pattern, `${VISIBILITY_SECONDS} seconds`)
  : undefined;

/** The refund executor, subscribed with partial batch responses and a concurrency cap. */
export const refundExecutor = paymentsRule
  ? paymentsRule.queue.subscribe(functionArgs("refundExecutor", { environment }), {
      batch: { size: PAYMENTS_QUEUE.batchSize, partialResponses: true },
      transform: { eventSourceMapping: { scalingConfig: { maximumConcurrency: PAYMENTS_QUEUE.maxConcurrency } } },
    })
  : undefined;

/** The provider's webhook (its path, and the stack output giving its URL); undefined without one. */
export const webhook = provider && "webhook" in provider ? provider.webhook : undefined;

/** The function behind the provider's webhook route; undefined without a provider that has one. */
export const paymentWebhook = webhook
  ? new sst.aws.Function("PaymentWebhook", functionArgs("paymentWebhook", { environment }))
  : undefined;
