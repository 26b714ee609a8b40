// Errors the infra definition throws while `sst deploy` evaluates it: all are configuration mistakes.
import { ClaimsError } from "../core/errors.ts";

/** A deploy-time setting is present but unusable: the message names the variable and what it expects. */
export class InfraSettingError extends ClaimsError {
  constructor(variable: string, expected: string, got: string) {
    super("INFRA_SETTING_INVALID", `${variable}=${JSON.stringify(got)} is invalid: expected ${expected}.`);
  }
}
