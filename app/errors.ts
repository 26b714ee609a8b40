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
