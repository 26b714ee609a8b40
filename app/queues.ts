// The work queues with their consumers and event-source settings (checked against Lambda's limits), and the
// retention and receives of every queue. infra/ deploys them; the local poller plays them.
import { EventSourceSettingError } from "./errors.ts";
import { FUNCTIONS, type FunctionKey } from "./functions.ts";
import { LINKS, type LinkName, type QueueRole } from "./links.ts";

const Q = LINKS.queues;

/** AWS guidance for SQS event sources: the queue's visibility timeout is at least 6x the function timeout. */
const VISIBILITY_FACTOR = 6;

/** One consumed queue: its link, the function that consumes it, FIFO-ness, batch size and receives before its DLQ. */
interface QueueFact {
  readonly link: LinkName;
  readonly consumer: FunctionKey;
  readonly fifo: boolean;
  readonly batchSize: number;
  /**
   * How many receives a message gets before it moves to its DLQ (SQS `maxReceiveCount`). A receive that
   * ends in a reported batch-item failure or a crash counts; successful siblings in a batch do not.
   */
  readonly maxReceives: number;
  /** LLM consumers cap their event-source concurrency at LLM_MAX_CONCURRENCY (the provider's rate limit). */
  readonly llm: boolean;
  /**
   * The event-source mapping's maximum concurrency (2–1000) for the others: how many batches may run at once,
   * so a backlog or a redrive cannot take the account's concurrency from the API and its authorizers.
   */
  readonly maxConcurrency: number;
  /**
   * How long the event source gathers records before it invokes (SQS `MaximumBatchingWindowInSeconds`, 0–300;
   * default 0: it invokes with what one receive returns). Only standard queues have one, and only a queue with a
   * window may take batches above 10 (up to 10,000): Lambda's limits, checked by `eventSourceBatch`.
   */
  readonly batchingWindowSeconds?: number;
}

/** The work queues, each with its consumer and event-source settings. */
export const QUEUES = {
  // Crew events and ticks for the orchestrator: FIFO with the claim id as message group, so one claim's events
  // are serial. Racing orchestrators lose a version-conditioned save and retry by redelivery, so allow a few
  // receives; but a poison event blocks its claim's group until it leaves, so not many. FIFO batches are at most 10.
  crewEvents: {
    link: Q.crewEvents,
    consumer: "orchestrator",
    fifo: true,
    batchSize: 10,
    maxReceives: 5,
    llm: false,
    maxConcurrency: 20,
  },
  // agent.step.requested for the worker. Every receive is a paid LLM call, and the crew engine already turns
  // failed steps into events; SQS retries cover crashes and throttling, and a throttled receive counts too, so
  // 5 receives (AWS's advice for Lambda consumers) keep a burst of throttling from dead-lettering work. One
  // message per invocation, so the timeout bounds exactly one LLM call.
  agentSteps: {
    link: Q.agentSteps,
    consumer: "worker",
    fifo: false,
    batchSize: 1,
    maxReceives: 5,
    llm: true,
    maxConcurrency: 10,
  },
  // Refund proposals for the kernel: deterministic and idempotent (conditional writes), so retries are cheap
  // and safe; full batches of 10 and no batching window (latency).
  proposals: {
    link: Q.proposals,
    consumer: "kernel",
    fifo: false,
    batchSize: 10,
    maxReceives: 5,
    llm: false,
    maxConcurrency: 10,
  },
  // Free-text claims waiting for LLM extraction: one LLM call per receive (429/5xx retried inside it); 5 receives
  // as for the agent steps.
  extraction: {
    link: Q.extraction,
    consumer: "intakeExtract",
    fifo: false,
    batchSize: 1,
    maxReceives: 5,
    llm: true,
    maxConcurrency: 10,
  },
  // Step-deadline ticks: a standard queue because FIFO queues ignore per-message DelaySeconds. A cheap
  // forwarder; a tick that still goes missing is caught by the 5-minute sweep. Almost every timer fires after
  // its claim is final and is dropped, so what it costs is the event source's receive, delete and invocation:
  // a deadline of minutes does not need second-level promptness, so the event source gathers timers for up to
  // TIMER_BATCHING_WINDOW_SECONDS and hands the function up to 100 at once. A tick is then at most that
  // window late (docs/architecture.md); 100 small records take the function well under its timeout, and it
  // leaves those it has no time for to a redelivery (functions/timer.ts).
  timers: {
    link: Q.timers,
    consumer: "timer",
    fifo: false,
    batchSize: 100,
    batchingWindowSeconds: 60,
    maxReceives: 5,
    llm: false,
    maxConcurrency: 5,
  },
} as const satisfies Record<QueueRole, QueueFact>;

/** Lambda's limits for an SQS event source: batches of 1–10, or up to 10,000 with a window of 1–300 s (standard queues only). */
const SQS_EVENT_SOURCE = { maxBatch: 10, maxBatchWithWindow: 10_000, maxWindowSeconds: 300 } as const;

/**
 * A queue's event-source batching, checked against Lambda's limits: records per invocation and the batching
 * window in seconds (0: none). What infra/ deploys and the local poller plays, from the one fact.
 */
export function eventSourceBatch(role: QueueRole): { size: number; windowSeconds: number } {
  return eventSourceBatchOf(role, QUEUES[role]);
}

/** `eventSourceBatch` of any queue fact (`role` names it in the error). */
export function eventSourceBatchOf(
  role: string,
  fact: Pick<QueueFact, "fifo" | "batchSize" | "batchingWindowSeconds">,
): { size: number; windowSeconds: number } {
  const windowSeconds = fact.batchingWindowSeconds ?? 0;
  const { maxBatch, maxBatchWithWindow, maxWindowSeconds } = SQS_EVENT_SOURCE;
  if (!Number.isInteger(windowSeconds) || windowSeconds < 0 || windowSeconds > maxWindowSeconds)
    throw new EventSourceSettingError(
      role,
      `a batching window is 0–${maxWindowSeconds} whole seconds, got ${windowSeconds}`,
    );
  if (fact.fifo && windowSeconds > 0) throw new EventSourceSettingError(role, "a FIFO queue has no batching window");
  const max = windowSeconds > 0 ? maxBatchWithWindow : maxBatch;
  if (!Number.isInteger(fact.batchSize) || fact.batchSize < 1 || fact.batchSize > max)
    throw new EventSourceSettingError(
      role,
      `a batch is 1–${max} records${windowSeconds > 0 ? "" : " without a batching window"}, got ${fact.batchSize}`,
    );
  return { size: fact.batchSize, windowSeconds };
}

/** The longest a due timer may wait in the event source before the timer function sees it (its batching window). */
export const TIMER_BATCHING_WINDOW_SECONDS = eventSourceBatch("timers").windowSeconds;

/** Receives before the DLQ on the queues that rules feed for systems outside this app: a generous default they can tighten. */
export const DOWNSTREAM_MAX_RECEIVES = 5;

/**
 * How long every queue keeps a message (the SQS maximum, 14 days; the default is 4): a downstream consumer that
 * is down for a week loses no RefundExecuted, and a dead letter waits for a person.
 */
export const RETENTION_SECONDS = 14 * 24 * 60 * 60;

/**
 * The visibility timeout of a queue in seconds: VISIBILITY_FACTOR × its consumer's timeout, plus its batching
 * window (a record received at the window's start stays in flight while the rest of its batch is gathered).
 */
export function visibilityTimeoutSeconds(role: QueueRole): number {
  return VISIBILITY_FACTOR * FUNCTIONS[QUEUES[role].consumer].timeoutSeconds + eventSourceBatch(role).windowSeconds;
}
