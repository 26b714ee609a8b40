// What the app asks of an AWS account's quotas, and whether an account can give it: the request path's reserved
// concurrency (a deploy setting, CLAIMS_RESERVED_CONCURRENCY), the event sources' maximum concurrency, the bus's
// rules and its publishing rate. Plain data and pure decisions: infra/account.ts applies them at `sst deploy`
// before anything is created, `claims deploy-check` reports every one (infra/README.md#first-deploy).
import { AccountCapacityError, CapacitySettingError } from "./errors.ts";
import { awsFunctionKeys, FUNCTIONS, PAYMENTS_QUEUE, type FunctionKey } from "./functions.ts";
import { PAYMENT_PROVIDER_NAMES } from "./payment-provider.ts";
import { RULE_PATTERNS } from "./bus.ts";
import { QUEUES } from "./queues.ts";

/** Lambda keeps this many concurrent executions of an account unreserved: a reservation may not go below it. */
export const LAMBDA_MIN_UNRESERVED = 100;

/** The Lambda concurrency quota of many new accounts (others start at 50; the documented default is 1,000). */
export const NEW_ACCOUNT_CONCURRENCY = 10;

/** The Service Quotas code of Lambda's "Concurrent executions" (where to ask for more). */
export const LAMBDA_CONCURRENCY_QUOTA_CODE = "L-B99A9384";

/**
 * Whether the deploy reserves concurrency for the request path. `auto` (default): only when the account's quota,
 * read at deploy with lambda:GetAccountSettings, leaves Lambda its 100 unreserved; `on`: always, and the deploy
 * stops before creating anything when the account cannot give it; `off`: never.
 */
export const RESERVED_CONCURRENCY_MODES = ["auto", "on", "off"] as const;
export type ReservedConcurrencyMode = (typeof RESERVED_CONCURRENCY_MODES)[number];

/** The deploy variable of the mode. */
export const RESERVED_CONCURRENCY_VAR = "CLAIMS_RESERVED_CONCURRENCY";

type Env = Readonly<Record<string, string | undefined>>;

/** The deploy settings that decide what the app asks of the account (the same variables `sst deploy` reads). */
export interface CapacitySettings {
  readonly reservedConcurrency: ReservedConcurrencyMode;
  /** LLM_MAX_CONCURRENCY: the event-source cap of each LLM queue (2–1000). */
  readonly llmMaxConcurrency: number;
  /** PAYMENT_PROVIDER is set: the refund executor, its queue and its rule are deployed. */
  readonly payments: boolean;
  /** CLAIMS_API_SUBMIT_RATE_LIMIT: claims accepted per second at most (each publishes a few events). */
  readonly submitRatePerSecond: number;
}

function intFrom(env: Env, variable: string, fallback: number, min: number, max: number): number {
  const raw = env[variable]?.trim() || String(fallback);
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new CapacitySettingError(variable, `an integer from ${min} to ${max}`, raw);
  return value;
}

/** The capacity settings of a deploy environment; a bad value names its variable. */
export function capacitySettingsFrom(env: Env): CapacitySettings {
  const raw = env[RESERVED_CONCURRENCY_VAR]?.trim().toLowerCase() || "auto";
  const mode = RESERVED_CONCURRENCY_MODES.find((m) => m === raw);
  if (mode === undefined)
    throw new CapacitySettingError(RESERVED_CONCURRENCY_VAR, RESERVED_CONCURRENCY_MODES.join(" | "), raw);
  const rate = intFrom(env, "CLAIMS_API_RATE_LIMIT", 50, 1, 10_000);
  return {
    reservedConcurrency: mode,
    llmMaxConcurrency: intFrom(env, "LLM_MAX_CONCURRENCY", 10, 2, 1000),
    payments: (env.PAYMENT_PROVIDER?.trim() ?? "") !== "",
    submitRatePerSecond: intFrom(env, "CLAIMS_API_SUBMIT_RATE_LIMIT", Math.min(10, rate), 1, rate),
  };
}

/** The reservations the app makes when it reserves: each deployed function with a reservedConcurrency. */
export function reservations(payments: boolean): Partial<Record<FunctionKey, number>> {
  const out: Partial<Record<FunctionKey, number>> = {};
  // With payments: the functions any provider deploys (app/payment-providers/; their webhooks differ, not the sum).
  const deployed = payments ? new Set(PAYMENT_PROVIDER_NAMES.flatMap(awsFunctionKeys)) : awsFunctionKeys(undefined);
  for (const key of deployed) {
    const spec: (typeof FUNCTIONS)[FunctionKey] = FUNCTIONS[key];
    if ("reservedConcurrency" in spec) out[key] = spec.reservedConcurrency;
  }
  return out;
}

/** The sum of the reservations. */
export function totalReserved(payments: boolean): number {
  return Object.values(reservations(payments)).reduce((sum, n) => sum + (n ?? 0), 0);
}

