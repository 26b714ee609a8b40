// Errors of the chaos runner: a bad command line, and the crash a flow injects into a handler's process.
import { ClaimsError } from "../core/errors.ts";

/** Something the chaos runner itself cannot go on with (a bad option, a message that fails its schema). */
export class ChaosError extends ClaimsError {}

/** The process running a handler died right after a side-effecting call (or with the whole stack). */
export class ChaosCrashError extends ClaimsError<"INJECTED_CRASH"> {
  constructor(message: string) {
    super("INJECTED_CRASH", message);
  }
}
