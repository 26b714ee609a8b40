// The one shape of every SQS-triggered handler: parse each record with zod, call core once, and
// answer with a partial batch response (Powertools), so one bad or failing message never re-runs
// its neighbours. A message that is not valid JSON or fails its schema is logged and reported as a
// batch item failure: SQS retries it up to maxReceiveCount, then moves it to the DLQ.
import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import type { z } from "zod";
import { InvalidMessageError, OutOfTimeError, RetryLaterError } from "./errors.ts";
import { errorFields, logSuccess } from "../observability/logger.ts";
import type { HandlerLogger } from "../observability/logger.ts";
import type { HandlerMetrics } from "../observability/metrics.ts";
import { VersionConflictError } from "../../core/errors.ts";
import type { FunctionKey } from "../../app/manifest.ts";

/** An SQS handler as Lambda (or the local poller) calls it. */
export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/** What a consumer does with one parsed message; the returned outcome is logged. */
interface ConsumerSpec<M> {
  readonly schema: z.ZodType<M>;
  readonly handle: (message: M, record: SQSRecord) => Promise<unknown>;
}

/** Parses a record body as JSON and checks it against `schema`; throws InvalidMessageError naming the problem. */
export function parseMessage<M>(body: string, schema: z.ZodType<M>): M {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (e) {
    throw new InvalidMessageError(`message body is not JSON (${(e as Error).message})`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({
      path: i.path.map(String).join(".") || "(message)",
      message: i.message,
    }));
    throw new InvalidMessageError(
      `message does not match its schema: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`,
      issues,
    );
  }
  return parsed.data;
}

/** Where a consumer counts the messages it reports failed (MessageFailures, app/metrics-catalog.ts). */
export interface FailureMetrics {
  readonly metrics: Pick<HandlerMetrics, "emit">;
  readonly consumer: FunctionKey;
}

/**
 * Whether a reported failure is one: a planned retry (RetryLaterError: waiting for the model or the order source, or
 * no time left in a large batch) and a lost version race (a concurrent writer won; the redelivery continues from its
 * state) are how the consumers work, not failures.
 */
function isFailure(error: unknown): boolean {
  return !(error instanceof RetryLaterError) && !(error instanceof VersionConflictError);
}

/** Counts `count` failed messages of the consumer (nothing without metrics). */
function countFailures(failures: FailureMetrics | undefined, count: number): void {
  if (failures && count > 0)
    failures.metrics.emit({ metrics: { MessageFailures: count }, dimensions: [{ Consumer: failures.consumer }] });
}

/**
 * How a consumer of large batches goes through them: one record after another, each started only while more
 * than `reserveMs` of the invocation is left; the records it had no time for are reported as failures
 * (untouched, they come back after the visibility timeout) instead of the timeout failing the whole batch.
 */
interface LargeBatchOptions {
  readonly inOrder: true;
  readonly reserveMs: number;
}

/**
 * Builds the Lambda handler for `spec` (records in parallel, or with `large` in order within the time left); every
 * message it reports failed for a real failure is counted in `failures`.
 */
export function sqsConsumer<M>(
  spec: ConsumerSpec<M>,
  logger: HandlerLogger,
  large?: LargeBatchOptions,
  failures?: FailureMetrics,
): SqsHandler {
  const handleRecord = async (record: SQSRecord, context?: Context): Promise<void> => {
    const ids = { messageId: record.messageId, receiveCount: record.attributes.ApproximateReceiveCount };
    try {
      const remainingMs = large && context?.getRemainingTimeInMillis ? context.getRemainingTimeInMillis() : undefined;
      if (large && remainingMs !== undefined && remainingMs <= large.reserveMs)
        throw new OutOfTimeError(remainingMs, large.reserveMs);
      const outcome = await spec.handle(parseMessage(record.body, spec.schema), record);
      logSuccess(logger, "message handled", { ...ids, outcome: typeof outcome === "string" ? outcome : "done" });
    } catch (error) {
      if (error instanceof InvalidMessageError)
        logger.error("invalid message: it will reach the DLQ after its retries", {
          ...ids,
          issues: error.issues,
          error: errorFields(error),
        });
      else if (error instanceof RetryLaterError)
        logger.warn("message will be retried", { ...ids, reason: error.message });
      else logger.error("message failed", { ...ids, error: errorFields(error) });
      if (isFailure(error)) countFailures(failures, 1);
      throw error;
    }
  };
  return async (event, context) => {
    // A processor per invocation: it holds the batch's state, and the local poller may invoke concurrently.
    return processPartialResponse(event, handleRecord, new BatchProcessor(EventType.SQS), {
      context,
      throwOnFullBatchFailure: false,
      ...(large ? { processInParallel: false } : {}),
    });
  };
}

/** What a FIFO consumer does with the consecutive messages of one message group. */
interface GroupConsumerSpec<M> {
  readonly schema: z.ZodType<M>;
  readonly handleGroup: (messages: M[], records: SQSRecord[]) => Promise<unknown>;
}

/**
 * A FIFO consumer that hands each message group's records to core in ONE call (the orchestrator
 * then loads and saves a claim's session once per batch, not once per message). Order is kept per
 * group: an invalid record fails with every record after it in its group, and a failed call fails
 * its whole group, which SQS redelivers in order; other groups are not affected.
 */
export function sqsFifoGroupConsumer<M>(
  spec: GroupConsumerSpec<M>,
  logger: HandlerLogger,
  failures?: FailureMetrics,
): SqsHandler {
  return async (event) => {
    const groups = new Map<string, SQSRecord[]>();
    for (const record of event.Records) {
      const id = record.attributes.MessageGroupId ?? record.messageId;
      groups.set(id, [...(groups.get(id) ?? []), record]);
    }
    const failed: string[] = [];
    for (const [groupId, records] of groups) {
      const messages: M[] = [];
      let invalidAt = records.length;
      for (const [i, record] of records.entries()) {
        try {
          messages.push(parseMessage(record.body, spec.schema));
        } catch (error) {
          const issues = error instanceof InvalidMessageError ? error.issues : [];
          logger.error("invalid message: it will reach the DLQ after its retries", {
            messageId: record.messageId,
            groupId,
            issues,
            error: errorFields(error),
          });
          invalidAt = i;
          // The invalid record is a failure; the ones after it in its group wait for it (redelivered in order).
          countFailures(failures, 1);
          break;
        }
      }
      try {
        if (messages.length > 0) {
          const outcome = await spec.handleGroup(messages, records.slice(0, invalidAt));
          logSuccess(logger, "message group handled", {
            groupId,
            messages: messages.length,
            outcome: Array.isArray(outcome) ? outcome.join(",") : "done",
          });
        }
        failed.push(...records.slice(invalidAt).map((r) => r.messageId));
      } catch (error) {
        if (error instanceof RetryLaterError)
          logger.warn("message group will be retried", { groupId, reason: error.message });
        else logger.error("message group failed", { groupId, messages: records.length, error: errorFields(error) });
        if (isFailure(error)) countFailures(failures, invalidAt);
        failed.push(...records.map((r) => r.messageId));
      }
    }
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}
