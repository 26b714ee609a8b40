// Errors of the HTML audit report: a base class with a stable `code`, `cause` kept.
import { ClaimsError } from "../core/errors.ts";

/** The events handed to the report are not one simulation's audit (e.g. several SIMULATION_START ids). */
export class ReportInputError extends ClaimsError {
  constructor(message: string) {
    super("REPORT_INPUT", message);
  }
}

/** The report file could not be written. */
export class ReportWriteError extends ClaimsError {
  constructor(message: string, cause?: unknown) {
    super("REPORT_WRITE", message, { cause });
  }
}
