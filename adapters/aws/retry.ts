// Bounded retries with exponential backoff for per-entry failures of batch APIs (SQS, EventBridge).
import { InvalidArgumentError } from "./errors.ts";

/** Waits `ms`; injectable so tests do not wait. */
export type Sleep = (ms: number) => Promise<void>;

/** The default sleep: a timer. */
export const defaultSleep: Sleep = (ms) =>
  ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();

/** How often and how patiently failed entries are sent again. */
export type RetryPolicy = {
  /** Attempts per entry including the first (default 4). */
  readonly maxAttempts: number;
  /** Delay before the first retry (default 50 ms); doubles each retry. */
  readonly baseDelayMs: number;
  /** Upper bound of one delay (default 2 000 ms). */
  readonly maxDelayMs: number;
};

/** The default policy: 4 attempts, 50 ms doubling, at most 2 s between attempts. */
const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 50, maxDelayMs: 2_000 };

/** The policy with overrides applied and checked. */
export function retryPolicy(overrides: Partial<RetryPolicy> | undefined, what: string): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY, ...overrides };
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1)
    throw new InvalidArgumentError(`${what}: retry.maxAttempts must be a positive integer, got ${policy.maxAttempts}`);
  if (!(policy.baseDelayMs >= 0) || !(policy.maxDelayMs >= 0))
    throw new InvalidArgumentError(`${what}: retry delays must be non-negative`);
  return policy;
}

/** Delay before retry number `retry` (1-based): exponential, capped, with half of it jittered. */
export function backoffDelayMs(policy: RetryPolicy, retry: number): number {
  const full = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return full / 2 + Math.random() * (full / 2);
}
