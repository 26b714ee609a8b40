// Refund executor (SQS, fed by the payments rule: RefundExecuted that is not a simulation's): pays each authorised
// refund once through the payment provider (PAYMENT_PROVIDER) and records the settlement, announcing
// RefundSettled / RefundFailed (pipeline: payRefund). A provider outage is retried with the same idempotency key,
// then the DLQ; a redelivery pays nothing twice.
import { openingSqsHandler } from "../adapters/vault/sealed-table.ts";
import * as z from "zod";
import { KERNEL_SOURCE, RefundExecutedDetailSchema } from "../core/kernel/events.ts";
import { payRefund, PaymentUnavailableError } from "../pipeline/payments.ts";
import { productionDeps, productionVault } from "./composition/compose.ts";
import type { DepsSource } from "./composition/compose.ts";
import { RetryLaterError } from "./consumers/errors.ts";
import { createLogger } from "./observability/logger.ts";
import type { HandlerLogger } from "./observability/logger.ts";
import { measured } from "./observability/metrics.ts";
import type { HandlerMetrics } from "./observability/metrics.ts";
import { paymentDeps } from "./composition/payments.ts";
import { sqsConsumer } from "./consumers/sqs-consumer.ts";

/** The EventBridge envelope the rule's target puts on the queue, carrying one RefundExecuted. */
export const RefundExecutedEnvelopeSchema = z.looseObject({
  source: z.literal(KERNEL_SOURCE),
  "detail-type": z.literal("RefundExecuted"),
  detail: RefundExecutedDetailSchema,
});

/** The executor over `getDeps`; the logged outcome is the settlement status (never customer text). */
export function createRefundExecutorHandler(
  getDeps: DepsSource,
  options: { logger?: HandlerLogger; metrics?: HandlerMetrics } = {},
) {
  return measured("refundExecutor", getDeps, options.metrics, (deps, metrics) =>
    sqsConsumer(
      {
        schema: RefundExecutedEnvelopeSchema,
        handle: async (envelope) => {
          try {
            return `${envelope.detail.execution_id}: ${await payRefund(paymentDeps(await deps()), envelope.detail)}`;
          } catch (error) {
            if (error instanceof PaymentUnavailableError) throw new RetryLaterError(error.message);
            throw error;
          }
        },
      },
      options.logger ?? createLogger("claims-refund-executor"),
      undefined,
      { metrics, consumer: "refundExecutor" },
    ),
  );
}

/** The deployed handler (infra/payments.ts: refundExecutor on PaymentsQueue). */
// Lambda hands it the bodies as they were sent, sealed: it opens them with its vault (as the local stack does).
export const handler = openingSqsHandler(createRefundExecutorHandler(productionDeps), productionVault);
