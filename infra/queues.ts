// The SQS queues of SPEC §2, each with its own dead-letter queue. Visibility timeouts follow the consumer's
// timeout (infra/lambda.ts); the consumers subscribe in infra/functions.ts.
import { visibilityTimeoutFor } from "./lambda.ts";

/** Dead letters are kept 14 days (the SQS maximum; the default is 4) so there is time to inspect and redrive them. */
const DLQ_RETENTION_SECONDS = 14 * 24 * 60 * 60;

/**
 * How many receives a message gets before it moves to its DLQ (SQS `maxReceiveCount`). A receive that
 * ends in a reported batch-item failure or a crash counts; successful siblings in a batch do not.
 */
export const MAX_RECEIVES = {
  // Racing orchestrators lose a version-conditioned save and retry by redelivery, so allow a few; but in a
  // FIFO queue a poison event blocks its claim's group until it leaves, so not many.
  crewEvents: 5,
  // Every receive is a paid LLM call, and the crew engine already turns failed steps into events; SQS
  // retries only cover crashes and throttling.
  agentSteps: 3,
  // The kernel is deterministic and idempotent (conditional writes): retries are cheap and safe.
  proposals: 5,
  // One LLM call per receive, and the SDK retries 429/5xx twice inside each receive.
  extraction: 3,
  // A cheap forwarder; a tick that still goes missing is caught by the 5-minute sweep.
  timers: 5,
  // Consumed by systems outside this app: a generous default they can tighten.
  downstream: 5,
} as const;

/** A dead-letter queue (FIFO when its source queue is FIFO, as SQS requires). */
export function deadLetterQueue(name: string, fifo = false) {
  return new sst.aws.Queue(name, {
    fifo,
    transform: { queue: { messageRetentionSeconds: DLQ_RETENTION_SECONDS } },
  });
}

/** A work queue with its own DLQ, a visibility timeout fitted to its consumer and its maxReceiveCount. */
function workQueue(name: string, opts: { consumer: Parameters<typeof visibilityTimeoutFor>[0]; maxReceives: number; fifo?: boolean }) {
  const dlq = deadLetterQueue(`${name}Dlq`, opts.fifo ?? false);
  const queue = new sst.aws.Queue(`${name}Queue`, {
    // FIFO producers set MessageDeduplicationId (event id), so a retried send of the same event is dropped for 5 minutes.
    ...(opts.fifo ? { fifo: { contentBasedDeduplication: false } } : {}),
    visibilityTimeout: visibilityTimeoutFor(opts.consumer),
    dlq: { queue: dlq.arn, retry: opts.maxReceives },
  });
  return { queue, dlq };
}

/** Crew events and ticks for the orchestrator: FIFO with the claim id as message group, so one claim's events are serial. */
export const { queue: crewEventsQueue, dlq: crewEventsDlq } = workQueue("CrewEvents", { consumer: "orchestrator", maxReceives: MAX_RECEIVES.crewEvents, fifo: true });
/** agent.step.requested messages for the worker. */
export const { queue: agentStepsQueue, dlq: agentStepsDlq } = workQueue("AgentSteps", { consumer: "worker", maxReceives: MAX_RECEIVES.agentSteps });
/** Refund proposals (crew.completed) for the kernel. */
export const { queue: proposalsQueue, dlq: proposalsDlq } = workQueue("Proposals", { consumer: "kernel", maxReceives: MAX_RECEIVES.proposals });
/** Free-text claims waiting for LLM extraction (intake's own queue, so extraction is retried by SQS). */
export const { queue: extractionQueue, dlq: extractionDlq } = workQueue("Extraction", { consumer: "intakeExtract", maxReceives: MAX_RECEIVES.extraction });
/**
 * Step-deadline ticks. A standard queue because FIFO queues ignore per-message DelaySeconds: the
 * orchestrator sends each tick with DelaySeconds up to 900 and the timer forwards it as `crew.tick`.
 */
export const { queue: timersQueue, dlq: timersDlq } = workQueue("Timers", { consumer: "timer", maxReceives: MAX_RECEIVES.timers });
