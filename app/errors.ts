// Errors of the app manifest: a setting that the manifest's facts cannot serve (the message names it).
import { ClaimsError } from "../core/errors.ts";

/** An order source variable (ORDER_SOURCE, ORDER_API_URL, …) that is set wrongly: the message names it and what it expects. */
export class OrderSourceSettingError extends ClaimsError<"ORDER_SOURCE_SETTING"> {
  constructor(message: string) {
    super("ORDER_SOURCE_SETTING", message);
  }
}

/** A queue's event-source settings in app/manifest.ts break Lambda's limits (the deploy would fail): the message names the queue and the limit. */
export class EventSourceSettingError extends ClaimsError<"EVENT_SOURCE_SETTING"> {
  constructor(role: string, problem: string) {
    super("EVENT_SOURCE_SETTING", `queue ${role}: ${problem}`);
  }
}

/** A capacity setting (CLAIMS_RESERVED_CONCURRENCY, LLM_MAX_CONCURRENCY, …) is unusable: the message names it and what it expects. */
export class CapacitySettingError extends ClaimsError<"CAPACITY_SETTING"> {
  constructor(variable: string, expected: string, got: string) {
    super("CAPACITY_SETTING", `${variable}=${JSON.stringify(got)} is invalid: expected ${expected}.`);
  }
}

/** The account cannot give what the settings ask (reserved concurrency above its quota): the message says what to do. */
export class AccountCapacityError extends ClaimsError<"ACCOUNT_CAPACITY"> {
  constructor(message: string) {
    super("ACCOUNT_CAPACITY", message);
  }
}
