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
