// Decision kernel (SQS proposals): decides each proposal once per idempotency key, executes an
// ACCEPT at most once, publishes the verdict (core: handleProposal). A redelivery repairs whatever
// step a crash interrupted and decides nothing twice.
import { ProposalMessageSchema } from "../pipeline/messages.ts";
import { handleProposal } from "../pipeline/kernel-service.ts";
import { productionDeps } from "./lib/compose.ts";
import type { DepsSource } from "./lib/compose.ts";
import { createLogger } from "./lib/logger.ts";
import type { HandlerLogger } from "./lib/logger.ts";
import { sqsConsumer } from "./lib/sqs-consumer.ts";

/** The kernel over `getDeps`; the logged outcome is the verdict (never the claim's text). */
export function createKernelHandler(getDeps: DepsSource, options: { logger?: HandlerLogger } = {}) {
  return sqsConsumer(
    {
      schema: ProposalMessageSchema,
      handle: async (message) => {
        const stored = await handleProposal(message, await getDeps());
        return `${stored.record.verdict} ${stored.record.reason_code} (execution ${stored.execution})`;
      },
    },
    options.logger ?? createLogger("claims-kernel"),
  );
}

/** The deployed handler (infra/functions.ts: kernel on ProposalsQueue). */
export const handler = createKernelHandler(productionDeps);
