// WorkQueues on SQS: every message is the JSON of its zod-defined type (pipeline/messages.ts),
// checked before it leaves. Batches honour SendMessageBatch's limits (10 entries, 256 KiB in total);
// entries that fail are sent again with backoff (bounded), and what still fails is thrown naming the queue.
// crew-events is FIFO: group = claim id, deduplication id = `crewMessageDedupeId(message)`. Timers go to a
// standard queue with DelaySeconds = `timerDelaySeconds(dueMs, now)`.
import { createHash } from "node:crypto";
import { SendMessageBatchCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import type { SendMessageBatchRequestEntry, SQSClient } from "@aws-sdk/client-sqs";
import * as z from "zod";
import {
  AgentStepMessageSchema,
  crewMessageDedupeId,
  CrewQueueMessageSchema,
  ExtractionMessageSchema,
  ProposalMessageSchema,
  TimerMessageSchema,
} from "../../pipeline/messages.ts";
import type { Clock, WorkQueues } from "../../pipeline/ports.ts";
import {
  describeError,
  InvalidArgumentError,
  isRetryableSdkError,
  MessageTooLargeError,
  QueueMessageError,
  QueueSendError,
} from "./errors.ts";
import { backoffDelayMs, defaultSleep, retryPolicy } from "./retry.ts";
import type { RetryPolicy, Sleep } from "./retry.ts";

/** SQS delays a message at most 15 minutes. */
const MAX_TIMER_DELAY_S = 900;

/** Seconds to delay a timer message due at `dueMs` (0 when due, capped at 15 minutes). */
export function timerDelaySeconds(dueMs: number, nowMs: number): number {
  return Math.max(0, Math.min(MAX_TIMER_DELAY_S, Math.ceil((dueMs - nowMs) / 1000)));
}

/** The pipeline's queues by role. */
export type SqsQueueUrls = {
  readonly crewEvents: string;
  readonly agentSteps: string;
  readonly proposals: string;
  readonly extraction: string;
  readonly timers: string;
};

/** Options of `createSqsWorkQueues`. */
type SqsWorkQueuesOptions = {
  readonly client: SQSClient;
  readonly urls: SqsQueueUrls;
  /** Wall clock for timer delays. */
  readonly clock: Clock;
  /** Retries of failed batch entries (default 4 attempts, 50 ms doubling). */
  readonly retry?: Partial<RetryPolicy>;
  readonly sleep?: Sleep;
};

/** SQS limits the adapter honours. */
const SQS_LIMITS = {
  maxBatchEntries: 10,
  /** Per message and per batch (sum of bodies). */
  maxBytes: 256 * 1024,
} as const;

/** One message to send. */
type Outgoing = { body: string; groupId?: string; dedupeId?: string; delaySeconds?: number };

const SQS_ID = /^[\x21-\x7e]{1,128}$/;

/** A MessageGroupId / MessageDeduplicationId SQS accepts: the id itself when it is 1–128 printable ASCII characters, else its hash. */
export function sqsSafeId(id: string): string {
  return SQS_ID.test(id) ? id : `sha256:${createHash("sha256").update(id).digest("hex")}`;
}

/** Splits messages into batches of at most 10 entries and 256 KiB of bodies, in order. */
export function planBatches<T extends { body: string }>(
  messages: readonly T[],
  limits: { maxBatchEntries: number; maxBytes: number } = SQS_LIMITS,
): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const message of messages) {
    const size = Buffer.byteLength(message.body, "utf8");
    if (current.length > 0 && (current.length === limits.maxBatchEntries || bytes + size > limits.maxBytes)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(message);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/**
 * JSON with every character outside printable ASCII escaped as \uXXXX: still the same JSON value, and a body
 * every SQS accepts — real SQS refuses U+FFFE/U+FFFF and a few others, fauxqs anything outside the Basic
 * Multilingual Plane (emoji) — so any text a customer can send travels (docs/local-stack.md).
 */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** DelaySeconds for a wait of `delayMs` (whole seconds, at most SQS's 15 minutes), or nothing for none. */
function delayOf(delayMs: number | undefined): { delaySeconds?: number } {
  if (delayMs === undefined || delayMs <= 0) return {};
  return { delaySeconds: Math.min(900, Math.ceil(delayMs / 1000)) };
}

/** WorkQueues on five SQS queues through the injected client. */
export function createSqsWorkQueues(options: SqsWorkQueuesOptions): WorkQueues {
  const { client, urls, clock } = options;
  for (const role of ["crewEvents", "agentSteps", "proposals", "extraction", "timers"] as const) {
    if (typeof urls?.[role] !== "string" || urls[role] === "")
      throw new InvalidArgumentError(`createSqsWorkQueues: urls.${role} (a queue URL) is required`);
  }
  const policy = retryPolicy(options.retry, "createSqsWorkQueues");
  const sleep = options.sleep ?? defaultSleep;

  const encode = <S extends z.ZodType>(queue: string, schema: S, messages: readonly unknown[]): string[] =>
    messages.map((message, i) => {
      const parsed = schema.safeParse(message);
      if (!parsed.success)
        throw new QueueMessageError(
          queue,
          `message ${i + 1} of ${messages.length} for ${queue} is invalid: ${z.prettifyError(parsed.error)}`,
          { cause: parsed.error },
        );
      const body = asciiJson(message);
      const bytes = Buffer.byteLength(body, "utf8");
      if (bytes > SQS_LIMITS.maxBytes)
        throw new MessageTooLargeError(
          `message ${i + 1} for ${queue} is ${bytes} bytes, over SQS's ${SQS_LIMITS.maxBytes}`,
        );
      return body;
    });

  const sendOne = async (queue: string, url: string, message: Outgoing) => {
    try {
      await client.send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: message.body,
          ...(message.groupId === undefined ? {} : { MessageGroupId: message.groupId }),
          ...(message.dedupeId === undefined ? {} : { MessageDeduplicationId: message.dedupeId }),
          ...(message.delaySeconds === undefined ? {} : { DelaySeconds: message.delaySeconds }),
        }),
      );
    } catch (error) {
      throw new QueueSendError(queue, `sending to ${queue} failed: ${describeError(error)}`, {
        cause: error,
        retryable: isRetryableSdkError(error),
      });
    }
  };

  const sendBatch = async (queue: string, url: string, batch: readonly Outgoing[]) => {
    let pending = batch.map((message, i) => ({ id: String(i), message }));
    for (let attempt = 1; ; attempt++) {
      const entries: SendMessageBatchRequestEntry[] = pending.map(({ id, message }) => ({
        Id: id,
        MessageBody: message.body,
        ...(message.groupId === undefined ? {} : { MessageGroupId: message.groupId }),
        ...(message.dedupeId === undefined ? {} : { MessageDeduplicationId: message.dedupeId }),
        ...(message.delaySeconds === undefined ? {} : { DelaySeconds: message.delaySeconds }),
      }));
      let failed;
      try {
        failed = (await client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }))).Failed ?? [];
      } catch (error) {
        throw new QueueSendError(queue, `SendMessageBatch to ${queue} failed: ${describeError(error)}`, {
          cause: error,
          retryable: isRetryableSdkError(error),
        });
      }
      if (failed.length === 0) return;
      const describe = () =>
        failed.map((f) => `${f.Code ?? "?"}${f.SenderFault ? " (sender fault)" : ""}: ${f.Message ?? ""}`).join("; ");
      // A sender fault (invalid entry) fails again whatever we do.
      if (failed.some((f) => f.SenderFault))
        throw new QueueSendError(
          queue,
          `${failed.length} of ${entries.length} messages refused by ${queue}: ${describe()}`,
        );
      if (attempt >= policy.maxAttempts) {
        throw new QueueSendError(
          queue,
          `${failed.length} of ${entries.length} messages still failed on ${queue} after ${attempt} attempts: ${describe()}`,
          { retryable: true },
        );
      }
      const again = new Set(failed.map((f) => f.Id));
      pending = pending.filter((p) => again.has(p.id));
      await sleep(backoffDelayMs(policy, attempt));
    }
  };

  const send = async (queue: string, url: string, messages: readonly Outgoing[]) => {
    if (messages.length === 1) return sendOne(queue, url, messages[0]!);
    for (const batch of planBatches(messages)) await sendBatch(queue, url, batch);
  };

  return {
    async sendAgentSteps(messages, opts) {
      if (messages.length === 0) return;
      const delay = delayOf(opts?.delayMs);
      await send(
        "agent-steps",
        urls.agentSteps,
        encode("agent-steps", AgentStepMessageSchema, messages).map((body) => ({ body, ...delay })),
      );
    },

    async sendProposal(message) {
      const [body] = encode("proposals", ProposalMessageSchema, [message]);
      await sendOne("proposals", urls.proposals, { body: body! });
    },

    async sendCrewEvents(claimId, messages) {
      if (typeof claimId !== "string" || claimId === "")
        throw new QueueMessageError("crew-events", "sendCrewEvents: claimId must be a non-empty string");
      if (messages.length === 0) return;
      const bodies = encode("crew-events", CrewQueueMessageSchema, messages);
      const groupId = sqsSafeId(claimId);
      await send(
        "crew-events",
        urls.crewEvents,
        messages.map((m, i) => ({ body: bodies[i]!, groupId, dedupeId: sqsSafeId(crewMessageDedupeId(m)) })),
      );
    },

    async scheduleTimer(claimId, dueMs) {
      const [body] = encode("timers", TimerMessageSchema, [{ claim_id: claimId, due_ms: dueMs }]);
      await sendOne("timers", urls.timers, { body: body!, delaySeconds: timerDelaySeconds(dueMs, clock.now()) });
    },

    async requestExtraction(claimId, opts) {
      const [body] = encode("extraction", ExtractionMessageSchema, [{ claim_id: claimId }]);
      await sendOne("extraction", urls.extraction, { body: body!, ...delayOf(opts?.delayMs) });
    },
  };
}
