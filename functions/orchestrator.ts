// Crew orchestrator (SQS FIFO crew-events, message group = claim id): delivers one crew message
// per record to the claim's session (core: handleCrewMessage). A lost version race throws, so the
// record fails and SQS redelivers it; the rest of that claim's group waits behind it (FIFO).
import { CrewQueueMessageSchema } from "../core/claims/pipeline/messages.ts";
import { handleCrewMessage } from "../core/claims/pipeline/orchestrator.ts";
import { productionDeps } from "./lib/compose.ts";
import type { DepsSource } from "./lib/compose.ts";
import { createLogger } from "./lib/logger.ts";
import type { HandlerLogger } from "./lib/logger.ts";
import { sqsConsumer } from "./lib/sqs-consumer.ts";

/** The orchestrator over `getDeps`. */
export function createOrchestratorHandler(getDeps: DepsSource, options: { logger?: HandlerLogger } = {}) {
  return sqsConsumer(
    { schema: CrewQueueMessageSchema, fifo: true, handle: async (message) => handleCrewMessage(message, await getDeps()) },
    options.logger ?? createLogger("claims-orchestrator"),
  );
}

/** The deployed handler (infra/functions.ts: orchestrator on CrewEventsQueue). */
export const handler = createOrchestratorHandler(productionDeps);
