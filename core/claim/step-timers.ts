// The step timers setting (CLAIMS_STEP_TIMERS), defined once: the pipeline reads it at the edge, infra/ at deploy.

/**
 * Who arms a claim's first step-deadline timer (docs/architecture.md#timers-and-the-sweep): `lazy` (the default) —
 * the sweep's first tick of a claim still open after its cutoff, so a claim decided in seconds sends no timer message;
 * `eager` — the crew's start, for its first step deadline. Ticks re-arm the timer either way.
 */
export const STEP_TIMER_MODES = ["lazy", "eager"] as const;

/** A step timers setting. */
export type StepTimerMode = (typeof STEP_TIMER_MODES)[number];

/** The default: the sweep arms a claim's first step timer. */
export const DEFAULT_STEP_TIMER_MODE: StepTimerMode = "lazy";

/** The variable that sets it. */
export const STEP_TIMERS_VAR = "CLAIMS_STEP_TIMERS";

/** The mode a value names (case and surrounding blanks ignored; empty or unset: the default); undefined: none. */
export function stepTimerModeOf(raw: string | undefined): StepTimerMode | undefined {
  const value = raw?.trim().toLowerCase() ?? "";
  if (value === "") return DEFAULT_STEP_TIMER_MODE;
  return STEP_TIMER_MODES.find((m) => m === value);
}
