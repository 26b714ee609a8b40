// Deploy-time settings of the SST app: read once from the stage and the environment of `sst deploy`,
// validated here, and passed to the other infra files as plain values.
import { resolve } from "node:path";
import { InfraFileError, InfraSettingError, InfraSettingMissingError } from "./errors.ts";
import { orderSourceSettingsFrom } from "../app/order-source.ts";
import {
  PAYMENT_PROVIDER_NAMES,
  PAYMENT_PROVIDER_VAR,
  paymentEnvironment,
  paymentProviderNamed,
  paymentProviderVariable,
} from "../app/payment-provider.ts";
import type { PaymentProviderName } from "../app/payment-provider.ts";
import { stageBusName } from "../app/bus.ts";
import { LOGGING } from "../app/manifest.ts";
import {
  DEFAULT_STEP_TIMER_MODE,
  STEP_TIMER_MODES,
  STEP_TIMERS_VAR,
  stepTimerModeOf,
} from "../core/claim/step-timers.ts";
import type { StepTimerMode } from "../core/claim/step-timers.ts";

/** Log retention SST accepts (a subset of its RETENTION keys; the ones this app uses). */
export type LogRetention = "1 month" | "3 months" | "1 year";

/** LLM providers the handlers understand (see scenarios/config.yaml `llm_defaults.provider`). */
const LLM_PROVIDERS = ["openai", "rules"] as const;
type LlmProvider = (typeof LLM_PROVIDERS)[number];

function read(variable: string, fallback: string): string {
  const value = process.env[variable]?.trim();
  return value === undefined || value === "" ? fallback : value;
}

function readInt(variable: string, fallback: number, min: number, max: number): number {
  const raw = read(variable, String(fallback));
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new InfraSettingError(variable, `an integer from ${min} to ${max}`, raw);
  }
  return value;
}

function readBool(variable: string, fallback: boolean): boolean {
  const raw = read(variable, String(fallback)).toLowerCase();
  if (raw !== "true" && raw !== "false") throw new InfraSettingError(variable, `"true" or "false"`, raw);
  return raw === "true";
}

function readProvider(): LlmProvider {
  const raw = read("LLM_PROVIDER", "openai");
  const provider = LLM_PROVIDERS.find((p) => p === raw);
  if (provider === undefined) throw new InfraSettingError("LLM_PROVIDER", LLM_PROVIDERS.join(" | "), raw);
  return provider;
}

function readBatchMode(): "off" | "batch" {
  const raw = read("LLM_BATCH_MODE", "off");
  if (raw !== "off" && raw !== "batch") throw new InfraSettingError("LLM_BATCH_MODE", "off | batch", raw);
  return raw;
}

/**
 * Who arms a claim's first step-deadline timer (CLAIMS_STEP_TIMERS, docs/architecture.md#timers-and-the-sweep): `lazy`
 * (default), the sweep's first tick of a claim still open after its cutoff; `eager`, the crew's start (one timer
 * message per claim, ~$1.12 per million claims; a lost step recovered at its deadline instead of within the sweep's).
 */
function readStepTimers(): StepTimerMode {
  const raw = read(STEP_TIMERS_VAR, DEFAULT_STEP_TIMER_MODE);
  const mode = stepTimerModeOf(raw);
  if (mode === undefined) throw new InfraSettingError(STEP_TIMERS_VAR, STEP_TIMER_MODES.join(" | "), raw);
  return mode;
}

/** Lambda's system log levels (its own lines: platform.start, platform.report, …; app/functions.ts LOGGING). */
const SYSTEM_LOG_LEVELS = ["DEBUG", "INFO", "WARN"] as const;
type SystemLogLevel = (typeof SYSTEM_LOG_LEVELS)[number];

/**
 * Lambda's system log level (CLAIMS_LAMBDA_SYSTEM_LOG_LEVEL, default app/functions.ts LOGGING: WARN, no platform.start
 * and platform.report lines). INFO writes them again, for a memory-sizing run: `platform.report` is the only record of
 * Max Memory Used and Init Duration (~375 bytes per invocation, $0.60 per million structured claims).
 */
function readSystemLogLevel(): SystemLogLevel {
  const raw = read("CLAIMS_LAMBDA_SYSTEM_LOG_LEVEL", LOGGING.systemLogLevel);
  const level = SYSTEM_LOG_LEVELS.find((l) => l === raw.toUpperCase());
  if (level === undefined)
    throw new InfraSettingError("CLAIMS_LAMBDA_SYSTEM_LOG_LEVEL", SYSTEM_LOG_LEVELS.join(" | "), raw);
  return level;
}

