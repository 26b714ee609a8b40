// Errors of the shop adapters: a stable `code`, `cause` kept (outages are pipeline/errors.ts OrderSourceUnavailableError).
import { ClaimsError } from "../../core/errors.ts";

/** The order source is configured wrongly (ORDER_SOURCE, ORDER_API_URL, ORDER_API_TOKEN, ORDER_SOURCE_MAX_WAIT_S): fix the setting named. */
export class OrderSourceConfigError extends ClaimsError<"ORDER_SOURCE_CONFIG"> {
  constructor(message: string) {
    super("ORDER_SOURCE_CONFIG", message);
  }
}
