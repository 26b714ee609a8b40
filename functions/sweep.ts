// Sweep (EventBridge Scheduler, every 5 minutes): nudges claims that have not moved for a while —
// a RUNNING claim gets a crew.tick (its overdue steps time out), a RECEIVED one is started again —,
// moves a claim that nudges no longer move to NEEDS_REVIEW STALLED, and completes interrupted review
// decisions (pipeline: sweepStalledClaims). The safety net behind the timers queue: no claim waits forever.
// Each run also reports the review backlog (PendingReviews, OldestPendingReviewAge), which the backlog alarms watch,
// and the live refunds near their legal deadline (RefundsDueSoon, docs/returns.md#the-refund-due-alarm).
// With the policy's `retention.customer_text_days`, each run then erases the personal data of the claims received
// longer ago than that (pipeline/retention.ts, docs/customer-data.md#retention), within the same time budget.
// A run stops paging SWEEP_RESERVE_SECONDS before its Lambda timeout and leaves the rest to the next run.
import * as z from "zod";
import { FUNCTIONS, QUEUES, SWEEP_RESERVE_SECONDS, visibilityTimeoutSeconds } from "../app/manifest.ts";
import type { QueueRole } from "../app/manifest.ts";
import type { PipelineDeps, PipelineSettings } from "../pipeline/deps.ts";
import type { RefundDueLine } from "../core/kernel/refund-due.ts";
import { refundsDueNow } from "../pipeline/refund-due.ts";
import { sweepRetention } from "../pipeline/retention.ts";
import { sweepStalledClaims } from "../pipeline/timers.ts";
import { productionDeps } from "./composition/compose.ts";
import type { DepsSource } from "./composition/compose.ts";
import { productionRetention } from "./composition/retention.ts";
import type { SweepRetention } from "./composition/retention.ts";
import { createLogger } from "./observability/logger.ts";
import type { HandlerLogger } from "./observability/logger.ts";
import { measured, reviewBacklogRecords } from "./observability/metrics.ts";
import type { HandlerMetrics } from "./observability/metrics.ts";

/** How long a run may page: the function's timeout less what finishing and reporting need. */
export const SWEEP_BUDGET_MS = (FUNCTIONS.sweep.timeoutSeconds - SWEEP_RESERVE_SECONDS) * 1000;

/**
 * Sweep settings from the environment: CLAIMS_SWEEP_STALLED_AFTER_MS (default 5 min), CLAIMS_SWEEP_LIMIT
 * (claims read per page, default 100; pages are read while time is left), CLAIMS_SWEEP_MAX_TICKS (nudges without
 * progress before STALLED, default 3), CLAIMS_SWEEP_BUDGET_MS (how long a run may page, default SWEEP_BUDGET_MS).
 */
const SweepSettingsSchema = z.object({
  CLAIMS_SWEEP_STALLED_AFTER_MS: z.coerce.number().int().min(1_000).default(300_000),
  CLAIMS_SWEEP_LIMIT: z.coerce.number().int().min(1).max(1_000).default(100),
  CLAIMS_SWEEP_MAX_TICKS: z.coerce.number().int().min(1).max(1_000).default(3),
  CLAIMS_SWEEP_BUDGET_MS: z.coerce.number().int().min(0).max(SWEEP_BUDGET_MS).default(SWEEP_BUDGET_MS),
});

/**
 * The longest a claim can legitimately sit unchanged while a queue retries its work: a message's receives
 * before its DLQ, each waiting out the visibility timeout of a consumer that died or hung (the extraction
 * queue's 3 × 720 s is the longest).
 */
const LONGEST_REDELIVERY_MS = Math.max(
  ...Object.entries(QUEUES).map(([role, q]) => q.maxReceives * visibilityTimeoutSeconds(role as QueueRole) * 1000),
);

/**
 * The nudges without progress before a claim is STALLED: the configured number, but never so few that a step
 * still within its timeout, or a message its queue is still redelivering, could be taken for stuck (found by
 * npm run chaos: with 3 ticks, free-text claims whose model hung past the function timeout were ended STALLED
 * while their extraction was still being retried).
 */
export function effectiveMaxTicks(
  configured: number,
  stalledAfterMs: number,
  timeouts: PipelineSettings["timeouts"],
): number {
  const longestSilenceMs = Math.max(timeouts.analystMs, timeouts.decisionMs, timeouts.fixerMs, LONGEST_REDELIVERY_MS);
  return Math.max(configured, Math.ceil(longestSilenceMs / stalledAfterMs) + 1);
}

