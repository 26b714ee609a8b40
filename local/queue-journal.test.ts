// The queue journal against the real fauxqs (through startSqsEmulator) and the real SQS SDK: what was sent
// and not deleted is recovered after a stop, in send order, with its FIFO parameters; deleted messages are
// not; a torn last line, a stale receipt handle, a crash while re-sending and compaction are handled.
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { afterEach, describe, expect, it } from "vitest";
import { localClientConfig, LOCAL_REGION } from "./emulators.ts";
import { openQueueJournal, readJournal } from "./queue-journal.ts";
import type { QueueJournal } from "./queue-journal.ts";
import { startSqsEmulator } from "./sqs-emulator.ts";
import { newSigningKeys } from "./auth/keys.ts";
import type { SqsEmulator } from "./sqs-emulator.ts";

let dir: string;
let running: { sqs: SqsEmulator; client: SQSClient } | undefined;

afterEach(async () => {
  running?.client.destroy();
  await running?.sqs.stop();
  running = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** fauxqs with a journal at `<dir>/queues.jsonl`, a standard queue "std" and a FIFO queue "fifo.fifo". */
async function start(
  options: { compactSlack?: number } = {},
): Promise<{ journal: QueueJournal; client: SQSClient; std: string; fifo: string }> {
  const journal = openQueueJournal(join(dir, "queues.jsonl"), options);
  const sqs = await startSqsEmulator({ region: LOCAL_REGION, keys: newSigningKeys(), journal });
  const client = new SQSClient(localClientConfig(sqs.endpoint));
  running = { sqs, client };
  const std = (await client.send(new CreateQueueCommand({ QueueName: "std", Attributes: { VisibilityTimeout: "0" } })))
    .QueueUrl!;
  const fifo = (
    await client.send(new CreateQueueCommand({ QueueName: "fifo.fifo", Attributes: { FifoQueue: "true" } }))
  ).QueueUrl!;
  return { journal, client, std, fifo };
}

async function stop() {
  running?.client.destroy();
  await running?.sqs.stop();
  running = undefined;
}

describe("queue journal", () => {
  it("recovers what was sent and not deleted, in send order with its FIFO parameters, and not what was deleted", async () => {
    dir = mkdtempSync(join(tmpdir(), "claims-journal-"));
    const { journal, client, std, fifo } = await start();
    await client.send(new SendMessageCommand({ QueueUrl: std, MessageBody: "a" }));
    await client.send(
      new SendMessageBatchCommand({
        QueueUrl: std,
        Entries: [
          { Id: "1", MessageBody: "b" },
          { Id: "2", MessageBody: "c" },
          { Id: "3", MessageBody: "refused \u{1F600}" },
        ],
      }),
    );
    await client.send(
      new SendMessageBatchCommand({
        QueueUrl: fifo,
        Entries: [1, 2, 3].map((n) => ({
          Id: String(n),
          MessageBody: `f${n}`,
          MessageGroupId: "clm_1",
          MessageDeduplicationId: `d${n}`,
        })),
      }),
    );
    // "a" is received and deleted; "b" is received and not deleted (in flight when the process dies).
    const got =
      (await client.send(new ReceiveMessageCommand({ QueueUrl: std, MaxNumberOfMessages: 2 }))).Messages ?? [];
    expect(got.map((m) => m.Body)).toEqual(["a", "b"]);
    await client.send(new DeleteMessageCommand({ QueueUrl: std, ReceiptHandle: got[0]!.ReceiptHandle! }));
    const f = (await client.send(new ReceiveMessageCommand({ QueueUrl: fifo, MaxNumberOfMessages: 1 }))).Messages ?? [];
    await client.send(
      new DeleteMessageBatchCommand({ QueueUrl: fifo, Entries: [{ Id: "x", ReceiptHandle: f[0]!.ReceiptHandle! }] }),
    );
    // A repeated FIFO send within the deduplication window is the same message, already deleted: not live.
    await client.send(
      new SendMessageCommand({
        QueueUrl: fifo,
        MessageBody: "f1",
        MessageGroupId: "clm_1",
        MessageDeduplicationId: "d1",
      }),
    );
    expect(journal.liveCount()).toBe(4);
    await stop();

    const reopened = openQueueJournal(join(dir, "queues.jsonl"));
    expect(
      reopened.recovered().map(({ queue, body, groupId, dedupeId }) => ({ queue, body, groupId, dedupeId })),
    ).toEqual([
      { queue: "std", body: "b", groupId: undefined, dedupeId: undefined },
      { queue: "std", body: "c", groupId: undefined, dedupeId: undefined },
      { queue: "fifo.fifo", body: "f2", groupId: "clm_1", dedupeId: "d2" },
      { queue: "fifo.fifo", body: "f3", groupId: "clm_1", dedupeId: "d3" },
    ]);
    reopened.close();
  });

  it("ignores a delete with a stale receipt handle (the message was received again since) and a torn last line", async () => {
    dir = mkdtempSync(join(tmpdir(), "claims-journal-"));
    const { client, std } = await start();
    await client.send(new SendMessageCommand({ QueueUrl: std, MessageBody: "again" }));
    const first = (await client.send(new ReceiveMessageCommand({ QueueUrl: std }))).Messages![0]!;
    // Visibility timeout 0: received again with a new handle; the old one deletes nothing in fauxqs.
    const second = (await client.send(new ReceiveMessageCommand({ QueueUrl: std }))).Messages![0]!;
    expect(second.MessageId).toBe(first.MessageId);
    await client.send(new DeleteMessageCommand({ QueueUrl: std, ReceiptHandle: first.ReceiptHandle! }));
    await stop();
    appendFileSync(join(dir, "queues.jsonl"), '{"op":"send","id":"torn","queue":"std","bo');
    expect(readJournal(join(dir, "queues.jsonl")).map((m) => m.body)).toEqual(["again"]);
  });

  it("recovers the same messages after a start that died while sending them again", async () => {
    dir = mkdtempSync(join(tmpdir(), "claims-journal-"));
    const { client, std } = await start();
    for (const body of ["m1", "m2", "m3"])
      await client.send(new SendMessageCommand({ QueueUrl: std, MessageBody: body }));
    await stop();
    // Second start: sends one of the three again, then dies before recoveryDone().
    const second = await start();
    expect(second.journal.recovered().map((m) => m.body)).toEqual(["m1", "m2", "m3"]);
    await second.client.send(new SendMessageCommand({ QueueUrl: second.std, MessageBody: "m1" }));
    await stop();
    // Third start: still the three (not four, not one), and after recoveryDone the previous file is gone.
    const third = await start();
    expect(third.journal.recovered().map((m) => m.body)).toEqual(["m1", "m2", "m3"]);
    third.journal.recoveryDone();
    expect(third.journal.recovered()).toEqual([]);
    await stop();
    expect(readJournal(join(dir, "queues.jsonl.replay"))).toEqual([]);
  });

  it("rewrites the file with only the live messages when it grows well past them", async () => {
    dir = mkdtempSync(join(tmpdir(), "claims-journal-"));
    const { journal, client, std } = await start({ compactSlack: 20 });
    for (let i = 0; i < 60; i++) {
      await client.send(new SendMessageCommand({ QueueUrl: std, MessageBody: `m${i}` }));
      if (i % 10 === 0) continue; // every tenth stays
      const m =
        (await client.send(new ReceiveMessageCommand({ QueueUrl: std, MaxNumberOfMessages: 10 }))).Messages ?? [];
      for (const msg of m.filter((x) => Number(x.Body!.slice(1)) % 10 !== 0))
        await client.send(new DeleteMessageCommand({ QueueUrl: std, ReceiptHandle: msg.ReceiptHandle! }));
    }
    expect(journal.liveCount()).toBe(6);
    const lines = readFileSync(join(dir, "queues.jsonl"), "utf8").trim().split("\n").length;
    expect(lines).toBeLessThan(2 * 6 + 20 + 2);
    await stop();
    expect(readJournal(join(dir, "queues.jsonl")).map((m) => m.body)).toEqual([
      "m0",
      "m10",
      "m20",
      "m30",
      "m40",
      "m50",
    ]);
  });
});
