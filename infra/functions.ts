// The queue consumers of SPEC §2: one Lambda per work queue of infra/facts.ts, each linked to exactly the
// resources facts.ts lists for it. Every subscription reports partial batch failures
// (`ReportBatchItemFailures`), so one failing message never makes its successful neighbours run again.
import { QUEUES } from "./facts.ts";
import type { QueueRole } from "./facts.ts";
import { functionArgs, llmEnvironment } from "./lambda.ts";
import { agentStepsQueue, crewEventsQueue, extractionQueue, proposalsQueue, timersQueue } from "./queues.ts";
import { settings } from "./settings.ts";

/** The agent's contract (scenarios/config.yaml) ships with every function that proposes, prompts or decides. */
const AGENT_CONFIG = [{ from: "scenarios/config.yaml" }];

/**
 * Subscribes the queue's consumer with its batch size. LLM consumers take one message per invocation (the
 * timeout then bounds exactly one LLM call) and cap their concurrency at the event source, which protects the
 * provider's rate limit without reserving account concurrency.
 */
function consume(role: QueueRole, queue: typeof crewEventsQueue, options: { llm?: boolean; config?: boolean } = {}) {
  const fact = QUEUES[role];
  return queue.subscribe(
    functionArgs(fact.consumer, {
      ...(fact.llm ? { environment: llmEnvironment() } : {}),
      ...(options.config ? { copyFiles: AGENT_CONFIG } : {}),
    }),
    {
      batch: { size: fact.batchSize, partialResponses: true },
      ...(fact.llm ? { transform: { eventSourceMapping: { scalingConfig: { maximumConcurrency: settings.llm.maxConcurrency } } } } : {}),
    },
  );
}

/** Free-text extraction with the LLM; on success it starts the crew. */
export const intakeExtract = consume("extraction", extractionQueue, { config: true });
/** The crew orchestrator. FIFO batches are at most 10; a batch window is not available on FIFO queues. */
export const orchestrator = consume("crewEvents", crewEventsQueue, { config: true });
/** One agent step per message, through the LLM. */
export const worker = consume("agentSteps", agentStepsQueue, { config: true });
/** The decision kernel: cheap, deterministic work. */
export const kernel = consume("proposals", proposalsQueue, { config: true });
/** Forwards due ticks to the crew-events queue (one SendMessageBatch for up to 10). */
export const timer = consume("timers", timersQueue);
