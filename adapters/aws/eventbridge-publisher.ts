// EventPublisher on EventBridge PutEvents: at most 10 entries and 256 KiB (AWS's entry size) per call,
// entries that fail are sent again with backoff (bounded), entry errors that cannot heal are not
// retried, and a request the service refuses (ValidationException) is never sent again.
import { DescribeEventBusCommand, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import type { EventBridgeClient, PutEventsRequestEntry } from "@aws-sdk/client-eventbridge";
import type { EventPublisher } from "../../pipeline/ports.ts";
import { KERNEL_SOURCE, parseBusEntry } from "../../core/kernel/events.ts";
import type { BusEntry } from "../../core/kernel/events.ts";
import {
  describeError,
  errorName,
  InvalidArgumentError,
  isRetryableSdkError,
  MessageTooLargeError,
  PublishError,
  PublishRejectedError,
} from "./errors.ts";
import { backoffDelayMs, defaultSleep, retryPolicy } from "./retry.ts";
import type { RetryPolicy, Sleep } from "./retry.ts";

/** Options of `createEventBridgePublisher`. */
type EventBridgePublisherOptions = {
  readonly client: EventBridgeClient;
  readonly busName: string;
  /** `Source` of every entry (default `claims.kernel`). */
  readonly source?: string;
  /** Retries of failed entries (default 4 attempts, 50 ms doubling). */
  readonly retry?: Partial<RetryPolicy>;
  readonly sleep?: Sleep;
  /**
   * Check once, before the first publish, that the bus exists (DescribeEventBus): on AWS a PutEvents to a bus that
   * does not exist succeeds and the events are dropped, so without the check a wrong bus name loses every event
   * silently. The deployed functions turn it on (once per container); a bus that does not exist then fails every
   * publish loudly (PublishRejectedError), and a check that could not run is tried again on the next publish.
   */
  readonly checkBus?: boolean;
  /** Request limits; change only if AWS changes them (tests raise them to provoke a service-side refusal). */
  readonly limits?: { readonly maxEntries?: number; readonly maxRequestBytes?: number };
};

/** PutEvents limits. */
const EVENTBRIDGE_LIMITS = { maxEntries: 10, maxRequestBytes: 256 * 1024 } as const;

/**
 * Entry error codes that a retry cannot fix: AWS documents InternalException and ThrottlingException as the
 * transient ones; permissions (NotAuthorizedFor…, AccessDenied), the account, the entry itself and its
 * redaction fail the same way every time.
 */
const PERMANENT_ENTRY_ERRORS = new Set([
  "MalformedDetail",
  "InvalidArgument",
  "NotFoundException",
  "AccessDeniedException",
  "NotAuthorized",
  "NotAuthorizedForSourceException",
  "NotAuthorizedForDetailTypeException",
  "InvalidAccountIdException",
  "RedactionFailure",
  "ValidationException",
]);

/** Request-level errors that a retry of the same request cannot fix. */
const REJECTED_REQUEST_ERRORS = new Set([
  "ValidationException",
  "ResourceNotFoundException",
  "AccessDeniedException",
  "UnrecognizedClientException",
  "SerializationException",
]);

/** An entry's size as AWS counts it: UTF-8 bytes of Source, DetailType, Detail and Resources, plus 14 for Time. */
export function putEventsEntrySize(entry: PutEventsRequestEntry): number {
  const bytes = (s: string | undefined) => (s === undefined ? 0 : Buffer.byteLength(s, "utf8"));
  let size = entry.Time === undefined ? 0 : 14;
  size += bytes(entry.Source) + bytes(entry.DetailType) + bytes(entry.Detail);
  for (const r of entry.Resources ?? []) size += bytes(r);
  return size;
}

type Pending = { index: number; entry: PutEventsRequestEntry; size: number; attempts: number };
type Failure = { detailType: string; errorCode: string; errorMessage: string };

/** An EventPublisher on one EventBridge bus through the injected client. */
export function createEventBridgePublisher(options: EventBridgePublisherOptions): EventPublisher {
  const { client, busName } = options;
  if (typeof busName !== "string" || busName === "")
    throw new InvalidArgumentError("createEventBridgePublisher: busName is required");
  const source = options.source ?? KERNEL_SOURCE;
  const policy = retryPolicy(options.retry, "createEventBridgePublisher");
  const sleep = options.sleep ?? defaultSleep;
  const maxEntries = options.limits?.maxEntries ?? EVENTBRIDGE_LIMITS.maxEntries;
  const maxBytes = options.limits?.maxRequestBytes ?? EVENTBRIDGE_LIMITS.maxRequestBytes;

  const toEntry = (e: BusEntry, i: number): PutEventsRequestEntry => {
    // Every entry is checked against its event's schema before anything is sent: a consumer never sees an event the contract does not allow.
    const checked = parseBusEntry(e);
    if (!checked.ok) throw new InvalidArgumentError(`publish: entry ${i + 1}: ${checked.message}`);
    return { EventBusName: busName, Source: source, DetailType: e.detailType, Detail: JSON.stringify(e.detail) };
  };

  /** Next request: as many waiting entries as fit, in order. */
  const takeRequest = (queue: Pending[]): Pending[] => {
    const out: Pending[] = [];
    let bytes = 0;
    while (queue.length > 0 && out.length < maxEntries && bytes + queue[0]!.size <= maxBytes) {
      const next = queue.shift()!;
      out.push(next);
      bytes += next.size;
    }
    return out;
  };

  let busChecked: Promise<void> | undefined;
  const checkBus = async (): Promise<void> => {
    try {
      await client.send(new DescribeEventBusCommand({ Name: busName }));
    } catch (error) {
      const name = errorName(error) ?? "";
      if (name === "ResourceNotFoundException")
        throw new PublishRejectedError(
          `the event bus ${busName} does not exist (DescribeEventBus: ${describeError(error)}); nothing is published to it`,
          { cause: error },
        );
      if (REJECTED_REQUEST_ERRORS.has(name))
        throw new PublishRejectedError(`the event bus ${busName} could not be checked: ${describeError(error)}`, {
          cause: error,
        });
      throw new PublishError(`the event bus ${busName} could not be checked: ${describeError(error)}`, {
        cause: error,
        retryable: isRetryableSdkError(error),
      });
    }
  };
  const ensureBus = (): Promise<void> => {
    busChecked ??= checkBus().catch((error: unknown) => {
      // A bus that does not exist stays refused; a check that failed for another reason runs again next time.
      if (!(error instanceof PublishRejectedError)) busChecked = undefined;
      throw error;
    });
    return busChecked;
  };

  return {
    async publish(busEntries) {
      if (busEntries.length === 0) return;
      if (options.checkBus) await ensureBus();
      const waiting: Pending[] = busEntries.map((e, index) => {
        const entry = toEntry(e, index);
        const size = putEventsEntrySize(entry);
        if (size > maxBytes)
          throw new MessageTooLargeError(
            `publish: ${e.detailType} entry ${index + 1} is ${size} bytes, over EventBridge's ${maxBytes} per request`,
          );
        return { index, entry, size, attempts: 0 };
      });
      const failed: Failure[] = [];
      let retryRound = 0;
      while (waiting.length > 0) {
        const retries: Pending[] = [];
        // Send everything waiting, request by request; collect what failed for the next round.
        while (waiting.length > 0) {
          const request = takeRequest(waiting);
          request.forEach((p) => p.attempts++);
          let results;
          try {
            results = (await client.send(new PutEventsCommand({ Entries: request.map((p) => p.entry) }))).Entries ?? [];
          } catch (error) {
            const name = errorName(error) ?? "";
            if (REJECTED_REQUEST_ERRORS.has(name)) {
              throw new PublishRejectedError(
                `PutEvents to ${busName} was refused (${describeError(error)}); ${request.length} entries not published`,
                { cause: error },
              );
            }
            throw new PublishError(`PutEvents to ${busName} failed: ${describeError(error)}`, {
              cause: error,
              retryable: isRetryableSdkError(error),
            });
          }
          request.forEach((p, i) => {
            const r = results[i];
            if (r?.EventId && !r.ErrorCode) return;
            const failure = {
              detailType: p.entry.DetailType!,
              errorCode: r?.ErrorCode ?? "MissingResult",
              errorMessage: r?.ErrorMessage ?? "no result for this entry",
            };
            if (PERMANENT_ENTRY_ERRORS.has(failure.errorCode) || p.attempts >= policy.maxAttempts) failed.push(failure);
            else retries.push(p);
          });
        }
        if (failed.length > 0) break;
        if (retries.length === 0) break;
        await sleep(backoffDelayMs(policy, ++retryRound));
        waiting.push(...retries.sort((a, b) => a.index - b.index));
      }
      if (failed.length > 0) {
        const detail = failed.map((f) => `${f.detailType}: ${f.errorCode} ${f.errorMessage}`).join("; ");
        const permanent = failed.some((f) => PERMANENT_ENTRY_ERRORS.has(f.errorCode));
        throw new PublishError(
          `${failed.length} of ${busEntries.length} events not published to ${busName}: ${detail}`,
          { retryable: !permanent, failures: failed },
        );
      }
    },
  };
}
