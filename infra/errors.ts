// Errors the infra definition throws while `sst deploy` evaluates it: all are configuration mistakes.
import { ClaimsError } from "../core/errors.ts";

/** A deploy-time setting is present but unusable: the message names the variable and what it expects. */
export class InfraSettingError extends ClaimsError {
  constructor(variable: string, expected: string, got: string) {
    super("INFRA_SETTING_INVALID", `${variable}=${JSON.stringify(got)} is invalid: expected ${expected}.`);
  }
}

/** A deploy-time setting the stage needs is missing: the message names the variable and why it is needed. */
export class InfraSettingMissingError extends ClaimsError {
  constructor(variable: string, why: string) {
    super("INFRA_SETTING_MISSING", `${variable} is not set: ${why}.`);
  }
}

/** A file named by a deploy-time setting (the policy, the batch's claims) cannot be deployed: the message names it and every problem. */
export class InfraFileError extends ClaimsError {
  constructor(variable: string, file: string, problem: string) {
    super("INFRA_FILE_INVALID", `${variable}=${file} cannot be deployed: ${problem}`);
  }
}

export class RecordingError extends ClaimsError<"SST_RECORDING"> {
  constructor(message: string) {
    super("SST_RECORDING", message);
  }
}

/** The infra modules were evaluated out of order (a bug of sst.config.ts): the message names the step. */
export class InfraOrderError extends ClaimsError<"INFRA_ORDER"> {
  constructor(message: string) {
    super("INFRA_ORDER", message);
  }
}
