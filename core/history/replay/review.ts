// Replay of a claim's human review: NEEDS_REVIEW repeating its cause, the review requested, a four-eyes first
// approval, and the person's decision as recorded and stored (an APPROVE's refund in refund.ts).
import { parseCents } from "../../kernel/index.ts";
import type { Claim } from "../../claim/claim.ts";
import { approvalExecutionIdFor, resubmittedClaimIdFor, reviewIdFor } from "../../kernel/review.ts";
import type { ReplayDetails } from "./events.ts";
import { enter, label, scope, unused } from "./context.ts";
import type { Ctx, Flow, Found } from "./context.ts";
import { approvedRefund } from "./refund.ts";

/** The claim ended in NEEDS_REVIEW: CLAIM_NEEDS_REVIEW repeats its cause's code and reason. */
export function review(
  ctx: Ctx,
  flow: Flow,
  cause: { reason_code: string; reason: string },
  found: Found<"CLAIM_NEEDS_REVIEW">,
  claim?: Claim,
): void {
  const s = scope(ctx, "review");
  s.compare(`${label(found.r)} reason_code`, found.d.reason_code, cause.reason_code);
  s.compare(`${label(found.r)} reason`, found.d.reason, cause.reason);
  s.compare(`${label(found.r)} review_id`, found.raw.review_id, reviewIdFor(flow.claimId));
  s.done(`NEEDS_REVIEW ${cause.reason_code}`);
  ctx.outcome = "NEEDS_REVIEW";
  ctx.reasonCode = cause.reason_code;
  humanReview(ctx, flow, "NEEDS_REVIEW", {
    reason_code: cause.reason_code,
    reason: cause.reason,
    orderId: claim?.order_id,
    amountEur: claim?.amount_eur,
  });
}

/**
 * The review a person is asked for (docs/reviews.md): REVIEW_REQUESTED names the claim's review with the cause, and
 * when a person decided, REVIEW_DECIDED (an APPROVE with its refund, reserved once for at most the proposal).
 */
