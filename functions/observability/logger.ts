// Structured JSON logs (Powertools Logger). Info lines carry ids and outcomes only: never customer
// text, claim bodies or secrets. The one line a handler writes per message or request that went well
// ("message handled", "request handled") is a success line: written for a sampled share of them
// (CLAIMS_SUCCESS_LOG_SAMPLE_RATE, 0.01 on AWS: infra/lambda.ts), each carrying `sample_rate` so counts
// can be scaled back; warnings and errors are always written. At a million claims a month the success
// lines cost ~$1 at INFO and cents sampled.
import { Logger } from "@aws-lambda-powertools/logger";
import { LogSettingError } from "./errors.ts";

/** What handlers log through (a Powertools Logger, or a stand-in in tests). */
export type HandlerLogger = Pick<Logger, "debug" | "info" | "warn" | "error">;

/** Log levels accepted by `createLogger`. */
export type LogLevelName = "DEBUG" | "INFO" | "WARN" | "ERROR" | "SILENT";

/** The environment variable with the share (0–1) of success lines written; unset: every one. */
const SUCCESS_LOG_SAMPLE_RATE_ENV = "CLAIMS_SUCCESS_LOG_SAMPLE_RATE";

/** The success sample rate of `env` (1 when unset); throws LogSettingError for anything but a number in [0, 1]. */
export function successSampleRateFrom(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const raw = env[SUCCESS_LOG_SAMPLE_RATE_ENV]?.trim();
  if (raw === undefined || raw === "") return 1;
  const rate = Number(raw);
  if (!Number.isFinite(rate) || rate < 0 || rate > 1) throw new LogSettingError(SUCCESS_LOG_SAMPLE_RATE_ENV, raw);
  return rate;
}

/** A Powertools Logger with sampled success lines. */
class ClaimsLogger extends Logger {
  readonly #rate: number;
  readonly #random: () => number;

  constructor(options: ConstructorParameters<typeof Logger>[0], successSampleRate: number, random: () => number) {
    super(options);
    this.#rate = successSampleRate;
    this.#random = random;
  }

  /** Writes `message` at INFO for a sampled share of calls (all of them at rate 1), with `sample_rate`. */
  success(message: string, fields: Record<string, unknown>): void {
    if (this.#rate >= 1 || this.#random() < this.#rate) this.info(message, { ...fields, sample_rate: this.#rate });
  }
}

/** Options of `createLogger` beyond the level. */
type LoggerOptions = {
  /** Share of success lines written (default: CLAIMS_SUCCESS_LOG_SAMPLE_RATE, else 1). */
  successSampleRate?: number;
  /** Source of the sampling decisions (tests), default Math.random. */
  random?: () => number;
};

/** A Powertools logger for `serviceName` (POWERTOOLS_SERVICE_NAME wins on AWS); level from POWERTOOLS_LOG_LEVEL unless given. */
export function createLogger(serviceName: string, logLevel?: LogLevelName, options: LoggerOptions = {}): ClaimsLogger {
  const rate = options.successSampleRate ?? successSampleRateFrom();
  if (!(rate >= 0 && rate <= 1)) throw new LogSettingError(SUCCESS_LOG_SAMPLE_RATE_ENV, String(rate));
  return new ClaimsLogger({ serviceName, ...(logLevel ? { logLevel } : {}) }, rate, options.random ?? Math.random);
}

/** Logs a success line: sampled through a `ClaimsLogger`, at INFO through any other logger (stand-ins in tests). */
export function logSuccess(logger: HandlerLogger, message: string, fields: Record<string, unknown>): void {
  if (logger instanceof ClaimsLogger) logger.success(message, fields);
  else logger.info(message, fields);
}

/** The loggable part of an error: name, code and message (no stack, no cause chain with payloads). */
export function errorFields(error: unknown): { name: string; code?: string; message: string } {
  if (!(error instanceof Error)) return { name: "NonError", message: String(error) };
  const code = (error as { code?: unknown }).code;
  return { name: error.name, ...(typeof code === "string" ? { code } : {}), message: error.message };
}
