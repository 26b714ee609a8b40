// Errors of the local EventBridge: a base class with a stable `code`, `cause` kept.
import { ClaimsError } from "../../core/errors.ts";

/** An event pattern the matcher does not accept (bad syntax or an unsupported operator). */
export class InvalidEventPatternError extends ClaimsError {
  constructor(message: string) {
    super("INVALID_EVENT_PATTERN", message);
  }
}

/** A rule or target registration that cannot work (unknown rule, duplicate name). */
export class BusConfigError extends ClaimsError {
  constructor(message: string) {
    super("BUS_CONFIG", message);
  }
}

/** The bus could not start, write its journal or stop. */
export class BusIoError extends ClaimsError {
  constructor(message: string, cause?: unknown) {
    super("BUS_IO", message, { cause });
  }
}

export class PatternSyntaxError extends ClaimsError<"PATTERN_SYNTAX"> {
  constructor(message: string) {
    super("PATTERN_SYNTAX", message);
  }
}

export class RequestError extends ClaimsError<"BAD_REQUEST"> {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super("BAD_REQUEST", message);
  }
}
