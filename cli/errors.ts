// Errors of the `claims` command: usage and connection problems (exit 2), a stable `code`.
import { ClaimsError } from "../core/errors.ts";

/** A usage problem of the command line (exit 2). */
export class CliError extends ClaimsError<"CLI_USAGE"> {
  constructor(message: string) {
    super("CLI_USAGE", message);
  }
}

/** A usage or connection problem of `claims list` (exit 2). */
export class ListCliError extends ClaimsError<"LIST_CLI"> {
  constructor(message: string) {
    super("LIST_CLI", message);
  }
}

/** Raised for a usage or connection problem (exit 2), never for an API refusal. */
export class ReviewCliError extends ClaimsError<"REVIEW_CLI"> {
  constructor(message: string) {
    super("REVIEW_CLI", message);
  }
}
