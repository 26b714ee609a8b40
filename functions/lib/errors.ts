// Errors of the Lambda shell (functions/): a base class with a stable `code`, `cause` kept.

/** Base class of every error thrown by functions/. */
export class FunctionsError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A `Resource.<Name>` the handler needs is not linked to the function, or its properties are malformed. */
export class ResourceLinkError extends FunctionsError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("RESOURCE_LINK", message, options);
  }
}

/** The bundled configuration (agent contract, scenarios) could not be read or is invalid. */
export class ConfigLoadError extends FunctionsError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("CONFIG_LOAD", message, options);
  }
}

/** The registry refused the configured agent: no handler that needs the agent may run. */
export class AgentRefusedError extends FunctionsError {
  constructor(message: string) {
    super("AGENT_REFUSED", message);
  }
}

/** A queue message that is not JSON or does not match its schema: reported as a batch item failure (it ends in the DLQ). */
export class InvalidMessageError extends FunctionsError {
  constructor(message: string, readonly issues: readonly { path: string; message: string }[] = []) {
    super("INVALID_MESSAGE", message);
  }
}

/** A message the core asked to retry (e.g. a retryable LLM failure before the final attempt). */
export class RetryLaterError extends FunctionsError {
  constructor(message: string) {
    super("RETRY_LATER", message);
  }
}
