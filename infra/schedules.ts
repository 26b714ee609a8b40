// Schedules (EventBridge Scheduler, via SST's CronV2): the sweep that guarantees no claim waits forever,
// and the scenario batch. An invocation the scheduler cannot deliver (the function throttled or missing past
// its retries) goes to the schedules' dead-letter queue, which alarms.
import { functionArgs, llmEnvironment } from "./lambda.ts";
import { BATCH_FILE_NAME, batchCopyFile } from "./policy.ts";
import { deadLetterQueue } from "./queues.ts";
import { settings } from "./settings.ts";

/** Invocations EventBridge Scheduler could not deliver (SST grants the schedules' role SendMessage on it). */
export const schedulesDlq = deadLetterQueue("SchedulesDlq");

/**
 * Every 5 minutes, ticks RUNNING claims past their deadline: the safety net behind the timers queue.
 * No retries anywhere: the next run is never more than 5 minutes away.
 */
export const sweep = new sst.aws.CronV2("Sweep", {
  schedule: "rate(5 minutes)",
  retries: 0,
  dlq: schedulesDlq.arn,
  function: functionArgs("sweep", { retries: 0 }),
});

/**
 * The scheduled batch: submits the claims of CLAIMS_BATCH_FILE (default: the demo scenarios) through
 * the intake path — as a SIMULATION under one simulation_id, with a ledger of its own, unless the operator named
 * a file of their own AND set CLAIMS_BATCH_LIVE=true. Off unless CLAIMS_BATCH_ENABLED=true at deploy (it spends
 * LLM calls); the schedule is CLAIMS_BATCH_SCHEDULE, in UTC. The scheduler retries a failed *invocation* twice;
 * the function itself is not re-run after an error, so a half-submitted batch is never submitted twice.
 */
export const batch = new sst.aws.CronV2("Batch", {
  schedule: settings.batch.schedule,
  timezone: "UTC",
  enabled: settings.batch.enabled,
  retries: 2,
  dlq: schedulesDlq.arn,
  function: functionArgs("batch", {
    // Not to call a model (the worker does): to record which model the run used in SIMULATION_START.
    environment: {
      ...llmEnvironment(),
      CLAIMS_SCENARIOS_PATH: BATCH_FILE_NAME,
      CLAIMS_BATCH_MODE: settings.batch.live ? "live" : "simulation",
    },
    retries: 0,
    copyFiles: [batchCopyFile],
  }),
});
