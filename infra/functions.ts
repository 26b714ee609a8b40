// The queue consumers of SPEC §2: one Lambda per queue, each linked to exactly the resources its handler
// uses (a link grants IAM access to that resource and exposes it as `Resource.<Name>`, nothing more).
// Every subscription reports partial batch failures (`ReportBatchItemFailures`), so one failing message
// never makes its successful neighbours run again.
import { bus } from "./bus.ts";
import { functionArgs, llmEnvironment } from "./lambda.ts";
import { agentStepsQueue, crewEventsQueue, extractionQueue, proposalsQueue, timersQueue } from "./queues.ts";
import { llmApiKey } from "./secrets.ts";
import { settings } from "./settings.ts";
import { table } from "./storage.ts";

/**
 * LLM consumers take one message per invocation: the timeout then bounds exactly one LLM call, and a slow
 * call never holds back or re-runs its neighbours. Their concurrency is capped at the event source, which
 * protects the provider's rate limit without reserving account concurrency.
 */
/** The agent's contract (scenarios/config.yaml) ships with every function that proposes, prompts or decides. */
const AGENT_CONFIG = [{ from: "scenarios/config.yaml" }];

const llmConsumer = {
  batch: { size: 1, partialResponses: true },
  transform: { eventSourceMapping: { scalingConfig: { maximumConcurrency: settings.llm.maxConcurrency } } },
} as const;

/** Free-text extraction with the LLM; on success it starts the crew. */
export const intakeExtract = extractionQueue.subscribe(
  functionArgs("intakeExtract", {
    // Bus: a failed extraction ends the claim in NEEDS_REVIEW and publishes ClaimNeedsReview.
    link: [table, crewEventsQueue, llmApiKey, bus],
    environment: llmEnvironment(),
    copyFiles: AGENT_CONFIG,
  }),
  llmConsumer,
);

/** The crew orchestrator. FIFO batches are at most 10; a batch window is not available on FIFO queues. */
export const orchestrator = crewEventsQueue.subscribe(
  functionArgs("orchestrator", {
    link: [table, agentStepsQueue, proposalsQueue, timersQueue, bus],
    copyFiles: AGENT_CONFIG,
  }),
  { batch: { size: 10, partialResponses: true } },
);

/** One agent step per message, through the LLM. */
export const worker = agentStepsQueue.subscribe(
  functionArgs("worker", {
    link: [table, crewEventsQueue, llmApiKey],
    environment: llmEnvironment(),
    copyFiles: AGENT_CONFIG,
  }),
  llmConsumer,
);

/** The decision kernel: cheap, deterministic work, so full batches of 10 and no batching window (latency). */
export const kernel = proposalsQueue.subscribe(
  functionArgs("kernel", { link: [table, bus], copyFiles: AGENT_CONFIG }),
  { batch: { size: 10, partialResponses: true } },
);

/** Forwards due ticks to the crew-events queue (one SendMessageBatch for up to 10). */
export const timer = timersQueue.subscribe(
  // TimersQueue: a deadline beyond SQS's 15-minute delay is re-armed on the timers queue.
  functionArgs("timer", { link: [crewEventsQueue, timersQueue] }),
  { batch: { size: 10, partialResponses: true } },
);
