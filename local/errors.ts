// Errors of the embedded stack (emulators, local resources, the stack, its state directory and fault injection):
// a base class with a stable `code`, `cause` kept.
import { ClaimsError } from "../core/errors.ts";
import type { StateHolder } from "./state-lock.ts";

/** Base class of the errors thrown by local/. */
export class LocalStackError extends ClaimsError {}

/** An emulator did not start (the others were stopped again). */
export class EmulatorStartError extends LocalStackError {
  constructor(message: string, cause?: unknown) {
    super("EMULATOR_START", message, { cause });
  }
}

/** A local queue definition that cannot be created as asked. */
export class QueueDefinitionError extends LocalStackError {
  constructor(message: string) {
    super("QUEUE_DEFINITION", message);
  }
}

/** The emulator refused to create or describe a queue. */
export class QueueCreationError extends LocalStackError {
  constructor(message: string, cause?: unknown) {
    super("QUEUE_CREATION", message, { cause });
  }
}

/** An SST resource entry that cannot become an `SST_RESOURCE_<Name>` variable. */
export class SstResourceError extends LocalStackError {
  constructor(message: string) {
    super("SST_RESOURCE", message);
  }
}

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

/** Options of the local stack that cannot go together (e.g. a handler thread with test hooks). */
export class InvalidStackOptionError extends LocalStackError {
  constructor(message: string) {
    super("INVALID_STACK_OPTION", message);
  }
}

/** The local HTTP front could not listen (port in use, bad host). */
export class HttpFrontError extends LocalStackError {
  constructor(message: string, cause?: unknown) {
    super("HTTP_FRONT", message, { cause });
  }
}

/** The crash a test injected: the process running the handler died right after a call succeeded. */
export class InjectedCrashError extends LocalStackError {
  constructor(message: string) {
    super("INJECTED_CRASH", message);
  }
}

/** The stores and the bus journal broke an invariant; the message lists every violation. */
export class InvariantViolationError extends LocalStackError {
  constructor(readonly violations: readonly string[]) {
    super("INVARIANT_VIOLATED", `${violations.length} invariant violation(s):\n  - ${violations.join("\n  - ")}`);
  }
}

/** The state directory is held by another running process. */
export class StateDirBusyError extends LocalStackError {
  constructor(
    message: string,
    readonly holder: StateHolder,
  ) {
    super("STATE_DIR_BUSY", message);
  }
}

/** The data directory is open to other users and cannot be tightened. */
export class DataDirModeError extends LocalStackError {
  readonly exitCode = 2;
  constructor(message: string, cause?: unknown) {
    super("DATA_DIR_MODE", message, { cause });
  }
}

/** The refund executor reported a failed delivery: the local bus retries it, then dead-letters it. */
export class RefundDeliveryError extends LocalStackError {
  constructor(message: string) {
    super("REFUND_DELIVERY_FAILED", message);
  }
}

/** CLAIMS_REVIEW_WEBHOOK_URL is not a URL the webhook can be sent to. */
export class ReviewWebhookSettingError extends LocalStackError {
  constructor(message: string) {
    super("REVIEW_WEBHOOK_SETTING", message);
  }
}
