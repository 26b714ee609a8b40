// Errors of the embedded stack (emulators and local resources): a base class with a stable `code`, `cause` kept.
import { ClaimsError } from "../core/errors.ts";

/** Base class of the errors thrown by local/emulators.ts and local/resources.ts. */
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
