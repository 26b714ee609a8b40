// Deploy-time settings of the SST app: read once from the stage and the environment of `sst deploy`,
// validated here, and passed to the other infra files as plain values.
import { InfraSettingError } from "./errors.ts";

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

function readSchedule(): `cron(${string})` | `rate(${string})` {
  const raw = read("CLAIMS_BATCH_SCHEDULE", "cron(0 6 * * ? *)");
  if (/^cron\(.+\)$/.test(raw) || /^rate\(.+\)$/.test(raw)) return raw as `cron(${string})` | `rate(${string})`;
  throw new InfraSettingError("CLAIMS_BATCH_SCHEDULE", "an EventBridge Scheduler expression cron(...) or rate(...)", raw);
}

const isProduction = $app.stage === "production";
/** Function and API access logs: a month is enough to debug a dev stage; production keeps a year for audits. */
const logRetention: LogRetention = isProduction ? "1 year" : "1 month";

/** Every deploy-time choice of the app, resolved for the current stage. */
export const settings = {
  stage: $app.stage,
  isProduction,
  logRetention,
  /** The bus is `claims` in production (SPEC §7.3); other stages get a suffix so stages can share an account. */
  busName: isProduction ? "claims" : `claims-${$app.stage}`,
  llm: {
    provider: readProvider(),
    baseUrl: read("LLM_BASE_URL", "https://api.openai.com/v1"),
    model: read("LLM_MODEL", "gpt-4o-mini"),
    /** Cap on concurrent LLM-calling invocations per queue (the provider's rate limit, not Lambda, is the bottleneck). */
    maxConcurrency: readInt("LLM_MAX_CONCURRENCY", 10, 2, 1000),
  },
  api: {
    /** Steady-state requests per second and burst for the whole HTTP API stage. */
    rateLimit: readInt("CLAIMS_API_RATE_LIMIT", 50, 1, 10_000),
    burstLimit: readInt("CLAIMS_API_BURST_LIMIT", 100, 1, 5_000),
  },
  batch: {
    /** The daily scenario batch costs LLM calls, so it is off unless a stage turns it on. */
    enabled: readBool("CLAIMS_BATCH_ENABLED", false),
    schedule: readSchedule(),
  },
} as const;
