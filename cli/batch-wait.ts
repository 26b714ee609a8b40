// `claims batch` with LLM_BATCH_MODE=batch (docs/llm.md, "Batch mode"): the run's clock and the work held for a batch.
// A claim whose answer is in a batch not yet completed is held, and its step (or extraction) is sent again after a
// delay (pipeline/decide/outage.ts). Here that delayed message is kept instead of sent: once nothing else can run,
// the runner waits one real poll interval (LLM_BATCH_POLL_S), moves the run's clock to the message's due instant and
// sends it — the try the hold's timer asked for. Otherwise the run's clock stands at the run's instant.
import { setTimeout as sleep } from "node:timers/promises";
import type { Clock, FrozenClock } from "../core/crew/index.ts";
import type { ClaimRecord } from "../core/kernel/claim-record.ts";
import type { WorkQueues } from "../pipeline/ports.ts";
import type { ClaimsRuntime } from "../local/runtime.ts";

/** One message the hold asked to send later. */
interface HeldMessage {
  readonly claimId: string;
  /** When the queue would deliver it: the send's instant plus the delay in whole seconds, as SQS counts. */
  readonly dueMs: number;
  readonly send: () => Promise<void>;
}

/** The delayed messages of a run, kept until the runner releases them on the run's clock. */
export interface HeldWork {
  /** The queues the handlers send through: a delayed message is kept here, everything else goes on at once. */
  wrap(queues: WorkQueues): WorkQueues;
  /** Whether a message of `claimId` is kept. */
  holds(claimId: string): boolean;
  /** The claims with a message kept, earliest due first. */
  claims(): string[];
  /** Moves the clock to the earliest due instant (never back) and sends every message due by then; how many. */
  releaseNext(): Promise<number>;
}

/** Held work on `clock` (the run's, which only the release moves). */
export function createHeldWork(clock: FrozenClock): HeldWork {
  let held: HeldMessage[] = [];
  const keep = (claimId: string, delayMs: number, send: () => Promise<void>) => {
    held.push({ claimId, dueMs: clock.now() + Math.ceil(delayMs / 1000) * 1000, send });
    held.sort((a, b) => a.dueMs - b.dueMs);
  };
  return {
    wrap: (queues) => ({
      async sendAgentSteps(messages, opts) {
        const delayMs = opts?.delayMs ?? 0;
        if (delayMs <= 0 || messages.length === 0) return queues.sendAgentSteps(messages, opts);
        keep(messages[0]!.claim_id, delayMs, () => queues.sendAgentSteps(messages));
      },
      sendProposal: (message) => queues.sendProposal(message),
      sendCrewEvents: (claimId, messages) => queues.sendCrewEvents(claimId, messages),
      scheduleTimer: (claimId, dueMs) => queues.scheduleTimer(claimId, dueMs),
      async requestExtraction(claimId, opts) {
        const delayMs = opts?.delayMs ?? 0;
        if (delayMs <= 0) return queues.requestExtraction(claimId, opts);
        keep(claimId, delayMs, () => queues.requestExtraction(claimId));
      },
    }),
    holds: (claimId) => held.some((m) => m.claimId === claimId),
    claims: () => [...new Set(held.map((m) => m.claimId))],
    async releaseNext() {
      const first = held[0];
      if (first === undefined) return 0;
      if (first.dueMs > clock.now()) clock.set(first.dueMs);
      const due = held.filter((m) => m.dueMs <= clock.now());
      held = held.filter((m) => m.dueMs > clock.now());
      for (const m of due) await m.send();
      return due.length;
    },
  };
}

/** What `settleThroughBatches` needs. */
export interface BatchWait {
  readonly runtime: ClaimsRuntime;
  readonly held: HeldWork;
  readonly clock: FrozenClock;
  /** Real time between two tries. */
  readonly pollMs: number;
  readonly signal?: AbortSignal | undefined;
  /** A progress line (no customer text: ids, statuses, instants and batch ids). */
  readonly log: (line: string) => void;
}

const FINAL: readonly string[] = ["DECIDED", "NEEDS_REVIEW", "AWAITING_RETURN"];