/** The concurrency quota an account needs before the app can reserve: Lambda's 100 unreserved plus the reservations. */
export function concurrencyNeededToReserve(payments: boolean): number {
  return LAMBDA_MIN_UNRESERVED + totalReserved(payments);
}

/** The most concurrent executions the queue consumers may take at once: the sum of their event sources' caps. */
export function consumerPeakConcurrency(settings: Pick<CapacitySettings, "llmMaxConcurrency" | "payments">): number {
  const queues = Object.values(QUEUES).reduce(
    (sum, q) => sum + (q.llm ? settings.llmMaxConcurrency : q.maxConcurrency),
    0,
  );
  return queues + (settings.payments ? PAYMENTS_QUEUE.maxConcurrency : 0);
}

/** The rules the app puts on its bus (the payments rule with PAYMENT_PROVIDER). */
export function busRuleCount(payments: boolean): number {
  return Object.keys(RULE_PATTERNS).length + (payments ? 1 : 0);
}

/**
 * Events a claim publishes at most (ClaimVerdict, RefundExecuted; or ClaimNeedsReview, ReviewRequested, and a
 * reviewer's ReviewDecided with its RefundExecuted later): the bus's rate is at most this × the submit rate.
 */
export const EVENTS_PER_CLAIM = 4;

/** What `lambda:GetAccountSettings` says of the account in the region, and what this stage already reserves. */
export interface LambdaConcurrency {
  /** `AccountLimit.ConcurrentExecutions`: the account's quota in the region. */
  readonly concurrentExecutions: number;
  /** `AccountLimit.UnreservedConcurrentExecutions`: what every reservation of the account leaves. */
  readonly unreservedConcurrentExecutions: number;
  /** What this stage's functions reserve already (a redeploy gives it back before it reserves again). */
  readonly reservedByThisStage: number;
}

/** The quotas the app relies on, as read from the account (undefined: the account does not publish it). */
export interface AccountQuotas {
  readonly account?: string;
  readonly region: string;
  readonly lambda: LambdaConcurrency;
  /** EventBridge "PutEvents throttle limit in transactions per second". */
  readonly putEventsPerSecond?: number;
  /** EventBridge "Invocations throttle limit in transactions per second" (rule targets). */
  readonly invocationsPerSecond?: number;
  /** EventBridge rules per event bus. */
  readonly rulesPerBus?: number;
}

/** Whether the deploy reserves concurrency, and why (printed by the deploy and by deploy-check). */
export interface ReservationDecision {
  readonly reserve: boolean;
  readonly why: string;
}

/** Whether an account with these limits can give the reservations and keep Lambda's 100 unreserved. */
function reservationFits(lambda: LambdaConcurrency, payments: boolean): boolean {
  const available = lambda.unreservedConcurrentExecutions + lambda.reservedByThisStage;
  return (
    lambda.concurrentExecutions >= concurrencyNeededToReserve(payments) &&
    available - totalReserved(payments) >= LAMBDA_MIN_UNRESERVED
  );
}

const where = (q: { account?: string; region: string }) =>
  `${q.account ? `account ${q.account} in ` : ""}${q.region || "this region"}`;

/** What the request path would reserve, for messages: "intakeApi 20, authorizer 20". */
function reservedList(payments: boolean): string {
  return Object.entries(reservations(payments))
    .map(([key, n]) => `${key} ${n}`)
    .join(", ");
}

/** How to get more concurrency: the quota to raise. */
export const ASK_FOR_MORE = `ask for more in Service Quotas → AWS Lambda → Concurrent executions (${LAMBDA_CONCURRENCY_QUOTA_CODE}), e.g. \`aws service-quotas request-service-quota-increase --service-code lambda --quota-code ${LAMBDA_CONCURRENCY_QUOTA_CODE} --desired-value 1000\``;

/**
 * The deploy's decision on reserved concurrency, from the mode and what the account says (`read` is the error text
 * when the account could not be read). `on` fails closed: an account that cannot give the reservations, or
 * cannot be read, stops the deploy with an AccountCapacityError that says why and what to do.
 */