function readSchedule(): `cron(${string})` | `rate(${string})` {
  const raw = read("CLAIMS_BATCH_SCHEDULE", "cron(0 6 * * ? *)");
  if (/^cron\(.+\)$/.test(raw) || /^rate\(.+\)$/.test(raw)) return raw as `cron(${string})` | `rate(${string})`;
  throw new InfraSettingError(
    "CLAIMS_BATCH_SCHEDULE",
    "an EventBridge Scheduler expression cron(...) or rate(...)",
    raw,
  );
}

const isProduction = $app.stage === "production";

/** The stage that may run the bundled demo policy (scenarios/config.yaml) and nothing else may. */
export const DEMO_STAGE = "demo";
/** The demo's policy and claims, bundled with the repository. */
export const DEMO_POLICY_FILE = "scenarios/config.yaml";
const DEMO_BATCH_FILE = "scenarios/scenarios.yaml";
const sameFile = (a: string, b: string) => resolve(a) === resolve(b);

/**
 * The refund policy file (limit, window, categories, the agent's contract) the operator owns: CLAIMS_POLICY_FILE.
 * The demo's scenarios/config.yaml deploys to the `demo` stage only, where it is the default; every other stage
 * must name its own file, so no real stage ever runs the demo policy by accident.
 */
function readPolicyFile(): { file: string; demo: boolean } {
  const file = read("CLAIMS_POLICY_FILE", "");
  const isDemoStage = $app.stage === DEMO_STAGE;
  if (file === "") {
    if (isDemoStage) return { file: DEMO_POLICY_FILE, demo: true };
    throw new InfraSettingMissingError(
      "CLAIMS_POLICY_FILE",
      `stage ${$app.stage} needs your refund policy file (start from infra/policy.example.yaml); the demo's ${DEMO_POLICY_FILE} deploys only to the stage "${DEMO_STAGE}"`,
    );
  }
  const demo = sameFile(file, DEMO_POLICY_FILE);
  if (demo && !isDemoStage) {
    throw new InfraFileError(
      "CLAIMS_POLICY_FILE",
      file,
      `it is the demo's policy, which deploys only to the stage "${DEMO_STAGE}" (npx sst deploy --stage ${DEMO_STAGE}); stage ${$app.stage} needs your own policy file (start from infra/policy.example.yaml)`,
    );
  }
  return { file, demo };
}

/**
 * The scheduled batch's claims file (CLAIMS_BATCH_FILE, default the demo scenarios) and whether its claims are
 * real (CLAIMS_BATCH_LIVE=true): by default every run is a simulation with a ledger of its own. Real claims need
 * both: a file of the operator's own and the explicit flag.
 */
function readBatchFile(): { file: string; live: boolean } {
  const file = read("CLAIMS_BATCH_FILE", DEMO_BATCH_FILE);
  const live = readBool("CLAIMS_BATCH_LIVE", false);
  if (live && sameFile(file, DEMO_BATCH_FILE)) {
    throw new InfraFileError(
      "CLAIMS_BATCH_FILE",
      file,
      "the demo scenarios only ever run as a simulation; CLAIMS_BATCH_LIVE=true needs CLAIMS_BATCH_FILE to name a claims file of your own",
    );
  }
  return { file, live };
}

/** An alarm notification endpoint: an email address or an https:// URL (SNS protocols email, https). */
function readAlarmEndpoint(): { protocol: "email" | "https"; endpoint: string } | undefined {
  const endpoint = read("CLAIMS_ALARM_ENDPOINT", "");
  if (endpoint === "") {
    if (!isProduction) return undefined;
    throw new InfraSettingMissingError(
      "CLAIMS_ALARM_ENDPOINT",
      "the production stage must notify someone of its alarms: give an email address or an https:// URL",
    );
  }
  if (/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(endpoint)) return { protocol: "email", endpoint };
  if (/^https:\/\/[^\s]+$/.test(endpoint)) return { protocol: "https", endpoint };
  throw new InfraSettingError("CLAIMS_ALARM_ENDPOINT", "an email address or an https:// URL", endpoint);
}

/**
 * The HTTP API's throttles. API Gateway HTTP APIs throttle per route: the stage's default applies to each route
 * on its own, and `POST /claims` (each submission starts LLM calls) gets a tighter limit of its own, which may
 * not exceed the default.
 */
