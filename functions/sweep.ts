// Sweep (EventBridge Scheduler, every 5 minutes): nudges claims that have not moved for a while —
// a RUNNING claim gets a crew.tick (its overdue steps time out), a RECEIVED one is started again —,
// moves a claim that nudges no longer move to NEEDS_REVIEW STALLED, and completes interrupted review
// decisions (core: sweepStalledClaims). The safety net behind the timers queue: no claim waits forever.
// Each run also reports the review backlog (PendingReviews, OldestPendingReviewAge), which the backlog alarms watch.
import * as z from "zod";
import type { PipelineSettings } from "../pipeline/deps.ts";
import { sweepStalledClaims } from "../pipeline/timers.ts";
import { productionDeps } from "./lib/compose.ts";
import type { DepsSource } from "./lib/compose.ts";
import { createLogger } from "./lib/logger.ts";
import type { HandlerLogger } from "./lib/logger.ts";
import { measured, reviewBacklogRecords } from "./lib/metrics.ts";
import type { HandlerMetrics } from "./lib/metrics.ts";

/**
 * Sweep settings from the environment: CLAIMS_SWEEP_STALLED_AFTER_MS (default 5 min), CLAIMS_SWEEP_LIMIT
 * (claims read per page, default 100; every page is read), CLAIMS_SWEEP_MAX_TICKS (nudges without progress
 * before STALLED, default 3).
 */
export const SweepSettingsSchema = z.object({
  CLAIMS_SWEEP_STALLED_AFTER_MS: z.coerce.number().int().min(1_000).default(300_000),
  CLAIMS_SWEEP_LIMIT: z.coerce.number().int().min(1).max(1_000).default(100),
  CLAIMS_SWEEP_MAX_TICKS: z.coerce.number().int().min(1).max(1_000).default(3),
});

/**
 * The nudges without progress before a claim is STALLED: the configured number, but never so few that a step
 * still within its timeout could be taken for stuck (a tick past its deadline always moves the crew on).
 */
function effectiveMaxTicks(configured: number, stalledAfterMs: number, timeouts: PipelineSettings["timeouts"]): number {
  const longestStepMs = Math.max(timeouts.analystMs, timeouts.decisionMs, timeouts.fixerMs);
  return Math.max(configured, Math.ceil(longestStepMs / stalledAfterMs) + 1);
}

/** The sweep over `getDeps`; the scheduler's event carries nothing it needs. */
export function createSweepHandler(getDeps: DepsSource, options: { logger?: HandlerLogger; metrics?: HandlerMetrics; env?: Record<string, string | undefined> } = {}) {
  const logger = options.logger ?? createLogger("claims-sweep");
  const settings = SweepSettingsSchema.parse(options.env ?? process.env);
  return measured("sweep", getDeps, options.metrics, (deps, metrics) => async (): Promise<{ examined: number; restarted: number; ticked: number; stalled: number; reviewsRepaired: number }> => {
    const d = await deps();
    const stalledAfterMs = settings.CLAIMS_SWEEP_STALLED_AFTER_MS;
    const result = await sweepStalledClaims(d, {
      stalledAfterMs,
      pageSize: settings.CLAIMS_SWEEP_LIMIT,
      maxTicks: effectiveMaxTicks(settings.CLAIMS_SWEEP_MAX_TICKS, stalledAfterMs, d.settings.timeouts),
    });
    const counts = { examined: result.examined, restarted: result.restarted.length, ticked: result.ticked.length, stalled: result.stalled.length, reviewsRepaired: result.reviewsRepaired };
    logger.info("sweep done", { ...counts, claims: [...result.restarted, ...result.ticked], stalled: result.stalled });
    if (result.stalled.length > 0) logger.warn("claims stalled: moved to NEEDS_REVIEW", { stalled: result.stalled });
    for (const record of await reviewBacklogRecords(d.reviews, d.clock.now())) metrics.emit(record);
    return counts;
  });
}

/** The deployed handler (infra/schedules.ts: Sweep). */
export const handler = createSweepHandler(productionDeps);
