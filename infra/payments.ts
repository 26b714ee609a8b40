// The refund executor and Stripe's webhook, deployed only when the operator sets PAYMENT_PROVIDER (stripe or
// simulated) at deploy; without it RefundExecuted is the end and paying is the consumer's job. The executor
// consumes its own queue, fed by its own rule (app/manifest.ts PAYMENT_RULE: RefundExecuted that is not a
// simulation's), with a DLQ and alarms like every other consumer (infra/monitoring.ts); the webhook function
// serves POST /webhooks/stripe (infra/api.ts) and checks Stripe's signature itself.
import { deliverRule } from "./bus.ts";
import { FUNCTIONS, PAYMENT_RULE, PAYMENTS_QUEUE } from "../app/manifest.ts";
import { functionArgs } from "./lambda.ts";
import { settings } from "./settings.ts";

/** Visibility timeout of the executor's queue: 6x the executor's timeout, as every work queue. */
const VISIBILITY_SECONDS = 6 * FUNCTIONS.refundExecutor.timeoutSeconds;

const provider = settings.paymentProvider;

/** The executor's queue with its DLQ, fed by the payments rule; undefined without PAYMENT_PROVIDER. */
export const paymentsRule = provider
  ? deliverRule(PAYMENT_RULE.name, "Payments", PAYMENT_RULE.pattern, `${VISIBILITY_SECONDS} seconds`)
  : undefined;

/** The refund executor, subscribed with partial batch responses and a concurrency cap. */
export const refundExecutor = paymentsRule
  ? paymentsRule.queue.subscribe(functionArgs("refundExecutor", { environment: { PAYMENT_PROVIDER: provider! } }), {
      batch: { size: PAYMENTS_QUEUE.batchSize, partialResponses: true },
      transform: { eventSourceMapping: { scalingConfig: { maximumConcurrency: PAYMENTS_QUEUE.maxConcurrency } } },
    })
  : undefined;

/** The function behind POST /webhooks/stripe. */
export const paymentWebhook = provider
  ? new sst.aws.Function(
      "PaymentWebhook",
      functionArgs("paymentWebhook", { environment: { PAYMENT_PROVIDER: provider } }),
    )
  : undefined;
