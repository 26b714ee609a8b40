// Crew orchestrator (SQS FIFO crew-events, message group = claim id): hands each claim's messages of
// the batch to the pipeline in one call (handleCrewMessages: one session load, one conditional save). A lost
// version race throws, so the group fails and SQS redelivers it in order; other claims are unaffected.
import { openingSqsHandler } from "../adapters/vault/sealed-table.ts";
import { CrewQueueMessageSchema } from "../pipeline/messages.ts";
import { handleCrewMessages } from "../pipeline/orchestrator.ts";
import { productionDeps, productionVault } from "./composition/compose.ts";
import type { DepsSource } from "./composition/compose.ts";
import { createLogger } from "./observability/logger.ts";
import type { HandlerLogger } from "./observability/logger.ts";
import { sqsFifoGroupConsumer } from "./consumers/sqs-consumer.ts";
import { measured } from "./observability/metrics.ts";
import type { HandlerMetrics } from "./observability/metrics.ts";

/** The orchestrator over `getDeps`. */
export function createOrchestratorHandler(
  getDeps: DepsSource,
  options: { logger?: HandlerLogger; metrics?: HandlerMetrics } = {},
) {
  return measured("orchestrator", getDeps, options.metrics, (deps, metrics) =>
    sqsFifoGroupConsumer(
      { schema: CrewQueueMessageSchema, handleGroup: async (messages) => handleCrewMessages(messages, await deps()) },
      options.logger ?? createLogger("claims-orchestrator"),
      { metrics, consumer: "orchestrator" },
    ),
  );
}

/** The deployed handler (infra/functions.ts: orchestrator on CrewEventsQueue). */
// Lambda hands it the bodies as they were sent, sealed: it opens them with its vault (as the local stack does).
export const handler = openingSqsHandler(createOrchestratorHandler(productionDeps), productionVault);
