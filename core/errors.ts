// The one base class of every error this app throws: a stable, machine-readable `code` and the `cause` kept.
// Thrown errors are for broken infrastructure, wiring or invariants; business outcomes are returned, never thrown.

/** Base class of every thrown error of the app; `code` is stable, `cause` is kept. */
export class ClaimsError<Code extends string = string> extends Error {
  /** A stable, machine-readable code. */
  readonly code: Code;
  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
  }
}
