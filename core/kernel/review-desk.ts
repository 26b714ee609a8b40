// The review desk's pure rules (docs/reviews.md#the-desk): when a review is due, who holds it (a lease taken with
// `POST /claims/{id}/review/take`), the refusal of another reviewer's decision while they do (409 TAKEN_BY), and the
// order the queue lists reviews in.
/** How long a review stays taken (`POST /claims/{id}/review/take`) unless the reviewer decides it or takes it again. */
export const REVIEW_LEASE_MS = 15 * 60_000;

/** How long a review may wait for a person when the policy says nothing (`review_due_days` / `review_due_hours`). */
export const DEFAULT_REVIEW_DUE_MS = 2 * 86_400_000;

/** What the desk shows of a review beside its record: when it is due (the policy's due duration) and who holds it now. */
export interface ReviewDesk {
  /** The policy's `review_due_days` / `review_due_hours`, in milliseconds. */
  readonly dueMs: number;
  readonly nowMs: number;
}

/** A review's lease, as reviews and failed refunds' reviews both carry it. */
export interface ReviewLease {
  readonly taken_by?: string | undefined;
  readonly taken_until?: string | undefined;
}

/** When a review requested at `requestedAt` is due: `requested_at` + the policy's due duration (ISO). */
export function reviewDueAt(requestedAt: string, dueMs: number): string {
  return new Date(Date.parse(requestedAt) + dueMs).toISOString();
}

/** Who holds the review at `nowMs` and until when; undefined when nobody took it or the lease ran out. */
export function leaseHolder(lease: ReviewLease, nowMs: number): { reviewer: string; until: string } | undefined {
  if (!lease.taken_by || !lease.taken_until) return undefined;
  return Date.parse(lease.taken_until) > nowMs ? { reviewer: lease.taken_by, until: lease.taken_until } : undefined;
}

/** The refusal of `reviewer`'s decision (or take) on a review another reviewer holds at `nowMs`, if they do (409 TAKEN_BY). */
export function takenByRefusal(
  lease: ReviewLease,
  reviewer: string,
  nowMs: number,
  reviewId: string,
): { status: 409; code: "TAKEN_BY"; message: string } | undefined {
  const holder = leaseHolder(lease, nowMs);
  if (!holder || holder.reviewer === reviewer) return undefined;
  return {
    status: 409,
    code: "TAKEN_BY",
    message: `review ${reviewId} is taken by ${holder.reviewer} until ${holder.until}: they decide it, or it is free again then`,
  };
}

/** The desk's fields of a review: `due_at`, and `taken_by` / `taken_until` while someone holds it. */
export function deskFields(
  review: ReviewLease & { requested_at: string; status: string },
  desk: ReviewDesk | undefined,
): Record<string, unknown> {
  if (!desk) return {};
  const holder = review.status === "PENDING" ? leaseHolder(review, desk.nowMs) : undefined;
  return {
    due_at: reviewDueAt(review.requested_at, desk.dueMs),
    ...(holder ? { taken_by: holder.reviewer, taken_until: holder.until } : {}),
  };
}

/**
 * The desk's order of listed reviews: the soonest `due_at` first, then the larger `amount_eur` (more money waits),
 * then the claim id; items without a due time (decided listings) by `requested_at`.
 */
export function byDueThenAmount(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const due = (x: Record<string, unknown>) => String(x.due_at ?? x.requested_at ?? "");
  const amount = (x: Record<string, unknown>) => (typeof x.amount_eur === "number" ? x.amount_eur : 0);
  if (due(a) !== due(b)) return due(a) < due(b) ? -1 : 1;
  if (amount(a) !== amount(b)) return amount(b) - amount(a);
  return String(a.claim_id) < String(b.claim_id) ? -1 : String(a.claim_id) > String(b.claim_id) ? 1 : 0;
}
