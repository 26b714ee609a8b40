// The shape every process's decider has (docs/architecture.md): `decide(state, observation) → { effects, next }`.
// The shell loads, calls its decider, performs the effects in order (one list) and goes on as `next` says: done
// with the outcome; a second list of effects performed on its own (`then`: its audit events are their own item);
// or a read or write whose answer the next decision needs (a read whose key the decider decides, a conditional
// write's outcome: a reservation, a version conflict) — the shell performs it and feeds the answer back as the
// next observation. Pure.
import type { Effect } from "../effects.ts";
import type { Observation, Request } from "./requests.ts";

/** What a decider returns for one observation: the effects to perform, in order (one list), then what comes next. */
export interface Step<Next> {
  readonly effects: readonly Effect[];
  readonly next: Next;
  /**
   * Performed, as well as it goes, when performing `effects` fails, before that failure is thrown (its own failure
   * is not reported: the first one is): what a failed send must still leave behind.
   */
  readonly ifFailed?: readonly Effect[];
}

/**
 * The decider waits in `state` for the answer to `awaiting`. With `failureObserved`, a failure while the shell
 * performs it is answered as `failed` (the decider decides on it): `order`, a failure of the order source
 * (OrderSourceUnavailableError) or of the order data (OrderDataError, KernelInputError); `order_source`, of the
 * order source or its order (OrderSourceUnavailableError, OrderDataError); `order_data`, of the order only
 * (OrderDataError). Any other failure is thrown, as is every failure of a request without it.
 */
export interface Awaiting<State> {
  readonly awaiting: Request;
  readonly state: State;
  readonly failureObserved?: FailureObserved;
}

/** Which failures of a request the decider decides on (`Awaiting.failureObserved`). */
export type FailureObserved = "order" | "order_source" | "order_data";

/** What comes next: the outcome, another list of effects performed on its own, or a request. */
export type Next<Outcome, State> = { done: Outcome } | { then: Step<Next<Outcome, State>> } | Awaiting<State>;

/** A step that asks `awaiting` and waits in `state` (with `failureObserved`, the failures the decider decides on). */
export function ask<S>(awaiting: Request, state: S, failureObserved?: FailureObserved): Step<Next<never, S>> {
  return { effects: [], next: { awaiting, state, ...(failureObserved ? { failureObserved } : {}) } };
}

/** A step done with `outcome`, after `effects`. */
export function done<O>(outcome: O, effects: readonly Effect[] = []): Step<Next<O, never>> {
  return { effects, next: { done: outcome } };
}

/** The observation of `kind`, or a bug of the shell: it answered something else than the decider asked. */
export function observedAs<K extends Observation["kind"]>(
  observed: Observation,
  kind: K,
): Extract<Observation, { kind: K }> {
  if (observed.kind !== kind) throw new Error(`decider: asked for ${kind}, the shell answered ${observed.kind}`);
  return observed as Extract<Observation, { kind: K }>;
}

/**
 * A sub-decider's step as a step of its parent: what it asks is asked in the parent's state `wrap` builds, and once it
 * is done the parent goes on with `after` (after the sub-decider's last effects, performed as their own list).
 */
export function within<O, S, PO, PS>(
  step: Step<Next<O, S>>,
  wrap: (state: S) => PS,
  after: (outcome: O) => Step<Next<PO, PS>>,
): Step<Next<PO, PS>> {
  const { next } = step;
  if ("awaiting" in next) return { effects: step.effects, next: { ...next, state: wrap(next.state) } };
  if ("then" in next) return { effects: step.effects, next: { then: within(next.then, wrap, after) } };
  const rest = after(next.done);
  return step.effects.length === 0 ? rest : { effects: step.effects, next: { then: rest } };
}
