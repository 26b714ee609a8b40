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

/** Dead letters of the crew-events queue. */
export const crewEventsDlq = deadLetterQueue("CrewEventsDlq", true);
/** Crew events and ticks for the orchestrator: FIFO with the claim id as message group, so one claim's events are serial. */
export const crewEventsQueue = new sst.aws.Queue("CrewEventsQueue", {
  // Producers set MessageDeduplicationId (event id), so a retried send of the same event is dropped for 5 minutes.
  fifo: { contentBasedDeduplication: false },
  visibilityTimeout: visibilityTimeoutFor("orchestrator"),
  dlq: { queue: crewEventsDlq.arn, retry: MAX_RECEIVES.crewEvents },
});

/** Dead letters of the agent-steps queue. */
export const agentStepsDlq = deadLetterQueue("AgentStepsDlq");
/** agent.step.requested messages for the worker. */
export const agentStepsQueue = new sst.aws.Queue("AgentStepsQueue", {
  visibilityTimeout: visibilityTimeoutFor("worker"),
  dlq: { queue: agentStepsDlq.arn, retry: MAX_RECEIVES.agentSteps },
});

/** Dead letters of the proposals queue. */
export const proposalsDlq = deadLetterQueue("ProposalsDlq");
/** Refund proposals (crew.completed) for the kernel. */
export const proposalsQueue = new sst.aws.Queue("ProposalsQueue", {
  visibilityTimeout: visibilityTimeoutFor("kernel"),
  dlq: { queue: proposalsDlq.arn, retry: MAX_RECEIVES.proposals },
});

/** Dead letters of the extraction queue. */
export const extractionDlq = deadLetterQueue("ExtractionDlq");
/** Free-text claims waiting for LLM extraction (intake's own queue, so extraction is retried by SQS). */
export const extractionQueue = new sst.aws.Queue("ExtractionQueue", {
  visibilityTimeout: visibilityTimeoutFor("intakeExtract"),
  dlq: { queue: extractionDlq.arn, retry: MAX_RECEIVES.extraction },
});

/** Dead letters of the timers queue. */
export const timersDlq = deadLetterQueue("TimersDlq");
/**
 * Step-deadline ticks. A standard queue because FIFO queues ignore per-message DelaySeconds: the
 * orchestrator sends each tick with DelaySeconds up to 900 and the timer forwards it as `crew.tick`.
 */
export const timersQueue = new sst.aws.Queue("TimersQueue", {
  visibilityTimeout: visibilityTimeoutFor("timer"),
  dlq: { queue: timersDlq.arn, retry: MAX_RECEIVES.timers },
});