export function decideReservation(
  mode: ReservedConcurrencyMode,
  payments: boolean,
  read: { quotas: Pick<AccountQuotas, "account" | "region" | "lambda"> } | { error: string },
): ReservationDecision {
  const needed = concurrencyNeededToReserve(payments);
  if (mode === "off") return { reserve: false, why: `${RESERVED_CONCURRENCY_VAR}=off: no reserved concurrency` };
  if ("error" in read) {
    if (mode === "on")
      throw new AccountCapacityError(
        `${RESERVED_CONCURRENCY_VAR}=on reserves ${totalReserved(payments)} concurrent executions (${reservedList(payments)}), but the account's Lambda quota could not be read (${read.error}); give the deploying principal lambda:GetAccountSettings, or set ${RESERVED_CONCURRENCY_VAR}=auto or off`,
      );
    return {
      reserve: false,
      why: `the account's Lambda quota could not be read (${read.error}): no reserved concurrency (${RESERVED_CONCURRENCY_VAR}=auto)`,
    };
  }
  const { lambda } = read.quotas;
  const has = `${where(read.quotas)} has ${lambda.concurrentExecutions} concurrent executions (${lambda.unreservedConcurrentExecutions} unreserved)`;
  if (reservationFits(lambda, payments))
    return {
      reserve: true,
      why: `${has}: reserving ${reservedList(payments)} leaves Lambda its ${LAMBDA_MIN_UNRESERVED} unreserved (${RESERVED_CONCURRENCY_VAR}=${mode})`,
    };
  if (mode === "on")
    throw new AccountCapacityError(
      `${RESERVED_CONCURRENCY_VAR}=on reserves ${totalReserved(payments)} concurrent executions (${reservedList(payments)}), but ${has}; Lambda keeps ${LAMBDA_MIN_UNRESERVED} unreserved, so the account needs at least ${needed} (and ${LAMBDA_MIN_UNRESERVED} left unreserved by every other reservation). Nothing was created. Set ${RESERVED_CONCURRENCY_VAR}=auto or off, or ${ASK_FOR_MORE}`,
    );
  return {
    reserve: false,
    why: `${has}, below the ${needed} that reserving needs: no reserved concurrency (${RESERVED_CONCURRENCY_VAR}=auto); the request path shares the account's concurrency with the queue consumers`,
  };
}

/** One finding of the pre-deploy check: `stop` blocks the deploy, `warn` is a limit the stage will run into. */
export interface CapacityFinding {
  readonly level: "ok" | "warn" | "stop";
  readonly quota: string;
  readonly message: string;
}

/**
 * Everything the pre-deploy check says of an account for these settings: the reservation decision (a stop when
 * `on` cannot be given), the throttling a small account gets, the bus's rules and publishing rate.
 */
export function assessAccount(settings: CapacitySettings, quotas: AccountQuotas): CapacityFinding[] {
  const findings: CapacityFinding[] = [];
  const lambdaQuota = "Lambda concurrent executions";
  let reserve = false;
  try {
    const decision = decideReservation(settings.reservedConcurrency, settings.payments, { quotas });
    reserve = decision.reserve;
    findings.push({ level: "ok", quota: lambdaQuota, message: decision.why });
  } catch (error) {
    if (!(error instanceof AccountCapacityError)) throw error;
    findings.push({ level: "stop", quota: lambdaQuota, message: error.message });
  }
  const peak = consumerPeakConcurrency(settings) + (reserve ? 0 : totalReserved(settings.payments));
  const pool = quotas.lambda.concurrentExecutions - (reserve ? totalReserved(settings.payments) : 0);
  if (pool < peak)
    findings.push({
      level: "warn",
      quota: lambdaQuota,
      message: `the queue consumers may run ${consumerPeakConcurrency(settings)} at once (LLM_MAX_CONCURRENCY=${settings.llmMaxConcurrency})${reserve ? "" : `, the HTTP API and its authorizer up to ${totalReserved(settings.payments)} more`}, but ${where(quotas)} allows ${quotas.lambda.concurrentExecutions} in all: under load invocations are throttled (the Throttles alarms fire; SQS retries them, up to 5 receives before a DLQ, and API callers get 429/500). It works for a trial; for production ${ASK_FOR_MORE}`,
    });
  const rules = busRuleCount(settings.payments);
  if (quotas.rulesPerBus !== undefined)
    findings.push(
      quotas.rulesPerBus < rules
        ? {
            level: "stop",
            quota: "EventBridge rules per event bus",
            message: `the app puts ${rules} rules on its bus, but ${where(quotas)} allows ${quotas.rulesPerBus}`,
          }
        : {
            level: "ok",
            quota: "EventBridge rules per event bus",
            message: `${rules} of ${quotas.rulesPerBus} (the rest is yours for consumers)`,
          },
    );
  const rate = settings.submitRatePerSecond * EVENTS_PER_CLAIM;
  if (quotas.putEventsPerSecond !== undefined)
    findings.push({
      level: quotas.putEventsPerSecond < rate ? "warn" : "ok",
      quota: "EventBridge PutEvents per second",
      message: `at CLAIMS_API_SUBMIT_RATE_LIMIT=${settings.submitRatePerSecond} the app publishes up to ${rate} events a second; ${where(quotas)} allows ${quotas.putEventsPerSecond}${quotas.putEventsPerSecond < rate ? " (shared by every publisher of the account): publishes would be throttled and retried" : ""}`,
    });
  if (quotas.invocationsPerSecond !== undefined)
    findings.push({
      level: quotas.invocationsPerSecond < rate * 2 ? "warn" : "ok",
      quota: "EventBridge invocations per second",
      message: `each event reaches at most 2 of the app's rules (${rate * 2} deliveries a second at most); ${where(quotas)} allows ${quotas.invocationsPerSecond}`,
    });
  return findings;
}
