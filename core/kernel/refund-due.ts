// The refund-due alarm (docs/returns.md#the-refund-due-alarm): a refund is legally due `refund_due_days` after its
// clock starts — the return received (the policy's pay_on event) or, when no return is asked, the claim's decision —
// and warns from four days before. Pure: the instant `now` is injected; the sweep, `claims reconcile` and `/health`
// call it with what they read.
import { RETURN_POLICY_DEFAULTS } from "./returns.ts";

/** Days before a refund is due from which an unsettled one warns. */
export const REFUND_DUE_WARNING_DAYS = 4;

const DAY_MS = 86_400_000;

/** When a refund's clock starts: at the return's pay_on event, else (no return asked) at the claim's decision. */
export type RefundClock = {
  /** The claim's decision (ISO). */
  readonly decidedAt: string;
  /** Whether the ACCEPT waited for a return. */
  readonly returnAsked: boolean;
  /** The return's pay_on event (ISO), once it came; absent while the return is awaited. */
  readonly returnReceivedAt?: string;
  /** The policy's `refund_due_days` (default 14). */
  readonly refundDueDays?: number;
};

/** Where an unsettled refund stands against its legal deadline. */
export type RefundDue = {
  readonly due_at: string;
  /** Whole days from `now` to `due_at`, rounded down (negative: overdue). */
  readonly days_left: number;
  /** Whether `now` is at or past `due_at − 4 days` (the alarm's line). */
  readonly warning: boolean;
};

/** The instant a refund's clock starts, or `undefined` while its return has not been received (no clock yet). */
export function refundClockStart(clock: RefundClock): string | undefined {
  if (!clock.returnAsked) return clock.decidedAt;
  return clock.returnReceivedAt;
}

/** Where an unsettled refund stands at `now`; `undefined` while its return has not been received. */
export function refundDue(clock: RefundClock, now: number): RefundDue | undefined {
  const start = refundClockStart(clock);
  if (start === undefined) return undefined;
  const days = clock.refundDueDays ?? RETURN_POLICY_DEFAULTS.refund_due_days;
  const dueMs = Date.parse(start) + days * DAY_MS;
  return {
    due_at: new Date(dueMs).toISOString(),
    days_left: Math.floor((dueMs - now) / DAY_MS),
    warning: now >= dueMs - REFUND_DUE_WARNING_DAYS * DAY_MS,
  };
}

/** An accepted refund as the alarm reads it: its claim, its clock, and whether it settled. */
export type AcceptedRefund = RefundClock & { readonly claim_id: string; readonly settled: boolean };

/** A refund the alarm names: its claim, when it is due, how many days are left. */
export type RefundDueLine = { readonly claim_id: string; readonly due_at: string; readonly days_left: number };

/** The unsettled refunds at or past their warning at `now`, soonest due first (a settled one never warns). */
export function refundsDueSoon(refunds: readonly AcceptedRefund[], now: number): RefundDueLine[] {
  return refunds
    .flatMap((r) => {
      if (r.settled) return [];
      const due = refundDue(r, now);
      return due?.warning ? [{ claim_id: r.claim_id, due_at: due.due_at, days_left: due.days_left }] : [];
    })
    .sort((a, b) => (a.due_at === b.due_at ? (a.claim_id < b.claim_id ? -1 : 1) : a.due_at < b.due_at ? -1 : 1));
}
