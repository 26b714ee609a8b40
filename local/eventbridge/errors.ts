// Errors of the local EventBridge: a base class with a stable `code`, `cause` kept.

/** Base class of every error the local bus throws. */
export class LocalBusError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** An event pattern the matcher does not accept (bad syntax or an unsupported operator). */
export class InvalidEventPatternError extends LocalBusError {
  constructor(message: string) {
    super("INVALID_EVENT_PATTERN", message);
  }
}

/** A rule or target registration that cannot work (unknown rule, duplicate name). */
export class BusConfigError extends LocalBusError {
  constructor(message: string) {
    super("BUS_CONFIG", message);
  }
}

/** The bus could not start, write its journal or stop. */
export class BusIoError extends LocalBusError {
  constructor(message: string, cause?: unknown) {
    super("BUS_IO", message, { cause });
  }
}