export function humanReview(
  ctx: Ctx,
  flow: Flow,
  origin: "ESCALATE" | "NEEDS_REVIEW",
  cause: {
    reason_code: string;
    reason: string;
    verdictId?: string;
    amountEur?: number | null | undefined;
    orderId?: string | null | undefined;
    /** The order's currency: an approved refund's amount_cents are its minor units (EUR when absent). */
    currency?: string | undefined;
  },
): void {
  const s = scope(ctx, "review");
  const requested = enter(ctx, "review_requested", "review");
  if (!requested) return;
  const reviewId = reviewIdFor(flow.claimId);
  const { d, r } = requested.REVIEW_REQUESTED;
  s.compare(`${label(r)} review_id`, d.review_id, reviewId);
  s.compare(`${label(r)} origin`, d.origin, origin);
  s.compare(`${label(r)} reason_code`, d.reason_code, cause.reason_code);
  s.compare(`${label(r)} reason`, d.reason, cause.reason);
  s.compare(`${label(r)} order_id`, d.order_id, cause.orderId ?? undefined);
  s.compare(`${label(r)} amount_eur`, d.amount_eur, cause.amountEur ?? undefined);
  s.compare(`${label(r)} simulation_id`, d.simulation_id, flow.simulationId);
  const stored = ctx.opts.review;
  const first = firstApproval(ctx, reviewId);
  if (stored && stored.status === "PENDING" && unused(ctx, "REVIEW_DECIDED").length > 0)
    s.different(`REVIEW_DECIDED is recorded, but the stored review ${reviewId} is still PENDING`);
  if (unused(ctx, "REVIEW_DECIDED").length === 0 && (!stored || stored.status === "PENDING")) {
    s.done(
      first
        ? `review ${reviewId} requested (${origin}), first approval by ${first.reviewer}, awaiting a second reviewer`
        : `review ${reviewId} requested (${origin}), not decided yet`,
    );
    return;
  }
  const decided = enter(ctx, "review_decided", "review");
  if (!decided) return;
  const dd = decided.REVIEW_DECIDED.d;
  const at = label(decided.REVIEW_DECIDED.r);
  s.compare(`${at} review_id`, dd.review_id, reviewId);
  if (stored?.decision !== undefined) {
    s.compare(`${at} decision (the stored review's)`, dd.decision, stored.decision);
    s.compare(`${at} reviewer (the stored review's)`, dd.reviewer, stored.reviewer);
    s.compare(`${at} note (the stored review's)`, dd.note, stored.note);
  }
  s.expect(
    dd.decision !== "APPROVE" || origin === "ESCALATE",
    `${at} approves a review of origin ${origin}: only escalations can be approved`,
  );
  s.expect(
    dd.decision !== "RESUBMIT" || origin === "NEEDS_REVIEW",
    `${at} resubmits an escalation: only claims that need review can be resubmitted`,
  );
  s.compare(
    `${at} resubmitted_claim_id`,
    dd.resubmitted_claim_id,
    dd.decision === "RESUBMIT" ? resubmittedClaimIdFor(reviewId) : undefined,
  );
  s.compare(
    `${at} execution_id`,
    dd.execution_id,
    dd.decision === "APPROVE" ? approvalExecutionIdFor(reviewId) : undefined,
  );
  s.compare(`${at} simulation_id`, dd.simulation_id, flow.simulationId);
  s.expect(dd.reviewer.length > 0, `${at} names no reviewer`);
  s.expect(dd.decision !== "APPROVE" || dd.approvals !== undefined, `${at} approves without listing its approvals`);
  if (first) {
    s.expect(
      dd.decision !== "APPROVE" || dd.reviewer !== first.reviewer,
      `${at} completes a four-eyes approval by ${dd.reviewer}, who gave the first approval too`,
    );
    if (dd.decision === "APPROVE") {
      s.compare(`${at} approvals[0] (REVIEW_APPROVAL_RECORDED's)`, dd.approvals?.[0], {
        reviewer: first.reviewer,
        amount_eur: first.amount_eur,
        at: first.at,
      });
      const [a, b] = [parseCents(first.amount_eur), parseCents(dd.amount_eur)];
      s.expect(
        a.ok && b.ok && b.cents <= a.cents,
        `${at} approves ${String(dd.amount_eur)} EUR, more than the first approval's ${first.amount_eur} EUR`,
      );
    }
  } else if (dd.decision === "APPROVE" && dd.approvals !== undefined) {
    s.expect(
      dd.approvals.length === 1,
      `${at} lists ${dd.approvals.length} approvals, but no first approval is recorded`,
    );
  }
  if (dd.decision === "APPROVE" && dd.approvals !== undefined)
    s.compare(`${at} last approval`, dd.approvals.at(-1), {
      reviewer: dd.reviewer,
      amount_eur: dd.amount_eur,
      at: dd.decided_at,
    });
  if (dd.decision === "APPROVE" && !approvedRefund(ctx, flow, reviewId, at, dd, cause)) return;
  s.done(`review ${reviewId}: ${dd.decision}${dd.reviewer ? ` by ${dd.reviewer}` : ""}`);
  ctx.review = dd.decision;
}

/**
 * A four-eyes review's first approval (REVIEW_APPROVAL_RECORDED, at most one, of this review), taken from the
 * record; undefined when there is none.
 */
function firstApproval(ctx: Ctx, reviewId: string): ReplayDetails<"REVIEW_APPROVAL_RECORDED"> | undefined {
  const records = unused(ctx, "REVIEW_APPROVAL_RECORDED");
  if (records.length === 0) return undefined;
  const s = scope(ctx, "review");
  for (const r of records) ctx.used.add(r.n);
  if (records.length > 1)
    s.different(`REVIEW_APPROVAL_RECORDED is recorded ${records.length} times; a review has one first approval`);
  const [r] = records;
  if (r!.error !== undefined) {
    ctx.reported.add(r!.n);
    s.incomplete(`${label(r!)} cannot be read: ${r!.error}`);
    return undefined;
  }
  const d = r!.parsed as ReplayDetails<"REVIEW_APPROVAL_RECORDED">;
  s.compare(`${label(r!)} review_id`, d.review_id, reviewId);
  return d;
}
