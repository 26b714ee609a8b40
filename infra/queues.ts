// The SQS queues, each with its own dead-letter queue, built from app/manifest.ts (consumer, FIFO-ness, receives
// before the DLQ, visibility timeout = 6x the consumer's timeout); the consumers subscribe in infra/functions.ts.
// No queue has a queue policy but the bus's targets (infra/bus.ts): our functions reach the work queues
// through their roles.
import { QUEUES, RETENTION_SECONDS, visibilityTimeoutSeconds } from "../app/manifest.ts";
import type { QueueRole } from "../app/manifest.ts";

/**
 * A dead-letter queue (FIFO when its source queue is FIFO, as SQS requires). It keeps messages 14 days, as its
 * source does: a standard queue's message keeps its first enqueue time in the DLQ, so a shorter retention here
 * would drop it early.
 */
export function deadLetterQueue(name: string, fifo = false) {
  return new sst.aws.Queue(name, {
    fifo,
    transform: { queue: { messageRetentionSeconds: RETENTION_SECONDS } },
  });
}

/**
 * FIFO high-throughput mode: deduplication and the throughput limit per message group (a claim), so the
 * queue is not held to 300 operations per second (AWS's documented settings for high throughput).
 */
const HIGH_THROUGHPUT_FIFO = { deduplicationScope: "messageGroup", fifoThroughputLimit: "perMessageGroupId" } as const;

/** A work queue with its own DLQ, a visibility timeout fitted to its consumer and its maxReceiveCount. */
function workQueue(name: string, role: QueueRole) {
  const fact = QUEUES[role];
  const dlq = deadLetterQueue(`${name}Dlq`, fact.fifo);
  const queue = new sst.aws.Queue(`${name}Queue`, {
    // FIFO producers set MessageDeduplicationId (event id), so a retried send of the same event is dropped for 5 minutes.
    ...(fact.fifo ? { fifo: { contentBasedDeduplication: false } } : {}),
    visibilityTimeout: `${visibilityTimeoutSeconds(role)} seconds`,
    dlq: { queue: dlq.arn, retry: fact.maxReceives },
    transform: {
      queue: { messageRetentionSeconds: RETENTION_SECONDS, ...(fact.fifo ? HIGH_THROUGHPUT_FIFO : {}) },
    },
  });
  return { queue, dlq };
}

/** Crew events and ticks for the orchestrator: FIFO with the claim id as message group, so one claim's events are serial. */
export const { queue: crewEventsQueue, dlq: crewEventsDlq } = workQueue("CrewEvents", "crewEvents");
/** agent.step.requested messages for the worker. */
export const { queue: agentStepsQueue, dlq: agentStepsDlq } = workQueue("AgentSteps", "agentSteps");
/** Refund proposals (crew.completed) for the kernel. */
export const { queue: proposalsQueue, dlq: proposalsDlq } = workQueue("Proposals", "proposals");
/** Free-text claims waiting for LLM extraction (intake's own queue, so extraction is retried by SQS). */
export const { queue: extractionQueue, dlq: extractionDlq } = workQueue("Extraction", "extraction");
/**
 * Step-deadline ticks. A standard queue because FIFO queues ignore per-message DelaySeconds: the
 * orchestrator sends each tick with DelaySeconds up to 900 and the timer forwards it as `crew.tick`.
 */
export const { queue: timersQueue, dlq: timersDlq } = workQueue("Timers", "timers");