function readApiThrottle() {
  const rateLimit = readInt("CLAIMS_API_RATE_LIMIT", 50, 1, 10_000);
  const burstLimit = readInt("CLAIMS_API_BURST_LIMIT", 100, 1, 5_000);
  const submitRateLimit = readInt("CLAIMS_API_SUBMIT_RATE_LIMIT", Math.min(10, rateLimit), 1, rateLimit);
  const submitBurstLimit = readInt("CLAIMS_API_SUBMIT_BURST_LIMIT", Math.min(20, burstLimit), 1, burstLimit);
  return { rateLimit, burstLimit, submitRateLimit, submitBurstLimit };
}

/** Lambda names are `claims-crew-<stage>-<function>`, at most 64 characters: the longest function key leaves 33 for the stage. */
const MAX_STAGE_LENGTH = 33;
if ($app.stage.length > MAX_STAGE_LENGTH) {
  throw new InfraSettingError(
    "--stage",
    `at most ${MAX_STAGE_LENGTH} characters (functions are named claims-crew-<stage>-<function>, 64 at most)`,
    $app.stage,
  );
}
/** Function and API access logs: a month is enough to debug a dev stage; production keeps a year for audits. */
const logRetention: LogRetention = isProduction ? "1 year" : "1 month";

/**
 * The payment provider the refund executor pays through (PAYMENT_PROVIDER: a provider of app/payment-provider.ts,
 * e.g. stripe or simulated). Unset: no executor, no webhook route, and RefundExecuted is the end (paying is the
 * consumer's job). A provider's webhook route is deployed only when it has one (simulated has none).
 */
function readPaymentProvider(): PaymentProviderName | undefined {
  const raw = paymentProviderVariable(process.env);
  if (raw === undefined) return undefined;
  const provider = paymentProviderNamed(raw);
  if (provider) return provider.name;
  throw new InfraSettingError(
    PAYMENT_PROVIDER_VAR,
    `${PAYMENT_PROVIDER_NAMES.join(" or ")} (or unset: no refund executor)`,
    raw,
  );
}

/**
 * The reviewers' own OpenID Connect issuer and audiences (CLAIMS_REVIEWER_OIDC_ISSUER, CLAIMS_REVIEWER_OIDC_AUDIENCE,
 * the names `claims serve` reads too): both or neither. Neither: the app creates a Cognito user pool for them
 * (infra/reviewers.ts). API Gateway fetches `<issuer>/.well-known/openid-configuration`, so the issuer is https.
 */
export function reviewerOidcFrom(
  env: Readonly<Record<string, string | undefined>>,
): { issuer: string; audiences: string[] } | undefined {
  const issuer = env.CLAIMS_REVIEWER_OIDC_ISSUER?.trim() ?? "";
  const audiences = (env.CLAIMS_REVIEWER_OIDC_AUDIENCE ?? "")
    .split(",")
    .map((a) => a.trim())
    .filter((a) => a !== "");
  if (issuer === "" && audiences.length === 0) return undefined;
  if (issuer === "")
    throw new InfraSettingMissingError(
      "CLAIMS_REVIEWER_OIDC_ISSUER",
      "CLAIMS_REVIEWER_OIDC_AUDIENCE is set, so the review routes need your issuer too (https://…); set both, or neither for the app's own Cognito user pool",
    );
  if (audiences.length === 0)
    throw new InfraSettingMissingError(
      "CLAIMS_REVIEWER_OIDC_AUDIENCE",
      "CLAIMS_REVIEWER_OIDC_ISSUER is set, so the review routes need the audience (client id) reviewers' tokens are issued for, comma-separated for several; set both, or neither for the app's own Cognito user pool",
    );
  if (!/^https:\/\/[^\s/]+(\/\S*)?$/.test(issuer))
    throw new InfraSettingError("CLAIMS_REVIEWER_OIDC_ISSUER", "the issuer's https:// URL (its `iss` claim)", issuer);
  return { issuer: issuer.replace(/\/+$/, ""), audiences };
}

const paymentProvider = readPaymentProvider();

/**
 * The reviewers' second factor in the app's Cognito pool (CLAIMS_REVIEWER_MFA): `required` (TOTP at every
 * sign-in) in production, where it cannot be turned down; `optional` by default elsewhere (dev stages), where a
 * reviewer may still set one up.
 */
function readReviewerMfa(): "required" | "optional" {
  const raw = read("CLAIMS_REVIEWER_MFA", isProduction ? "required" : "optional");
  if (raw !== "required" && raw !== "optional")
    throw new InfraSettingError("CLAIMS_REVIEWER_MFA", "required or optional", raw);
  if (isProduction && raw !== "required")
    throw new InfraSettingError(
      "CLAIMS_REVIEWER_MFA",
      "required on the production stage (reviewers approve refunds: a password alone is not enough)",
      raw,
    );
  return raw;
}

