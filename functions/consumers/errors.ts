// Errors of the queue consumers: a message to drop, or one to retry later.
import { ClaimsError } from "../../core/errors.ts";

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
