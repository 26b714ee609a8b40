import { InvalidClockError } from "./errors.ts";

/** The only source of time the crew engine uses; injected so that tests and replays are deterministic. */
export type Clock = { now(): number };

/** A clock that stands still until told to move: for tests, simulations and replays. */
export type FrozenClock = Clock & { advance(ms: number): number; set(ms: number): number };

/** The real clock (milliseconds since the epoch): the one sanctioned reader of real time in `core/`. */
export function systemClock(): Clock {
  // eslint-disable-next-line no-restricted-properties -- the one sanctioned real clock of core/; everything else takes a Clock
  return { now: () => Date.now() };
}

/** A clock frozen at `ms` that moves only by `advance(ms)` or `set(ms)`; both return the new time. */
export function frozenClock(ms = 0): FrozenClock {
  assertTime(ms, "frozenClock");
  let t = ms;
  return {
    now: () => t,
    advance(delta: number) {
      assertTime(delta, "advance");
      if (delta < 0) throw new InvalidClockError(`frozenClock.advance: time does not run backwards (got ${delta} ms)`);
      t += delta;
      return t;
    },
    set(next: number) {
      assertTime(next, "set");
      t = next;
      return t;
    },
  };
}

function assertTime(ms: number, what: string): void {
  if (!Number.isFinite(ms))
    throw new InvalidClockError(`frozenClock.${what}: expected a finite number of milliseconds, got ${ms}`);
}
