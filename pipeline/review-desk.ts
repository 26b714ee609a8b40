// The review desk (docs/reviews.md): a reviewer takes a review — a lease in their name until REVIEW_LEASE_MS from
// now, so two people do not work the same claim — and another reviewer's decision on it is refused (409 TAKEN_BY)
// until the lease runs out or the holder decides. Claims' reviews hold the lease on the review record, failed
// refunds' reviews on the settlement's review; both are changed by conditional writes only.
import { VersionConflictError } from "../core/errors.ts";
import { DEFAULT_REVIEW_DUE_MS, REVIEW_LEASE_MS, takenByRefusal } from "../core/kernel/review.ts";
import type { ReviewDesk, ReviewerIdentity } from "../core/kernel/review.ts";
import type { PipelineDeps } from "./deps.ts";

/** What the desk reads: the policy's due duration and the clock. */
export function reviewDesk(deps: Pick<PipelineDeps, "agent" | "clock">): ReviewDesk {
  return { dueMs: deps.agent.review?.dueMs ?? DEFAULT_REVIEW_DUE_MS, nowMs: deps.clock.now() };
}

/** The answer to `POST /claims/{id}/review/take`. */
export type TakeResult =
  | { ok: true; body: { claim_id: string; review_id: string; taken_by: string; taken_until: string } }
  | { ok: false; status: 404; code: "NOT_FOUND"; message: string }
  | { ok: false; status: 409; code: "NO_PENDING_REVIEW" | "TAKEN_BY" | "REVIEW_ALREADY_DECIDED"; message: string };

/**
 * Takes the claim's pending review for `by` until REVIEW_LEASE_MS from now (again: renewed), or says why not: another
 * reviewer holds it (409 TAKEN_BY), nothing is pending (409 NO_PENDING_REVIEW), an unknown claim (404). A failed
 * refund's pending review is the one taken when the claim has one.
 */
export async function takeReview(
  claimId: string,
  by: ReviewerIdentity,
  deps: Pick<PipelineDeps, "claims" | "reviews" | "settlements" | "clock">,
): Promise<TakeResult> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = deps.clock.now();
    const until = new Date(now + REVIEW_LEASE_MS).toISOString();
    const taken = (reviewId: string) => ({
      ok: true as const,
      body: { claim_id: claimId, review_id: reviewId, taken_by: by.id, taken_until: until },
    });
    const settlement = await deps.settlements?.get(claimId);
    if (settlement?.review?.status === "PENDING") {
      const review = settlement.review;
      const refused = takenByRefusal(review, by.id, now, review.review_id);
      if (refused) return { ok: false, ...refused };
      try {
        await deps.settlements!.update({
          ...settlement,
          review: { ...review, taken_by: by.id, taken_until: until },
          version: settlement.version + 1,
        });
      } catch (error) {
        if (error instanceof VersionConflictError) continue;
        throw error;
      }
      return taken(review.review_id);
    }
    const review = await deps.reviews.getReview(claimId);
    if (!review) {
      if (!(await deps.claims.getClaim(claimId)))
        return { ok: false, status: 404, code: "NOT_FOUND", message: `claim ${claimId} not found` };
      return { ok: false, status: 409, code: "NO_PENDING_REVIEW", message: `claim ${claimId} has no pending review` };
    }
    if (review.status !== "PENDING" || review.intent !== undefined)
      return {
        ok: false,
        status: 409,
        code: "REVIEW_ALREADY_DECIDED",
        message: `review ${review.review_id} was already decided: ${review.decision ?? review.intent?.decision}${review.reviewer ? ` by ${review.reviewer}` : ""}`,
      };
    const refused = takenByRefusal(review, by.id, now, review.review_id);
    if (refused) return { ok: false, ...refused };
    const update = await deps.reviews.updateReview({
      ...review,
      taken_by: by.id,
      taken_until: until,
      version: review.version + 1,
    });
    if (!update.changed) continue;
    return taken(review.review_id);
  }
  return {
    ok: false,
    status: 409,
    code: "TAKEN_BY",
    message: `the review of claim ${claimId} is changing concurrently; look again`,
  };
}
