// Decision kernel (SQS proposals): decides each proposal once per idempotency key from the stored claim,
// reserves an ACCEPT's refund before announcing it, publishes the final verdict (pipeline: handleProposal).
// A redelivery repairs whatever step a crash interrupted and decides nothing twice. An order source that cannot
// answer makes the message retry (RetryLaterError) until the claim's wait is over or this is the queue's last
// receive: then the claim ends NEEDS_REVIEW ORDER_SOURCE_UNAVAILABLE instead of dying in the DLQ.
import { openingSqsHandler } from "../adapters/vault/sealed-table.ts";
import { ProposalMessageSchema } from "../pipeline/messages.ts";
import { handleProposal } from "../pipeline/kernel-service.ts";
import { productionDeps, productionVault } from "./composition/compose.ts";
import type { DepsSource } from "./composition/compose.ts";
import { createLogger } from "./observability/logger.ts";
import type { HandlerLogger } from "./observability/logger.ts";
import { sqsConsumer } from "./consumers/sqs-consumer.ts";
import { measured } from "./observability/metrics.ts";
import { RetryLaterError } from "./consumers/errors.ts";
import { QUEUES } from "../app/manifest.ts";
import type { HandlerMetrics } from "./observability/metrics.ts";

/** The kernel over `getDeps`; the logged outcome is the verdict (never the claim's text). `maxReceives`: the queue's maxReceiveCount. */
export function createKernelHandler(
  getDeps: DepsSource,
  options: { logger?: HandlerLogger; metrics?: HandlerMetrics; maxReceives?: number } = {},
) {
  const maxReceives = options.maxReceives ?? QUEUES.proposals.maxReceives;
  return measured("kernel", getDeps, options.metrics, (deps, metrics) =>
    sqsConsumer(
      {
        schema: ProposalMessageSchema,
        handle: async (message, record) => {
          const finalAttempt = Number(record.attributes.ApproximateReceiveCount) >= maxReceives;
          const result = await handleProposal(message, await deps(), { finalAttempt });
          if (result.outcome === "RETRY")
            throw new RetryLaterError(
              `claim ${message.claim_id} waits for its order (receive ${record.attributes.ApproximateReceiveCount} of ${maxReceives}): ${result.reason}`,
            );
          // A refused message (unknown claim, another flow, a claim not awaiting a decision) is logged and dropped: nothing was written.
          if (result.outcome === "REFUSED") return `REFUSED: ${result.reason}`;
          if (result.outcome === "NEEDS_REVIEW") return `NEEDS_REVIEW ${result.reasonCode}`;
          return `${result.verdict.record.verdict} ${result.verdict.record.reason_code} (execution ${result.verdict.execution})`;
        },
      },
      options.logger ?? createLogger("claims-kernel"),
      undefined,
      { metrics, consumer: "kernel" },
    ),
  );
}

/** The deployed handler (infra/functions.ts: kernel on ProposalsQueue). */
// Lambda hands it the bodies as they were sent, sealed: it opens them with its vault (as the local stack does).
export const handler = openingSqsHandler(createKernelHandler(productionDeps), productionVault);
