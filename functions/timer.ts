// Timer (SQS timers, standard queue with per-message delays): a due timer becomes a crew.tick on
// the claim's FIFO group; one that is not due yet (deadlines past SQS's 15-minute delay) is re-armed
// (pipeline: handleTimer). Its event source gathers timers for up to a minute, up to 100 at once
// (app/manifest.ts): they are handled one after another while time is left, and the rest reported for a
// redelivery, so a slow batch never times out as a whole.
import { openingSqsHandler } from "../adapters/vault/sealed-table.ts";
import { TimerMessageSchema } from "../pipeline/messages.ts";
import { handleTimer } from "../pipeline/timers.ts";
import { productionDeps, productionVault } from "./composition/compose.ts";
import type { DepsSource } from "./composition/compose.ts";
import { createLogger } from "./observability/logger.ts";
import type { HandlerLogger } from "./observability/logger.ts";
import { sqsConsumer } from "./consumers/sqs-consumer.ts";
import { measured } from "./observability/metrics.ts";
import type { HandlerMetrics } from "./observability/metrics.ts";

/**
 * What the timer keeps of its 10-second invocation when it starts a record: one record takes a few SDK calls
 * (tens of ms), so a record started with this much left always finishes.
 */
export const TIMER_RESERVE_MS = 2_000;

/** The timer consumer over `getDeps`. */
export function createTimerHandler(
  getDeps: DepsSource,
  options: { logger?: HandlerLogger; metrics?: HandlerMetrics; reserveMs?: number } = {},
) {
  return measured("timer", getDeps, options.metrics, (deps, metrics) =>
    sqsConsumer(
      { schema: TimerMessageSchema, handle: async (message) => handleTimer(message, await deps()) },
      options.logger ?? createLogger("claims-timer"),
      { inOrder: true, reserveMs: options.reserveMs ?? TIMER_RESERVE_MS },
      { metrics, consumer: "timer" },
    ),
  );
}

/** The deployed handler (infra/functions.ts: timer on TimersQueue). */
// Lambda hands it the bodies as they were sent, sealed: it opens them with its vault (as the local stack does).
export const handler = openingSqsHandler(createTimerHandler(productionDeps), productionVault);
