// The SQS queues of SPEC §2, each with its own dead-letter queue, built from infra/facts.ts (consumer,
// FIFO-ness, receives before the DLQ, visibility timeout = 6x the consumer's timeout); the consumers
// subscribe in infra/functions.ts.
import { QUEUES, visibilityTimeoutSeconds } from "./facts.ts";
import type { QueueRole } from "./facts.ts";

/** Dead letters are kept 14 days (the SQS maximum; the default is 4) so there is time to inspect and redrive them. */
const DLQ_RETENTION_SECONDS = 14 * 24 * 60 * 60;

/** A dead-letter queue (FIFO when its source queue is FIFO, as SQS requires). */
export function deadLetterQueue(name: string, fifo = false) {
  return new sst.aws.Queue(name, {
    fifo,
    transform: { queue: { messageRetentionSeconds: DLQ_RETENTION_SECONDS } },
  });
}

/** A work queue with its own DLQ, a visibility timeout fitted to its consumer and its maxReceiveCount. */
function workQueue(name: string, role: QueueRole) {
  const fact = QUEUES[role];
  const dlq = deadLetterQueue(`${name}Dlq`, fact.fifo);
  const queue = new sst.aws.Queue(`${name}Queue`, {
    // FIFO producers set MessageDeduplicationId (event id), so a retried send of the same event is dropped for 5 minutes.
    ...(fact.fifo ? { fifo: { contentBasedDeduplication: false } } : {}),
    visibilityTimeout: `${visibilityTimeoutSeconds(role)} seconds`,
    dlq: { queue: dlq.arn, retry: fact.maxReceives },
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
