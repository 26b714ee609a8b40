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

/** A simulation id that cannot name a folder of `runs/` (a path, `..`, a control character). */
export class RunIdError extends ClaimsError<"RUN_ID"> {
  constructor(simulationId: string) {
    super(
      "RUN_ID",
      `simulation id ${JSON.stringify(simulationId)} cannot name a run: use letters, digits and _ . : - (not . or ..)`,
    );
  }
}

/** A token that cannot be used (too short, an unreadable file): a configuration error, exit 2. */
export class TokenConfigError extends ClaimsError<"TOKEN_CONFIG"> {
  readonly exitCode = 2;
  constructor(message: string) {
    super("TOKEN_CONFIG", message);
  }
}

/** A usage or configuration problem of `claims backtest` (exit 2). */
export class BacktestCliError extends ClaimsError<"CLI_USAGE"> {
  constructor(message: string) {
    super("CLI_USAGE", message);
  }
}
