// Errors the infra definition throws while `sst deploy` evaluates it: all are configuration mistakes.

/** Base class of every infra error; `code` is stable, `cause` is kept. */
export class InfraError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A deploy-time setting is present but unusable: the message names the variable and what it expects. */
export class InfraSettingError extends InfraError {
  constructor(variable: string, expected: string, got: string) {
    super("INFRA_SETTING_INVALID", `${variable}=${JSON.stringify(got)} is invalid: expected ${expected}.`);
  }
}
