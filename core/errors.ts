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

/**
 * A conditional write lost a race: the stored version of `entity` `key` is not the one the writer expected
 * (`actualVersion` when the store knows it). The caller reloads and retries; adapters translate their store's
 * conflict into this.
 */
export class VersionConflictError extends ClaimsError<"VERSION_CONFLICT"> {
  /** The version the store holds, when it says. */
  readonly actualVersion: number | undefined;
  constructor(
    readonly entity: string,
    readonly key: string,
    readonly expectedVersion: number,
    options?: { actualVersion?: number; cause?: unknown },
  ) {
    super(
      "VERSION_CONFLICT",
      options?.actualVersion === undefined
        ? `${entity} ${key} changed concurrently (expected version ${expectedVersion})`
        : `${entity} ${key} is at version ${options.actualVersion}, not the expected ${expectedVersion}; reload and retry`,
      options,
    );
    this.actualVersion = options?.actualVersion;
  }
}
