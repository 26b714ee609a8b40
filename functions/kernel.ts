// Decision kernel (SQS proposals): decides each proposal once per idempotency key from the stored claim,
// reserves an ACCEPT's refund before announcing it, publishes the final verdict (pipeline: handleProposal).
// A redelivery repairs whatever step a crash interrupted and decides nothing twice.
import { ProposalMessageSchema } from "../pipeline/messages.ts";
import { handleProposal } from "../pipeline/kernel-service.ts";
import { productionDeps } from "./lib/compose.ts";
import type { DepsSource } from "./lib/compose.ts";
import { createLogger } from "./lib/logger.ts";
import type { HandlerLogger } from "./lib/logger.ts";
import { sqsConsumer } from "./lib/sqs-consumer.ts";
import { measured } from "./lib/metrics.ts";
import type { HandlerMetrics } from "./lib/metrics.ts";

/** The kernel over `getDeps`; the logged outcome is the verdict (never the claim's text). */
export function createKernelHandler(
  getDeps: DepsSource,
  options: { logger?: HandlerLogger; metrics?: HandlerMetrics } = {},
) {
  return measured("kernel", getDeps, options.metrics, (deps) =>
    sqsConsumer(
      {
        schema: ProposalMessageSchema,
        handle: async (message) => {
          const result = await handleProposal(message, await deps());
          // A refused message (unknown claim, another flow, a claim not awaiting a decision) is logged and dropped: nothing was written.
          if (result.outcome === "REFUSED") return `REFUSED: ${result.reason}`;
          if (result.outcome === "NEEDS_REVIEW") return `NEEDS_REVIEW ${result.reasonCode}`;
          return `${result.verdict.record.verdict} ${result.verdict.record.reason_code} (execution ${result.verdict.execution})`;
        },
      },
      options.logger ?? createLogger("claims-kernel"),
    ),
  );
}

/** The deployed handler (infra/functions.ts: kernel on ProposalsQueue). */
export const handler = createKernelHandler(productionDeps);
