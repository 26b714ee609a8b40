// The queue consumers: one Lambda per work queue of app/manifest.ts, each linked to exactly the resources and
// actions app/manifest.ts lists for it. Every subscription reports partial batch failures (`ReportBatchItemFailures`),
// so one failing message never makes its successful neighbours run again, and caps its concurrency, so a
// backlog or a redrive cannot take the account's concurrency from the API and its authorizers.
import { eventSourceBatch, QUEUES } from "../app/manifest.ts";
import type { QueueRole } from "../app/manifest.ts";
import { functionArgs, llmEnvironment } from "./lambda.ts";
import { agentStepsQueue, crewEventsQueue, extractionQueue, proposalsQueue, timersQueue } from "./queues.ts";
import { settings } from "./settings.ts";

/** The event-source mapping's maximum concurrency of a queue: LLM_MAX_CONCURRENCY for the LLM consumers. */
export function maximumConcurrency(role: QueueRole): number {
  const fact = QUEUES[role];
  return fact.llm ? settings.llm.maxConcurrency : fact.maxConcurrency;
}

/**
 * Subscribes the queue's consumer with its batch size, batching window (app/manifest.ts eventSourceBatch: the timers
 * queue gathers for a minute) and concurrency cap. LLM consumers take one message per invocation (the timeout
 * then bounds exactly one LLM call).
 */
function consume(role: QueueRole, queue: typeof crewEventsQueue) {
  const fact = QUEUES[role];
  const { size, windowSeconds } = eventSourceBatch(role);
  return queue.subscribe(
    // The functions of app/manifest.ts POLICY_FUNCTIONS get the deployed policy from functionArgs.
    functionArgs(fact.consumer, fact.llm ? { environment: llmEnvironment() } : {}),
    {
      batch: {
        size,
        ...(windowSeconds > 0 ? { window: `${windowSeconds} seconds` as const } : {}),
        partialResponses: true,
      },
      transform: { eventSourceMapping: { scalingConfig: { maximumConcurrency: maximumConcurrency(role) } } },
    },
  );
}

/** Free-text extraction with the LLM; on success it starts the crew. */
export const intakeExtract = consume("extraction", extractionQueue);
/** The crew orchestrator. FIFO batches are at most 10; a batch window is not available on FIFO queues. */
export const orchestrator = consume("crewEvents", crewEventsQueue);
/** One agent step per message, through the LLM. */
export const worker = consume("agentSteps", agentStepsQueue);
/** The decision kernel: cheap, deterministic work. */
export const kernel = consume("proposals", proposalsQueue);
/** Drops settled claims' due ticks, forwards the others to the crew-events queue, re-arms early ones; batches of up to 100, gathered for a minute. */
export const timer = consume("timers", timersQueue);
