// The shape every process's decider has (docs/architecture.md): `decide(state, observation) → { effects, next }`.
// The shell loads, calls its decider, performs the effects in order and, while `next` asks for more (an answer
// only known after a read or a conditional write: a reservation, a version conflict), performs what it asks and
// feeds the answer back as the next observation. Pure.
import type { Effect } from "../effects.ts";

/** What a decider returns for one observation: the effects to perform, in order (one list), then what comes next. */
export interface Step<Next> {
  readonly effects: readonly Effect[];
  readonly next: Next;
}

/** The observation of `kind`, or a bug of the shell: it answered something else than the decider asked. */
export function observedAs<O extends { kind: string }, K extends O["kind"]>(
  observed: O,
  kind: K,
): Extract<O, { kind: K }> {
  if (observed.kind !== kind) throw new Error(`decider: asked for ${kind}, the shell answered ${observed.kind}`);
  return observed as Extract<O, { kind: K }>;
}
