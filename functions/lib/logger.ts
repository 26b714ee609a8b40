// Structured JSON logs (Powertools Logger). Info lines carry ids and outcomes only: never customer
// text, claim bodies or secrets.
import { Logger } from "@aws-lambda-powertools/logger";

/** What handlers log through (a Powertools Logger, or a stand-in in tests). */
export type HandlerLogger = Pick<Logger, "debug" | "info" | "warn" | "error">;

/** Log levels accepted by `createLogger`. */
export type LogLevelName = "DEBUG" | "INFO" | "WARN" | "ERROR" | "SILENT";

/** A Powertools logger for `serviceName` (POWERTOOLS_SERVICE_NAME wins on AWS); level from POWERTOOLS_LOG_LEVEL unless given. */
export function createLogger(serviceName: string, logLevel?: LogLevelName): Logger {
  return new Logger({ serviceName, ...(logLevel ? { logLevel } : {}) });
}

/** The loggable part of an error: name, code and message (no stack, no cause chain with payloads). */
export function errorFields(error: unknown): { name: string; code?: string; message: string } {
  if (!(error instanceof Error)) return { name: "NonError", message: String(error) };
  const code = (error as { code?: unknown }).code;
  return { name: error.name, ...(typeof code === "string" ? { code } : {}), message: error.message };
}
