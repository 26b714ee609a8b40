// Crew orchestrator (SQS FIFO crew-events, message group = claim id): hands each claim's messages of
// the batch to the pipeline in one call (handleCrewMessages: one session load, one conditional save). A lost
// version race throws, so the group fails and SQS redelivers it in order; other claims are unaffected.
import { CrewQueueMessageSchema } from "../pipeline/messages.ts";
import { handleCrewMessages } from "../pipeline/orchestrator.ts";
import { productionDeps } from "./lib/compose.ts";
import type { DepsSource } from "./lib/compose.ts";
import { createLogger } from "./lib/logger.ts";
import type { HandlerLogger } from "./lib/logger.ts";
import { sqsFifoGroupConsumer } from "./lib/sqs-consumer.ts";
import { measured } from "./lib/metrics.ts";
import type { HandlerMetrics } from "./lib/metrics.ts";

/** The orchestrator over `getDeps`. */
export function createOrchestratorHandler(
  getDeps: DepsSource,
  options: { logger?: HandlerLogger; metrics?: HandlerMetrics } = {},
) {
  return measured("orchestrator", getDeps, options.metrics, (deps) =>
    sqsFifoGroupConsumer(
      { schema: CrewQueueMessageSchema, handleGroup: async (messages) => handleCrewMessages(messages, await deps()) },
      options.logger ?? createLogger("claims-orchestrator"),
    ),
  );
}

/** The deployed handler (infra/functions.ts: orchestrator on CrewEventsQueue). */
export const handler = createOrchestratorHandler(productionDeps);
