// Errors of the HTML audit report: a base class with a stable `code`, `cause` kept.

/** Base class of the errors thrown by report/. */
export class ReportError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** The events handed to the report are not one simulation's audit (e.g. several SIMULATION_START ids). */
export class ReportInputError extends ReportError {
  constructor(message: string) {
    super("REPORT_INPUT", message);
  }
}

/** The report file could not be written. */
export class ReportWriteError extends ReportError {
  constructor(message: string, cause?: unknown) {
    super("REPORT_WRITE", message, { cause });
  }
}
