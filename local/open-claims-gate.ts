// Back-pressure of the local stack (docs/http-api.md): intake takes a new claim only while fewer than `maxOpen`
// claims are open (RECEIVED or RUNNING). The count comes from the store's open-claims index, read at most
// once per `refreshMs`; claims admitted since the last count are added to it, so a burst between two counts
// cannot run past the bound by more than the requests already in flight. A refusal costs no store access.
import type { Admission } from "../pipeline/intake.ts";

/** Options of `createOpenClaimsGate`. */
type OpenClaimsGateOptions = {
  readonly maxOpen: number;
  /** Counts the open claims in the store. */
  readonly countOpen: () => Promise<number>;
  readonly now: () => number;
  /** How long a count is trusted (default 1000 ms). */
  readonly refreshMs?: number;
  /** The Retry-After of a refusal, in seconds (default 2). */
  readonly retryAfterS?: number;
};

/** The gate intake asks before it opens a claim. */
type OpenClaimsGate = {
  admit(): Promise<Admission>;
  /** Open claims as last counted plus those admitted since. */
  estimate(): number;
};

/** A gate over the store's count of open claims. */
export function createOpenClaimsGate(options: OpenClaimsGateOptions): OpenClaimsGate {
  const { maxOpen, countOpen, now } = options;
  const refreshMs = options.refreshMs ?? 1000;
  const retryAfterS = options.retryAfterS ?? 2;
  let counted = 0;
  let admittedSince = 0;
  let countedAt = Number.NEGATIVE_INFINITY;
  let refreshing: Promise<void> | undefined;

  const refresh = () =>
    (refreshing ??= (async () => {
      const before = admittedSince;
      try {
        counted = await countOpen();
        // Claims admitted while counting may or may not be in the count: keep them, erring towards refusal.
        admittedSince -= before;
        countedAt = now();
      } finally {
        refreshing = undefined;
      }
    })());

  return {
    async admit() {
      if (now() - countedAt >= refreshMs) await refresh();
      const open = counted + admittedSince;
      if (open >= maxOpen) return { ok: false, open, bound: maxOpen, retryAfterS };
      admittedSince++;
      return { ok: true };
    },
    estimate: () => counted + admittedSince,
  };
}
