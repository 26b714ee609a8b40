// Worker (SQS agent-steps, one message per invocation): runs one agent step through the LLM and
// sends agent.step.completed / agent.step.failed back to the claim's crew (pipeline: handleAgentStep).
// A model failure is an answer for the crew, not a failed message.
import { openingSqsHandler } from "../adapters/vault/sealed-table.ts";
import { AgentStepMessageSchema } from "../pipeline/messages.ts";
import { handleAgentStep } from "../pipeline/worker.ts";
import { productionLlmDeps } from "./composition/llm.ts";
import { productionVault } from "./composition/compose.ts";
import type { DepsSource } from "./composition/compose.ts";
import { createLogger } from "./observability/logger.ts";
import type { HandlerLogger } from "./observability/logger.ts";
import { sqsConsumer } from "./consumers/sqs-consumer.ts";
import { measured } from "./observability/metrics.ts";
import type { HandlerMetrics } from "./observability/metrics.ts";

/** The worker over `getDeps`. */
export function createWorkerHandler(
  getDeps: DepsSource,
  options: { logger?: HandlerLogger; metrics?: HandlerMetrics } = {},
) {
  return measured("worker", getDeps, options.metrics, (deps, metrics) =>
    sqsConsumer(
      { schema: AgentStepMessageSchema, handle: async (message) => handleAgentStep(message, await deps()) },
      options.logger ?? createLogger("claims-worker"),
      undefined,
      { metrics, consumer: "worker" },
    ),
  );
}

/** The deployed handler (infra/functions.ts: worker on AgentStepsQueue). */
// Lambda hands it the bodies as they were sent, sealed: it opens them with its vault (as the local stack does).
export const handler = openingSqsHandler(createWorkerHandler(productionLlmDeps), productionVault);
