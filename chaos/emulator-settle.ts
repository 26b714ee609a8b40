// When the flows on the emulators are settled (chaos/emulators.ts): every claim final, no review decision half made,
// no refund left unpaid or untold — or stuck, which is decided by counts, not by the wall clock: the stack idle (no
// message queued, in flight or delayed on a work queue, no poller busy, no request, refund delivery or provider work
// under way) and nothing changed (the open claims, the messages received, the bus's deliveries) across two of the
// stack's own sweeps and then one more sweep the harness runs and awaits once the sweep's stall threshold has passed on
// the stack's clock. A loaded machine only makes that take longer; the time limit is the outer bound (`--settle-s`).
import { setTimeout as sleep } from "node:timers/promises";
import { isFinal } from "../core/kernel/claim-record.ts";
import type { LocalStack } from "../local/stack.ts";

/** What settling needs of the shared stack. */
export interface SettlingStack {
  /** Runs a read on the running stack; one a restart cut off is made again on the new stack. */
  use<T>(work: (stack: LocalStack) => Promise<T>): Promise<T>;
  /** What the stack has done so far, when it is idle now; undefined while anything is under way. */
  idle(): Promise<string | undefined>;
  /** The stack's own sweeps started so far (every generation). */
  sweeps(): number;
  /** Runs one sweep now and waits for it (outside every flow). */
  sweep(): Promise<void>;
  /** The stack's clock (ms). */
  now(): number;
  /** The sweep re-drives a claim whose record has not moved for this long on the stack's clock. */
  readonly stalledAfterMs: number;
}

/** What settling reads of a flow: its claims, and its provider's settles and webhooks still to come. */
export interface SettlingFlow {
  readonly claims: Set<string>;
  readonly providerWork: number;
}

/** How settling ended: everything final (`open` empty), stuck (nothing moves any more), or out of time. */
export interface Settled<F> {
  open: Map<F, string[]>;
  stuck: boolean;
}

/** The stack's own sweeps that must pass with nothing changed before the harness's own sweep decides. */
const QUIET_SWEEPS = 2;
/** How often settling looks. */
const POLL_MS = 250;

/**
 * What is still open in each of `flows` (a claim a review resubmitted joins its flow); with `claimsOnly`, only claims
 * not final or with a review decision in progress (not their refunds).
 */
export async function openWork<F extends SettlingFlow>(
  shared: Pick<SettlingStack, "use">,
  flows: readonly F[],
  claimsOnly = false,
): Promise<Map<F, string[]>> {
  const open = new Map<F, string[]>();
  const add = (f: F, what: string) => open.set(f, [...(open.get(f) ?? []), what]);
  for (const f of flows) {
    // The provider still has a refund to settle or a webhook to send.
    if (f.providerWork > 0) add(f, `${f.providerWork} settle(s) or webhook(s) of the provider to come`);
    for (const id of f.claims) {
      const [c, r, s] = await shared.use((stack) =>
        Promise.all([
          stack.deps.claims.getClaim(id),
          stack.deps.reviews.getReview(id),
          stack.deps.settlements?.get(id),
        ]),
      );
      if (!c || !isFinal(c.status) || r?.intent)
        add(f, `claim ${id} ${c?.status ?? "absent"}${r?.intent ? " (a review decision in progress)" : ""}`);
      else if (!claimsOnly) {
        // A refund authorised and not yet paid (or told), or a RETRY / CLOSE whose effects a crash cut short.
        if (c.executed === true && c.simulation_id === undefined && (!s || s.status === "PENDING"))
          add(f, `claim ${id}'s refund ${s ? "PENDING" : "not taken by the executor"}`);
        else if (s?.review && s.review.status !== "PENDING" && s.review.performed !== true)
          add(f, `claim ${id}'s refund review ${s.review.status}, its effects not all performed`);
      }
      if (r?.resubmitted_claim_id && !f.claims.has(r.resubmitted_claim_id)) f.claims.add(r.resubmitted_claim_id);
    }
  }
  return open;
}

/**
 * Waits until every claim of `flows` is final and no review is half decided (the sweep repairs those), until nothing
 * moves any more (`stuck`: what is open then stays open), or until `timeoutMs` has passed.
 */
export async function settle<F extends SettlingFlow>(
  shared: SettlingStack,
  flows: readonly F[],
  timeoutMs: number,
): Promise<Settled<F>> {
  const deadline = Date.now() + timeoutMs;
  // The idle stack as last seen, the open work with it, and since when (the stack's sweeps and clock).
  let still: { seen: string; sweeps: number; atMs: number; swept: boolean } | undefined;
  for (;;) {
    const open = await openWork(shared, flows);
    if (open.size === 0) return { open, stuck: false };
    if (Date.now() > deadline) return { open, stuck: false };
    const activity = await shared.idle();
    const seen = activity === undefined ? undefined : `${activity}|${[...open.values()].flat().sort().join(";")}`;
    if (seen === undefined || seen !== still?.seen)
      still = seen === undefined ? undefined : { seen, sweeps: shared.sweeps(), atMs: shared.now(), swept: false };
    else if (still.swept) return { open, stuck: true };
    else if (shared.sweeps() >= still.sweeps + QUIET_SWEEPS && shared.now() >= still.atMs + shared.stalledAfterMs) {
      // Every claim that has not moved since is stalled for this sweep: it re-drives what can still move.
      await shared.sweep();
      still.swept = true;
      continue;
    }
    await sleep(POLL_MS);
  }
}
