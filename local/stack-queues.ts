// The local stack's queues: the five work queues with their DLQs as infra/ deploys them (local names, the
// manifest's FIFO-ness, visibility and receives, a test's overrides), the journaled messages sent again after a
// restart, their depths for error messages, and the SQS event the payments rule hands the refund executor.
import { GetQueueAttributesCommand, SendMessageBatchCommand } from "@aws-sdk/client-sqs";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { SQSEvent } from "aws-lambda";
import { QUEUES, visibilityTimeoutSeconds } from "../app/manifest.ts";
import type { QueueRole } from "../app/manifest.ts";
import type { BusEvent } from "./eventbridge/server.ts";
import { toSqsRecord } from "./poller/sqs-event.ts";
import type { Poller } from "./poller/poller.ts";
import { ROLES } from "./consumers.ts";
import type { QueueJournal } from "./queue-journal.ts";
import { createLocalQueues } from "./resources.ts";
import type { LocalQueue } from "./resources.ts";
import { StackStartError } from "./errors.ts";
import type { LocalStackOptions } from "./stack.ts";

/** Local queue names by role (the DLQ of each is `<name>-dlq`). */
const LOCAL_QUEUE_NAMES: Readonly<Record<QueueRole, string>> = {
  crewEvents: "claims-crew-events",
  agentSteps: "claims-agent-steps",
  proposals: "claims-proposals",
  extraction: "claims-extraction",
  timers: "claims-timers",
};

/** The SQS event Lambda would get for one bus event its rule delivered to a queue (the body is the envelope). */
export function asSqsEvent(event: BusEvent): SQSEvent {
  const now = String(Date.now());
  const message = {
    MessageId: String(event.id),
    ReceiptHandle: String(event.id),
    Body: JSON.stringify(event),
    Attributes: { ApproximateReceiveCount: "1", SentTimestamp: now, SenderId: "events.amazonaws.com" },
  };
  return {
    Records: [
      toSqsRecord(message, { queueArn: "arn:aws:sqs:us-east-1:000000000000:claims-payments", region: "us-east-1" }),
    ],
  };
}

/**
 * Sends the messages the journal recovered into the fresh queues, in the order they were first sent (FIFO groups
 * keep their order), then lets the journal drop its previous file. Returns how many were sent.
 */
export async function resendJournaled(
  sqs: SQSClient,
  journal: QueueJournal,
  queues: Record<QueueRole, StackQueue>,
): Promise<number> {
  const urls = new Map<string, string>();
  for (const q of Object.values(queues)) {
    urls.set(q.url.slice(q.url.lastIndexOf("/") + 1), q.url);
    if (q.dlq) urls.set(q.dlq.url.slice(q.dlq.url.lastIndexOf("/") + 1), q.dlq.url);
  }
  const messages = journal.recovered();
  let sent = 0;
  for (let i = 0; i < messages.length; ) {
    const url = urls.get(messages[i]!.queue);
    // Consecutive messages of one queue go out in batches of 10; a queue that no longer exists is skipped.
    let j = i + 1;
    while (j < messages.length && j - i < 10 && messages[j]!.queue === messages[i]!.queue) j++;
    if (url !== undefined) {
      const batch = messages.slice(i, j);
      const out = await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: batch.map((m, k) => ({
            Id: String(k),
            MessageBody: m.body,
            ...(m.groupId === undefined ? {} : { MessageGroupId: m.groupId }),
            ...(m.dedupeId === undefined ? {} : { MessageDeduplicationId: m.dedupeId }),
          })),
        }),
      );
      if ((out.Failed ?? []).length > 0)
        throw new StackStartError(
          `the journaled messages could not be sent again to ${messages[i]!.queue}: ${out.Failed!.map((f) => f.Message).join("; ")}`,
        );
      sent += batch.length;
    }
    i = j;
  }
  journal.recoveryDone();
  return sent;
}

/** A queue of the stack with its DLQ and the receives before redrive. */
export type StackQueue = LocalQueue & { readonly maxReceives: number };

/** The five work queues with their DLQs, as infra/ deploys them (with a test's overrides). */
export async function createQueues(
  sqs: SQSClient,
  overrides: NonNullable<LocalStackOptions["queues"]>,
): Promise<Record<QueueRole, StackQueue>> {
  const defs = ROLES.map((role) => {
    const s = QUEUES[role];
    const o = overrides[role] ?? {};
    return {
      role,
      def: {
        name: LOCAL_QUEUE_NAMES[role],
        fifo: s.fifo,
        visibilityTimeoutS: o.visibilityTimeoutS ?? visibilityTimeoutSeconds(role),
        maxReceiveCount: o.maxReceives ?? s.maxReceives,
      },
    };
  });
  const created = await createLocalQueues(
    sqs,
    defs.map((d) => d.def),
  );
  return Object.fromEntries(
    defs.map(({ role, def }) => [role, { ...created[def.name]!, maxReceives: def.maxReceiveCount }]),
  ) as Record<QueueRole, StackQueue>;
}

/** "crewEvents 0 (dlq 1), agentSteps 2 in flight, …": depths of every queue and DLQ, for error messages. */
export async function describeQueues(
  sqs: SQSClient,
  queues: Record<QueueRole, StackQueue>,
  pollers: Record<QueueRole, Poller>,
): Promise<string> {
  const depth = async (url: string) => {
    const out = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: [
          "ApproximateNumberOfMessages",
          "ApproximateNumberOfMessagesNotVisible",
          "ApproximateNumberOfMessagesDelayed",
        ],
      }),
    );
    const a = out.Attributes ?? {};
    return (
      Number(a.ApproximateNumberOfMessages ?? 0) +
      Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
      Number(a.ApproximateNumberOfMessagesDelayed ?? 0)
    );
  };
  const parts = await Promise.all(
    ROLES.map(async (role) => {
      const q = queues[role];
      const dlq = q.dlq ? await depth(q.dlq.url) : 0;
      return `${role} ${await depth(q.url)} queued, ${pollers[role].stats.inFlightBatches} batch(es) running${dlq > 0 ? `, ${dlq} in its DLQ` : ""}`;
    }),
  );
  return `queues: ${parts.join("; ")}`;
}
