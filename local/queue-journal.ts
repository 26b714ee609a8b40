// The journal that makes the local SQS emulator's messages survive a restart (fauxqs keeps everything in
// memory). It watches the SQS requests fauxqs answered: every message a SendMessage / SendMessageBatch
// accepted is appended as a line before the answer leaves (so an acknowledged send is on disk, in the OS's
// hands, when the producer hears of it: a `kill -9` cannot lose it), and a DeleteMessage(Batch) appends its
// removal. On the next start the messages never deleted are the ones in queues or in flight at the stop:
// `recovered()` gives them, in the order they were sent, to be sent again into the fresh queues. A message
// being handled when the process died is delivered again, as after a visibility timeout on AWS; every
// consumer is idempotent. The file is rewritten with only the live messages when it has grown well past them.
import { replayJournalLines } from "./jsonl-journal.ts";
import { closeSync, existsSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";

/** A message as journaled: the queue's name (URLs change with the port), its body and FIFO parameters (the pipeline sends no message attributes). */
type JournaledMessage = {
  readonly id: string;
  readonly queue: string;
  readonly body: string;
  readonly groupId?: string;
  readonly dedupeId?: string;
};

type Line = ({ op: "send" } & JournaledMessage) | { op: "del"; id: string };

/** What one answered SQS request was: its action, the parsed request, the status and the answer's body. */
type ObservedRequest = {
  readonly action: string;
  readonly request: unknown;
  readonly status: number;
  readonly response: string;
};

/** A journal of the SQS emulator's messages. */
export interface QueueJournal {
  readonly path: string;
  /** Messages sent before this start and never deleted, oldest first. */
  recovered(): readonly JournaledMessage[];
  /** Records what an answered SQS request changed (sends, receipts, deletes); synchronous, so it is on disk before the answer leaves. */
  observe(observed: ObservedRequest): void;
  /** Call once every recovered message was sent again: the previous journal is dropped. */
  recoveryDone(): void;
  /** Messages currently live (sent, not deleted) — for tests and diagnostics. */
  liveCount(): number;
  close(): void;
}

/** Options of `openQueueJournal`. */
type QueueJournalOptions = {
  /** Rewrite the file when it holds more than this many lines beyond twice the live messages (default 20 000). */
  readonly compactSlack?: number;
};

const queueName = (url: unknown) => (typeof url === "string" ? url.slice(url.lastIndexOf("/") + 1) : "");

/** Reads a journal file's live messages; a torn last line (the process died mid-write) is ignored. */
export function readJournal(path: string): JournaledMessage[] {
  const live = new Map<string, JournaledMessage>();
  replayJournalLines<Line>(path, (line) => {
    if (line.op === "send" && typeof line.id === "string" && typeof line.body === "string") {
      const { op: _op, ...message } = line;
      live.set(line.id, message);
    } else if (line.op === "del") live.delete(line.id);
  });
  return [...live.values()];
}

/**
 * Opens the journal at `path`. What the file held becomes `recovered()`; it is kept aside as `<path>.replay`
 * until `recoveryDone()`, so a process that dies while re-sending recovers the same messages next time.
 */
export function openQueueJournal(path: string, options: QueueJournalOptions = {}): QueueJournal {
  const replayPath = `${path}.replay`;
  let recovered: JournaledMessage[];
  if (existsSync(replayPath)) {
    // The previous start died while sending its recovered messages again: they are all still in the replay file.
    recovered = readJournal(replayPath);
  } else {
    recovered = readJournal(path);
    if (existsSync(path)) renameSync(path, replayPath);
  }
  let fd = openSync(path, "w");
  const live = new Map<string, JournaledMessage>();
  // The receipt handle of each message's latest receipt: a delete with an older one deletes nothing in fauxqs.
  const handles = new Map<string, string>();
  const currentHandle = new Map<string, string>();
  // FIFO deduplication answers a repeated send with the first message's id, possibly already deleted.
  const recentlyDeleted = new Set<string>();
  const slack = options.compactSlack ?? 20_000;
  let lines = 0;

  const write = (line: Line) => {
    writeSync(fd, `${JSON.stringify(line)}\n`);
    lines++;
  };

  const compact = () => {
    const tmp = `${path}.tmp`;
    const out = openSync(tmp, "w");
    for (const message of live.values()) writeSync(out, `${JSON.stringify({ op: "send", ...message })}\n`);
    closeSync(out);
    closeSync(fd);
    renameSync(tmp, path);
    fd = openSync(path, "a");
    lines = live.size;
  };

  const sent = (message: JournaledMessage) => {
    if (live.has(message.id) || recentlyDeleted.has(message.id)) return;
    live.set(message.id, message);
    write({ op: "send", ...message });
  };

  const deleted = (handle: unknown) => {
    if (typeof handle !== "string") return;
    const id = handles.get(handle);
    if (id === undefined) return;
    handles.delete(handle);
    currentHandle.delete(id);
    if (!live.delete(id)) return;
    recentlyDeleted.add(id);
    if (recentlyDeleted.size > 50_000) recentlyDeleted.delete(recentlyDeleted.values().next().value!);
    write({ op: "del", id });
  };

  const message = (queue: string, entry: Record<string, unknown>, id: unknown): JournaledMessage | undefined => {
    if (typeof id !== "string" || typeof entry.MessageBody !== "string") return undefined;
    return {
      id,
      queue,
      body: entry.MessageBody,
      ...(typeof entry.MessageGroupId === "string" ? { groupId: entry.MessageGroupId } : {}),
      ...(typeof entry.MessageDeduplicationId === "string" ? { dedupeId: entry.MessageDeduplicationId } : {}),
    };
  };

  return {
    path,
    recovered: () => recovered,
    liveCount: () => live.size,
    recoveryDone() {
      recovered = [];
      if (existsSync(replayPath)) unlinkSync(replayPath);
    },
    observe({ action, request, status, response }) {
      if (status !== 200 || !request || typeof request !== "object") return;
      const req = request as Record<string, unknown>;
      const queue = queueName(req.QueueUrl);
      if (
        !["SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessage", "DeleteMessageBatch"].includes(action)
      )
        return;
      let res: Record<string, unknown>;
      try {
        res = JSON.parse(response) as Record<string, unknown>;
      } catch {
        return;
      }
      switch (action) {
        case "SendMessage": {
          const m = message(queue, req, res.MessageId);
          if (m) sent(m);
          break;
        }
        case "SendMessageBatch": {
          const entries = new Map(((req.Entries ?? []) as Record<string, unknown>[]).map((e) => [e.Id, e]));
          for (const ok of (res.Successful ?? []) as Record<string, unknown>[]) {
            const entry = entries.get(ok.Id);
            const m = entry ? message(queue, entry, ok.MessageId) : undefined;
            if (m) sent(m);
          }
          break;
        }
        case "ReceiveMessage":
          for (const m of (res.Messages ?? []) as Record<string, unknown>[]) {
            if (typeof m.ReceiptHandle !== "string" || typeof m.MessageId !== "string") continue;
            const previous = currentHandle.get(m.MessageId);
            if (previous !== undefined) handles.delete(previous);
            handles.set(m.ReceiptHandle, m.MessageId);
            currentHandle.set(m.MessageId, m.ReceiptHandle);
          }
          break;
        case "DeleteMessage":
          deleted(req.ReceiptHandle);
          break;
        case "DeleteMessageBatch": {
          const entries = new Map(
            ((req.Entries ?? []) as Record<string, unknown>[]).map((e) => [e.Id, e.ReceiptHandle]),
          );
          for (const ok of (res.Successful ?? []) as Record<string, unknown>[]) deleted(entries.get(ok.Id));
          break;
        }
      }
      if (lines > 2 * live.size + slack) compact();
    },
    close() {
      closeSync(fd);
    },
  };
}
