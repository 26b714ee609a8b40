// Errors of the SQS event-source poller: a base class with a stable `code`, `cause` kept.
import { ClaimsError } from "../../core/errors.ts";

/** Base class of every error the poller throws or reports through `onError`. */
export class PollerError extends ClaimsError {}

/** Options that cannot work (batch size out of range, unknown queue). */
export class PollerConfigError extends PollerError {
  constructor(message: string, cause?: unknown) {
    super("POLLER_CONFIG", message, { cause });
  }
}

/** The handler threw or timed out: the whole batch goes back to the queue. */
export class HandlerFailedError extends PollerError {
  constructor(message: string, cause?: unknown) {
    super("HANDLER_FAILED", message, { cause });
  }
}

/** The handler returned a response Lambda would reject: the whole batch goes back to the queue. */
export class InvalidBatchResponseError extends PollerError {
  constructor(message: string) {
    super("INVALID_BATCH_RESPONSE", message);
  }
}

/** A ReceiveMessage, DeleteMessageBatch or GetQueueAttributes call failed. */
export class SqsCallError extends PollerError {
  constructor(message: string, cause?: unknown) {
    super("SQS_CALL", message, { cause });
  }
}

/** `drained()` gave up: the queue or in-flight work did not empty in time. */
export class DrainTimeoutError extends PollerError {
  constructor(message: string) {
    super("DRAIN_TIMEOUT", message);
  }
}

/** `drained()` was called on a poller that is stopped. */
export class PollerStoppedError extends PollerError {
  constructor(message: string) {
    super("POLLER_STOPPED", message);
  }
}