/**
 * Waits for `claimId` as `runtime.settle` does, except that while its work is held for a batch (and the stack has
 * nothing else to do) it waits one poll interval, lets the hold's timer fire on the run's clock, and goes on; a line
 * of progress per try. `undefined` result: interrupted (the held work is left unsent, as a stopped stack leaves it).
 */
export async function settleThroughBatches(
  rowId: string,
  claimId: string,
  w: BatchWait,
): Promise<{ record: ClaimRecord | undefined } | undefined> {
  for (let tries = 1; ; tries++) {
    await w.runtime.idle?.().catch(() => undefined);
    const record = await w.runtime.getClaim(claimId);
    if ((record !== undefined && FINAL.includes(record.status)) || !w.held.holds(claimId))
      return { record: await w.runtime.settle(claimId) };
    w.log(await progressLine(rowId, claimId, record, tries, w));
    if (await aborted(w.pollMs, w.signal)) return undefined;
    await w.held.releaseNext();
  }
}

/** The clock a batch through the Batch API runs on: it must be one the waits can move. */
export function frozen(clock: Clock | FrozenClock): FrozenClock {
  if (!("set" in clock)) throw new Error("LLM_BATCH_MODE=batch: the batch run's clock must be a frozen clock");
  return clock;
}

/** `runtime` whose settle waits through a batch's hold (cli/batch-wait.ts), then puts the clock back at `instant`. */
export function withBatchWaits(
  runtime: ClaimsRuntime,
  instant: number,
  wait: Omit<BatchWait, "runtime">,
): ClaimsRuntime {
  const rowOf = new Map<string, string>();
  return {
    ...runtime,
    async submit(body, o) {
      const submitted = await runtime.submit(body, o);
      // The row's id for the progress lines: the label a scenario's body carries starts with it ("A — …").
      const label = (body as { label?: unknown }).label;
      if (submitted.ok) rowOf.set(submitted.claimId, typeof label === "string" ? (label.split(" — ")[0] ?? "") : "");
      return submitted;
    },
    async settle(claimId) {
      const settled = await settleThroughBatches(rowOf.get(claimId) ?? "", claimId, { ...wait, runtime });
      // Nothing waits any more (a race's claims may still): the next row is received at the run's instant.
      if (wait.held.claims().length === 0 && wait.clock.now() > instant) wait.clock.set(instant);
      return settled?.record;
    },
  };
}

/** Sleeps `ms`; true when `signal` aborted meanwhile (Ctrl-C). */
async function aborted(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return true;
  try {
    await sleep(ms, undefined, signal ? { signal } : {});
  } catch {
    return true;
  }
  return signal?.aborted === true;
}

/** "  … A clm_1: held since …, until … (run's clock …, try 2); 1 claim held; batch batch_abc". */
async function progressLine(
  rowId: string,
  claimId: string,
  record: ClaimRecord | undefined,
  tries: number,
  w: BatchWait,
): Promise<string> {
  const held = w.held.claims();
  const records = await Promise.all(held.map((id) => w.runtime.getClaim(id).catch(() => undefined)));
  const batches = [...new Set(records.flatMap((r) => batchIdsIn(r?.llm_hold?.problem)))];
  const hold = record?.llm_hold;
  const state = hold
    ? `${record?.status} and held for its batch since ${hold.since}${hold.until ? `, until ${hold.until}` : ""}`
    : (record?.status ?? "not stored");
  return `  … ${rowId} ${claimId}: ${state} (run's clock ${new Date(w.clock.now()).toISOString()}, try ${tries}); ${held.length} claim${held.length === 1 ? "" : "s"} held; ${batches.length === 0 ? "no batch yet" : `batch ${batches.join(", ")}`}`;
}

/** The batch ids a hold's problem names ("sent to the Batch API as batch b_1", "batch b_1 is in_progress"). */
export function batchIdsIn(problem: string | undefined): string[] {
  return [...(problem ?? "").matchAll(/\bbatch ([A-Za-z0-9_-]*\d[A-Za-z0-9_-]*)/g)].map((m) => m[1]!);
}
