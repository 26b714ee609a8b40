// Errors of the logs and metrics setup.
import { ClaimsError } from "../../core/errors.ts";

/** Thrown when the success sample rate is not a number from 0 to 1. */
export class LogSettingError extends ClaimsError {
  constructor(variable: string, value: string) {
    super("LOG_SETTING", `${variable} must be a number from 0 to 1, got "${value}"`);
  }
}
