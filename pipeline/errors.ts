// Errors of the application layer (pipeline/): a stable `code`, `cause` kept; adapters translate theirs.
import { ClaimsError } from "../core/errors.ts";

/** The refund kept losing reservation races, or the stored verdict contradicts itself: the message is retried. */
export class KernelRetryError extends ClaimsError<"KERNEL_RETRY"> {
  constructor(message: string) {
    super("KERNEL_RETRY", message);
  }
}

/** A query the repositories cannot run (a bug of the caller: the API validates its parameters first). */
export class ClaimQueryError extends ClaimsError<"INVALID_CLAIM_QUERY"> {
  constructor(message: string) {
    super("INVALID_CLAIM_QUERY", message);
  }
}

/** CLAIMS_LLM_OUTAGE_HOLD_S is not a number of seconds the pipeline can wait (a configuration error). */
export class OutageHoldSettingError extends ClaimsError<"OUTAGE_HOLD_SETTING"> {
  constructor(message: string) {
    super("OUTAGE_HOLD_SETTING", message);
  }
}

/** CLAIMS_STEP_TIMERS is neither `lazy` nor `eager` (a configuration error). */
export class StepTimersSettingError extends ClaimsError<"STEP_TIMERS_SETTING"> {
  constructor(message: string) {
    super("STEP_TIMERS_SETTING", message);
  }
}

/**
 * The order source could not answer (the shop's order API is down, slow, refused the token or answered
 * something that is not an order): an outage, never a customer outcome. The kernel retries the claim and,
 * after a bound, sends it to a person (`ORDER_SOURCE_UNAVAILABLE`, docs/orders.md).
 */
export class OrderSourceUnavailableError extends ClaimsError<"ORDER_SOURCE_UNAVAILABLE"> {
  constructor(message: string, options?: { cause?: unknown }) {
    super("ORDER_SOURCE_UNAVAILABLE", message, options);
  }
}

/** The payment provider could not be reached or answered a retryable error: the message is retried with the same key. */
export class PaymentUnavailableError extends ClaimsError<"PAYMENT_UNAVAILABLE"> {
  constructor(message: string, options?: { cause?: unknown }) {
    super("PAYMENT_UNAVAILABLE", message, options);
  }
}

/** A sealed field that cannot be read: not a token, or its ciphertext does not match its key (corrupt data). */
export class SealedFieldError extends ClaimsError<"SEALED_FIELD_INVALID"> {
  constructor(message: string, options?: { cause?: unknown }) {
    super("SEALED_FIELD_INVALID", message, options);
  }
}

/** The vault's key store failed (a file that cannot be written, KMS refusing): broken infrastructure. */
export class VaultUnavailableError extends ClaimsError<"VAULT_UNAVAILABLE"> {
  constructor(message: string, options?: { cause?: unknown }) {
    super("VAULT_UNAVAILABLE", message, options);
  }
}

/** A payment rehearsal that would not be one: a real claim's refund, or a provider other than the simulated one. */
export class PaymentRehearsalError extends ClaimsError<"PAYMENT_REHEARSAL_REFUSED"> {
  constructor(message: string, options?: { cause?: unknown }) {
    super("PAYMENT_REHEARSAL_REFUSED", message, options);
  }
}
