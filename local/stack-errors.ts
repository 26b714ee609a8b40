// Errors of the local stack (local/stack.ts, stack-runtime.ts, http-front.ts).
import { LocalStackError } from "./emulators-errors.ts";

/** A claim did not reach DECIDED or NEEDS_REVIEW in time; the message names the claim, its last status and the queues. */
export class SettleTimeoutError extends LocalStackError {
  constructor(
    message: string,
    readonly claimId: string,
    readonly lastStatus: string,
  ) {
    super("SETTLE_TIMEOUT", message);
  }
}

/** The local stack could not be set up (table, queues, configuration or agent handshake); what started was stopped. */
export class StackStartError extends LocalStackError {
  constructor(message: string, cause?: unknown) {
    super("STACK_START", message, { cause });
  }
}

/** The local HTTP front could not listen (port in use, bad host). */
export class HttpFrontError extends LocalStackError {
  constructor(message: string, cause?: unknown) {
    super("HTTP_FRONT", message, { cause });
  }
}
