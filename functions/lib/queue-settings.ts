// The event source settings of the queue consumers, as declared in infra/ (queues.ts MAX_RECEIVES,
// lambda.ts FUNCTIONS timeouts × VISIBILITY_FACTOR, functions.ts batch sizes). infra/ files only
// evaluate inside SST, so the values are restated here for the handlers and the local stack;
// queue-settings.test.ts checks them against the recorded SST app.
import type { QueueRole } from "./resources.ts";

/** One consumed queue: its SST link name, consumer, FIFO-ness, batch size, visibility timeout and receives before the DLQ. */
export interface QueueSetting {
  readonly link: string;
  readonly consumer: string;
  readonly fifo: boolean;
  readonly batchSize: number;
  readonly visibilityTimeoutS: number;
  readonly maxReceives: number;
  readonly consumerTimeoutS: number;
}

/** Every queue the app's own functions consume, by role. */
export const QUEUE_SETTINGS = {
  crewEvents: { link: "CrewEventsQueue", consumer: "functions/orchestrator.handler", fifo: true, batchSize: 10, visibilityTimeoutS: 180, maxReceives: 5, consumerTimeoutS: 30 },
  agentSteps: { link: "AgentStepsQueue", consumer: "functions/worker.handler", fifo: false, batchSize: 1, visibilityTimeoutS: 720, maxReceives: 3, consumerTimeoutS: 120 },
  proposals: { link: "ProposalsQueue", consumer: "functions/kernel.handler", fifo: false, batchSize: 10, visibilityTimeoutS: 180, maxReceives: 5, consumerTimeoutS: 30 },
  extraction: { link: "ExtractionQueue", consumer: "functions/intake-extract.handler", fifo: false, batchSize: 1, visibilityTimeoutS: 720, maxReceives: 3, consumerTimeoutS: 120 },
  timers: { link: "TimersQueue", consumer: "functions/timer.handler", fifo: false, batchSize: 10, visibilityTimeoutS: 60, maxReceives: 5, consumerTimeoutS: 10 },
} as const satisfies Record<QueueRole, QueueSetting>;