/**
 * Cognito threat protection in audit mode (CLAIMS_REVIEWER_THREAT_PROTECTION, default `audit`): it logs risky
 * sign-ins (compromised credentials, unusual devices) without blocking; it needs the pool's Plus feature plan and
 * is only used in the regions that have it (infra/reviewers.ts). `off`: the Essentials plan, no threat protection.
 */
function readThreatProtection(): "audit" | "off" {
  const raw = read("CLAIMS_REVIEWER_THREAT_PROTECTION", "audit");
  if (raw !== "audit" && raw !== "off")
    throw new InfraSettingError("CLAIMS_REVIEWER_THREAT_PROTECTION", "audit or off", raw);
  return raw;
}

/** Every deploy-time choice of the app, resolved for the current stage. */
export const settings = {
  stage: $app.stage,
  isProduction,
  logRetention,
  /** Lambda's system log level of every function (CLAIMS_LAMBDA_SYSTEM_LOG_LEVEL; INFO for memory sizing). */
  systemLogLevel: readSystemLogLevel(),
  /** The bus is `claims` in production; other stages get a suffix so stages can share an account. */
  busName: stageBusName($app.stage),
  llm: {
    provider: readProvider(),
    baseUrl: read("LLM_BASE_URL", "https://api.openai.com/v1"),
    model: read("LLM_MODEL", "gpt-4o-mini"),
    /** Cap on concurrent LLM-calling invocations per queue (the provider's rate limit, not Lambda, is the bottleneck). */
    maxConcurrency: readInt("LLM_MAX_CONCURRENCY", 10, 2, 1000),
    /** How long claims wait for an unreachable model before a person gets them (docs/llm.md: the outage hold); 0 = no hold. */
    outageHoldS: readInt("CLAIMS_LLM_OUTAGE_HOLD_S", 3600, 0, 604_800),
    /** `batch`: the scheduled batch's claims ask the model through the OpenAI Batch API (docs/llm.md, "Batch mode"). */
    batchMode: readBatchMode(),
    /** How long such a claim waits for its batch before a person gets it. */
    batchHoldS: readInt("LLM_BATCH_HOLD_S", 90_000, 60, 604_800),
  },
  /** Who arms a claim's first step-deadline timer: the sweep (`lazy`, default) or the crew's start (`eager`). */
  stepTimers: readStepTimers(),
  api: readApiThrottle(),
  batch: {
    /** The daily scenario batch costs LLM calls, so it is off unless a stage turns it on. */
    enabled: readBool("CLAIMS_BATCH_ENABLED", false),
    schedule: readSchedule(),
    ...readBatchFile(),
  },
  /** The refund policy file and whether it is the bundled demo's. */
  policy: readPolicyFile(),
  /** The order source: the table (default) or the shop's order API, whose token is the OrderApiToken secret. */
  // ORDER_SOURCE, ORDER_API_URL, ORDER_SOURCE_MAX_WAIT_S, ORDER_API_TIMEOUT_MS (docs/orders.md): a wrong one stops the deploy.
  orders: orderSourceSettingsFrom(process.env),
  /** The reviewers' OpenID Connect issuer and audiences; undefined: the app's own Cognito user pool (infra/reviewers.ts). */
  reviewerOidc: reviewerOidcFrom(process.env),
  /** The app's reviewer pool: TOTP MFA required or optional, and threat protection (audit) or none. */
  reviewerPool: { mfa: readReviewerMfa(), threatProtection: readThreatProtection() },
  /** The refund executor's payment provider; undefined: not deployed. */
  paymentProvider,
  /** The payment functions' variables: PAYMENT_PROVIDER and the provider's deployed settings set at deploy. */
  paymentEnvironment: paymentProvider === undefined ? undefined : paymentEnvironment(paymentProvider, process.env),
  alarms: {
    /** Who is notified (SNS subscription); required in production. */
    notify: readAlarmEndpoint(),
    /** Pending live reviews that page someone (PendingReviews ≥ this for 15 minutes). */
    reviewBacklog: readInt("CLAIMS_ALARM_REVIEW_BACKLOG", 20, 1, 1_000),
    /** Hours the oldest pending live review may wait before it pages someone. */
    reviewAgeHours: readInt("CLAIMS_ALARM_REVIEW_AGE_HOURS", 24, 1, 24 * 14),
    /**
     * Hours a message may wait unread on the queues downstream systems read (verdicts, review, refunds) before it
     * pages someone: well before the 14 days after which SQS deletes it.
     */
    unreadHours: readInt("CLAIMS_ALARM_UNREAD_HOURS", 24, 1, 24 * 13),
  },
} as const;
