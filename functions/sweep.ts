// Sweep (EventBridge Scheduler, every 5 minutes): nudges claims that have not moved for a while —
// a RUNNING claim gets a crew.tick (its overdue steps time out), a RECEIVED one is started again
// (core: sweepStalledClaims). The safety net behind the timers queue: no claim waits forever. Each run
// also reports the review backlog (PendingReviews, OldestPendingReviewAge), which the backlog alarms watch.
import * as z from "zod";
import { sweepStalledClaims } from "../pipeline/timers.ts";
import { productionDeps } from "./lib/compose.ts";
import type { DepsSource } from "./lib/compose.ts";
import { createLogger } from "./lib/logger.ts";
import type { HandlerLogger } from "./lib/logger.ts";
import { measured, reviewBacklogRecords } from "./lib/metrics.ts";
import type { HandlerMetrics } from "./lib/metrics.ts";

/** Sweep settings from the environment: CLAIMS_SWEEP_STALLED_AFTER_MS (default 5 min), CLAIMS_SWEEP_LIMIT (default 100). */
export const SweepSettingsSchema = z.object({
  CLAIMS_SWEEP_STALLED_AFTER_MS: z.coerce.number().int().min(1_000).default(300_000),
  CLAIMS_SWEEP_LIMIT: z.coerce.number().int().min(1).max(1_000).default(100),
});

/** The sweep over `getDeps`; the scheduler's event carries nothing it needs. */
export function createSweepHandler(getDeps: DepsSource, options: { logger?: HandlerLogger; metrics?: HandlerMetrics; env?: Record<string, string | undefined> } = {}) {
  const logger = options.logger ?? createLogger("claims-sweep");
  const settings = SweepSettingsSchema.parse(options.env ?? process.env);
  return measured("sweep", getDeps, options.metrics, (deps, metrics) => async (): Promise<{ examined: number; restarted: number; ticked: number }> => {
    const d = await deps();
    const result = await sweepStalledClaims(d, { stalledAfterMs: settings.CLAIMS_SWEEP_STALLED_AFTER_MS, limit: settings.CLAIMS_SWEEP_LIMIT });
    const counts = { examined: result.examined, restarted: result.restarted.length, ticked: result.ticked.length };
    logger.info("sweep done", { ...counts, claims: [...result.restarted, ...result.ticked] });
    for (const record of await reviewBacklogRecords(d.reviews, d.clock.now())) metrics.emit(record);
    return counts;
  });
}

/** The deployed handler (infra/schedules.ts: Sweep). */
export const handler = createSweepHandler(productionDeps);
