// Errors of the Lambda shell (functions/): a base class with a stable `code`, `cause` kept.
import { ClaimsError } from "../../core/errors.ts";

/** A `Resource.<Name>` the handler needs is not linked to the function, or its properties are malformed. */
export class ResourceLinkError extends ClaimsError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("RESOURCE_LINK", message, options);
  }
}

/** The bundled configuration (agent contract, scenarios) could not be read or is invalid. */
export class ConfigLoadError extends ClaimsError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("CONFIG_LOAD", message, options);
  }
}

/** The registry refused the configured agent: no handler that needs the agent may run. */
export class AgentRefusedError extends ClaimsError {
  constructor(message: string) {
    super("AGENT_REFUSED", message);
  }
}

/** A queue message that is not JSON or does not match its schema: reported as a batch item failure (it ends in the DLQ). */
export class InvalidMessageError extends ClaimsError {
  constructor(
    message: string,
    readonly issues: readonly { path: string; message: string }[] = [],
  ) {
    super("INVALID_MESSAGE", message);
  }
}

/** A message the core asked to retry (e.g. a retryable LLM failure before the final attempt). */
export class RetryLaterError extends ClaimsError {
  constructor(message: string) {
    super("RETRY_LATER", message);
  }
}

/** A record of a large batch the handler had no time left for: left untouched, reported for a redelivery. */
export class OutOfTimeError extends RetryLaterError {
  constructor(remainingMs: number, reserveMs: number) {
    super(`not started: ${remainingMs} ms left of the invocation, under the ${reserveMs} ms kept in reserve`);
  }
}

/** Thrown when the success sample rate is not a number from 0 to 1. */
export class LogSettingError extends ClaimsError {
  constructor(variable: string, value: string) {
    super("LOG_SETTING", `${variable} must be a number from 0 to 1, got "${value}"`);
  }
}

/** A route of ROUTES has no entry in ROUTE_DOCS (or a path parameter without a description). */
export class OpenApiError extends ClaimsError<"OPENAPI_UNDESCRIBED"> {
  constructor(message: string) {
    super("OPENAPI_UNDESCRIBED", message);
  }
}