/** The sweep over `getDeps` (and `retention`: the policy's, if it sets one); the scheduler's event carries nothing it needs. */
export function createSweepHandler(
  getDeps: DepsSource,
  options: {
    logger?: HandlerLogger;
    metrics?: HandlerMetrics;
    env?: Record<string, string | undefined>;
    retention?: () => SweepRetention | undefined;
  } = {},
) {
  const logger = options.logger ?? createLogger("claims-sweep");
  const settings = SweepSettingsSchema.parse(options.env ?? process.env);
  return measured(
    "sweep",
    getDeps,
    options.metrics,
    (deps, metrics) =>
      async (): Promise<{
        examined: number;
        restarted: number;
        ticked: number;
        stalled: number;
        reviewsRepaired: number;
        refundsDue: RefundDueLine[];
        erased?: number;
      }> => {
        const d = await deps();
        const stalledAfterMs = settings.CLAIMS_SWEEP_STALLED_AFTER_MS;
        const deadline = d.clock.now() + settings.CLAIMS_SWEEP_BUDGET_MS;
        const result = await sweepStalledClaims(d, {
          stalledAfterMs,
          pageSize: settings.CLAIMS_SWEEP_LIMIT,
          maxTicks: effectiveMaxTicks(settings.CLAIMS_SWEEP_MAX_TICKS, stalledAfterMs, d.settings.timeouts),
          hasTime: () => d.clock.now() < deadline,
        });
        const counts = {
          examined: result.examined,
          restarted: result.restarted.length,
          ticked: result.ticked.length,
          stalled: result.stalled.length,
          reviewsRepaired: result.reviewsRepaired,
        };
        logger.info("sweep done", {
          ...counts,
          claims: [...result.restarted, ...result.ticked],
          stalled: result.stalled,
        });
        if (result.stalled.length > 0)
          logger.warn("claims stalled: moved to NEEDS_REVIEW", { stalled: result.stalled });
        // A proposal sent again is a kernel message that never finished: its dead-letter queue says why.
        if (result.resent)
          logger.warn("proposals sent to the kernel again: no verdict finished their claims", {
            claims: result.resent,
          });
        if (result.returnsRepaired)
          logger.warn("returns completed after a crash: refund released or review opened", {
            claims: result.returnsRepaired,
          });
        if (result.stoppedEarly)
          logger.warn("sweep out of time: the claims not reached are left to the next run", {
            examined: result.examined,
            budgetMs: settings.CLAIMS_SWEEP_BUDGET_MS,
          });
        const erased = await applyRetention(d, options.retention?.(), () => d.clock.now() < deadline, logger);
        // Past due: the policy's review_due_days / review_due_hours (docs/reviews.md#the-desk).
        for (const record of await reviewBacklogRecords(d.reviews, d.clock.now(), 1_000, d.agent.review?.dueMs))
          metrics.emit(record);
        // The refund-due alarm: only the unsettled refunds are read (docs/returns.md#the-refund-due-alarm).
        const refundsDue = await refundsDueNow(d, d.clock.now());
        metrics.emit({ metrics: { RefundsDueSoon: refundsDue.length }, dimensions: [{ Flow: "live" }] });
        if (refundsDue.length > 0) logger.warn("refunds near their legal deadline, not settled", { refundsDue });
        return { ...counts, refundsDue, ...(erased === undefined ? {} : { erased }) };
      },
  );
}

/** The retention pass of a run: how many claims it erased (undefined: the policy keeps the words); counts only logged. */
async function applyRetention(
  d: PipelineDeps,
  retention: SweepRetention | undefined,
  hasTime: () => boolean,
  logger: HandlerLogger,
): Promise<number | undefined> {
  if (retention === undefined) return undefined;
  const { vault } = retention;
  if (vault === undefined) {
    logger.error("retention.customer_text_days is set but the sweep composes no vault: nothing erased", {});
    return 0;
  }
  const result = await sweepRetention(
    { claims: d.claims, audit: d.audit, destroy: (claimId) => vault.destroy(claimId), watermark: retention.watermark },
    { days: retention.days, now: d.clock.now(), hasTime },
  );
  logger.info("retention done", {
    days: retention.days,
    receivedBefore: result.receivedBefore,
    examined: result.examined,
    erased: result.erased.length,
  });
  if (result.stoppedEarly)
    logger.warn("retention out of time: the claims not reached are erased by the next run", {
      examined: result.examined,
    });
  return result.erased.length;
}

/** The deployed handler (infra/schedules.ts: Sweep). */
export const handler = createSweepHandler(productionDeps, { retention: productionRetention });
