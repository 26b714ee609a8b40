// The refund executor's deliveries made durable for `claims serve` (issue 39), as its SQS queue makes them on AWS:
// every RefundExecuted the payments rule matches is journaled as due in `<stateDir>/payments.jsonl` before the
// PutEvents that carried it answers (the bus's synchronous `onMatched`), and as done once the executor took it. What
// is due and not done — a delivery a kill cut off, or one that failed every attempt (the provider down) — is
// delivered again: at the next start, and by the sweep. Every delivery is idempotent (the settlement per claim, the
// provider's idempotency key = the execution id), so a second one pays nothing twice. The file is rewritten with only
// the due deliveries when it has grown well past them; a torn last line (a kill mid-write) is ignored.
import { replayJournalLines } from "./jsonl-journal.ts";
import { closeSync, openSync, renameSync, writeSync } from "node:fs";
import type { BusEvent } from "./eventbridge/server.ts";

type Line = { op: "due"; event: BusEvent } | { op: "done"; id: string };

/** The journal of the refund executor's deliveries. */
export interface PaymentDeliveries {
  readonly path: string;
  /** Journals `event` as due (idempotent by event id): on disk when this returns. */
  due(event: BusEvent): void;
  /** Journals the delivery of `id` as done: the executor took it. */
  done(id: string): void;
  /** Runs one delivery attempt of `id` (meanwhile it is not redeliverable). */
  track<T>(id: string, attempt: () => Promise<T>): Promise<T>;
  /**
   * Due deliveries to make again at `nowMs`: not in an attempt now, and journaled before this start or more than
   * `graceMs` ago (the bus's own retries come first); oldest first.
   */
  redeliverable(nowMs: number, graceMs?: number): BusEvent[];
  /** How many deliveries are due (journaled, not done). */
  dueCount(): number;
  close(): void;
}

/** The due deliveries of a journal file (a torn line is skipped). */
export function readDeliveries(path: string): BusEvent[] {
  const due = new Map<string, BusEvent>();
  replayJournalLines<Line>(path, (line) => {
    if (line.op === "due" && typeof line.event?.id === "string") due.set(line.event.id, line.event);
    else if (line.op === "done" && typeof line.id === "string") due.delete(line.id);
  });
  return [...due.values()];
}

/**
 * Opens the journal at `path`, keeping what it holds due (redeliverable at once); compacts when it has `slack` lines
 * beyond twice the due ones. `now` reads the time a delivery became due (ms).
 */
export function openPaymentDeliveries(
  path: string,
  options: { slack?: number; now?: () => number } = {},
): PaymentDeliveries {
  const now = options.now ?? (() => performance.now());
  // Each due delivery and when it became due (a recovered one: 0, long ago).
  const due = new Map<string, { event: BusEvent; since: number }>();
  for (const event of readDeliveries(path)) due.set(event.id, { event, since: Number.NEGATIVE_INFINITY });
  const inAttempt = new Map<string, number>();
  const slack = options.slack ?? 2_000;
  let fd = -1;
  let lines = 0;
  const rewrite = () => {
    const tmp = `${path}.tmp`;
    const out = openSync(tmp, "w", 0o600);
    for (const { event } of due.values()) writeSync(out, `${JSON.stringify({ op: "due", event })}\n`);
    closeSync(out);
    if (fd >= 0) closeSync(fd);
    renameSync(tmp, path);
    fd = openSync(path, "a", 0o600);
    lines = due.size;
  };
  rewrite();
  const write = (line: Line) => {
    writeSync(fd, `${JSON.stringify(line)}\n`);
    if (++lines > 2 * due.size + slack) rewrite();
  };
  return {
    path,
    due(event) {
      if (due.has(event.id)) return;
      due.set(event.id, { event, since: now() });
      write({ op: "due", event });
    },
    done(id) {
      if (!due.delete(id)) return;
      write({ op: "done", id });
    },
    async track(id, attempt) {
      inAttempt.set(id, (inAttempt.get(id) ?? 0) + 1);
      try {
        return await attempt();
      } finally {
        const left = (inAttempt.get(id) ?? 1) - 1;
        if (left > 0) inAttempt.set(id, left);
        else inAttempt.delete(id);
      }
    },
    redeliverable: (nowMs, graceMs = 30_000) =>
      [...due.values()].filter((d) => !inAttempt.has(d.event.id) && d.since <= nowMs - graceMs).map((d) => d.event),
    dueCount: () => due.size,
    close: () => closeSync(fd),
  };
}
