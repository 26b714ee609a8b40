// Errors the AWS adapters throw: broken infrastructure, bad wiring or corrupt stored data — never a
// business outcome (those are returned through the ports). Every error has a stable `code` and keeps
// the SDK error as `cause`; `retryable` says whether a later attempt can succeed.
import { ClaimsError } from "../../core/errors.ts";

/** Stable codes of the AWS adapters' errors. */
type AwsAdapterErrorCode =
  | "INVALID_ARGUMENT"
  | "DYNAMO_REQUEST_FAILED"
  | "STORED_ITEM_INVALID"
  | "SESSION_CORRUPT"
  | "ITEM_TOO_LARGE"
  | "VERDICT_NOT_FOUND"
  | "TABLE_SETUP_FAILED"
  | "QUEUE_SEND_FAILED"
  | "QUEUE_MESSAGE_INVALID"
  | "MESSAGE_TOO_LARGE"
  | "PUBLISH_FAILED"
  | "PUBLISH_REJECTED"
  | "ACCOUNT_READ_FAILED";

/** Base class of every error thrown by `adapters/aws`. */
export class AwsAdapterError extends ClaimsError<AwsAdapterErrorCode> {
  readonly retryable: boolean;
  constructor(code: AwsAdapterErrorCode, message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(code, message, options);
    this.retryable = options.retryable ?? false;
  }
}

/** A caller passed a value the adapter cannot work with (a bug in the caller, not a business outcome). */
export class InvalidArgumentError extends AwsAdapterError {
  constructor(message: string) {
    super("INVALID_ARGUMENT", message);
  }
}

/** A DynamoDB request failed for another reason than a lost condition (throttling, network, validation). */
export class DynamoRequestError extends AwsAdapterError {
  constructor(message: string, options: { cause?: unknown; retryable?: boolean }) {
    super("DYNAMO_REQUEST_FAILED", message, options);
  }
}

/** An item read from the table does not have the shape the adapter wrote. */
export class StoredItemError extends AwsAdapterError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("STORED_ITEM_INVALID", message, options);
  }
}

/** A stored session whose chunks are missing or do not match the content hash of its head item. */
export class SessionCorruptError extends AwsAdapterError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("SESSION_CORRUPT", message, options);
  }
}

/** Data that cannot be stored even compressed and split (e.g. an outbox over the item limit). */
export class ItemTooLargeError extends AwsAdapterError {
  constructor(message: string) {
    super("ITEM_TOO_LARGE", message);
  }
}

/** `recordExecution` for a proposal key that has no stored verdict (the kernel stores before it executes). */
export class VerdictNotFoundError extends AwsAdapterError {
  constructor(readonly idempotencyKey: string) {
    super("VERDICT_NOT_FOUND", `no verdict stored for ${idempotencyKey}`);
  }
}

/** Creating or seeding the table failed. */
export class TableSetupError extends AwsAdapterError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("TABLE_SETUP_FAILED", message, options);
  }
}

/** Messages that could not be sent to a queue after the bounded retries (or were refused as the sender's fault). */
export class QueueSendError extends AwsAdapterError {
  constructor(
    readonly queue: string,
    message: string,
    options: { cause?: unknown; retryable?: boolean } = {},
  ) {
    super("QUEUE_SEND_FAILED", message, options);
  }
}

/** A message that does not match its queue's zod schema (a producer bug). */
export class QueueMessageError extends AwsAdapterError {
  constructor(
    readonly queue: string,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super("QUEUE_MESSAGE_INVALID", message, options);
  }
}

/** A single message or event over the service's size limit. */
export class MessageTooLargeError extends AwsAdapterError {
  constructor(message: string) {
    super("MESSAGE_TOO_LARGE", message);
  }
}

/** One bus entry that could not be published. */
type PublishFailure = { readonly detailType: string; readonly errorCode: string; readonly errorMessage: string };

/** Bus entries that still failed after the bounded retries, or failed with a non-retryable entry error. */
export class PublishError extends AwsAdapterError {
  readonly failures: readonly PublishFailure[];
  constructor(
    message: string,
    options: { cause?: unknown; retryable?: boolean; failures?: readonly PublishFailure[] } = {},
  ) {
    super("PUBLISH_FAILED", message, options);
    this.failures = options.failures ?? [];
  }
}

/** The whole PutEvents request was refused (e.g. ValidationException); retrying the same request cannot help. */
export class PublishRejectedError extends AwsAdapterError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("PUBLISH_REJECTED", message, options);
  }
}

/** True when an SDK error is a lost condition of a conditional write. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return errorName(error) === "ConditionalCheckFailedException";
}

/** The SDK error's name (`ConditionalCheckFailedException`, `ValidationException`, …), or undefined. */
export function errorName(error: unknown): string | undefined {
  return error instanceof Error ? error.name : undefined;
}

const RETRYABLE_NAMES = new Set([
  "ProvisionedThroughputExceededException",
  "ThrottlingException",
  "RequestLimitExceeded",
  "InternalServerError",
  "InternalFailure",
  "ServiceUnavailable",
  "TimeoutError",
  "RequestTimeout",
  "TransactionConflictException",
]);

/** Whether an SDK error is worth retrying later (throttling, 5xx, network), judged from the SDK's own metadata. */
export function isRetryableSdkError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const meta = error as Error & {
    $retryable?: unknown;
    $fault?: unknown;
    $metadata?: { httpStatusCode?: number };
    code?: unknown;
  };
  if (meta.$retryable) return true;
  if (RETRYABLE_NAMES.has(error.name)) return true;
  const status = meta.$metadata?.httpStatusCode;
  if (status !== undefined) return status >= 500 || status === 429;
  // No HTTP response at all: a connection error.
  return typeof meta.code === "string" && ["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT"].includes(meta.code);
}

/** Short description of an SDK error for messages: `Name: message`. */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** The account's settings or quotas could not be read (no credentials, no rights, no network): the message names the call. */
export class AccountReadError extends AwsAdapterError {
  constructor(call: string, cause: unknown) {
    const name = (cause as { name?: string })?.name ?? "Error";
    super("ACCOUNT_READ_FAILED", `${call} failed: ${name}: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
      retryable: false,
    });
  }
}
