// Timer (SQS timers, standard queue with per-message delays): a due timer becomes a crew.tick on
// the claim's FIFO group; one that is not due yet (deadlines past SQS's 15-minute delay) is re-armed
// (pipeline: handleTimer).
import { TimerMessageSchema } from "../pipeline/messages.ts";
import { handleTimer } from "../pipeline/timers.ts";
import { productionDeps } from "./lib/compose.ts";
import type { DepsSource } from "./lib/compose.ts";
import { createLogger } from "./lib/logger.ts";
import type { HandlerLogger } from "./lib/logger.ts";
import { sqsConsumer } from "./lib/sqs-consumer.ts";
import { measured } from "./lib/metrics.ts";
import type { HandlerMetrics } from "./lib/metrics.ts";

/** The timer consumer over `getDeps`. */
export function createTimerHandler(
  getDeps: DepsSource,
  options: { logger?: HandlerLogger; metrics?: HandlerMetrics } = {},
) {
  return measured("timer", getDeps, options.metrics, (deps) =>
    sqsConsumer(
      { schema: TimerMessageSchema, handle: async (message) => handleTimer(message, await deps()) },
      options.logger ?? createLogger("claims-timer"),
    ),
  );
}

/** The deployed handler (infra/functions.ts: timer on TimersQueue). */
export const handler = createTimerHandler(productionDeps);
