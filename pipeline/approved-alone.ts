// Four eyes per order (docs/reviews.md#four-eyes): what one reviewer alone has approved on an order, read for an
// approval's check — the order's ledger entry, and for each other claim holding a reservation on it, its review
// (approved by them alone?) and its settlement (a RETRY of theirs?).
import { approvedAloneBy } from "../core/kernel/review.ts";
import type { RefundLedger, ReviewRepository, SettlementRepository } from "./ports.ts";

/** What `reviewer` alone approved on the order, in cents, and how many approved reservations it held then. */
export interface ApprovedAlone {
  readonly cents: number;
  readonly approvedCount: number;
}

/**
 * Each other claim holding a reservation on the order counts once, at the amount reserved, when its review was
 * approved by `reviewer` alone or they RETRYed its failed refund. The approval's reservation is then conditional on
 * `approvedCount` (ReserveMode `approvedCount`), so two approvals racing on one order are decided one after the other.
 */
export async function approvedAloneOnOrder(
  ports: { ledger: RefundLedger; reviews: ReviewRepository; settlements?: SettlementRepository | undefined },
  request: { orderId: string; scope: string | undefined; reviewer: string; exceptClaimId: string },
): Promise<ApprovedAlone> {
  const entry = await ports.ledger.get(request.orderId, request.scope);
  if (!entry) return { cents: 0, approvedCount: 0 };
  const approved = new Set(entry.approved ?? []);
  const counted = await Promise.all(
    Object.entries(entry.claims)
      .filter(([id]) => id !== request.exceptClaimId)
      .map(async ([id, cents]) => {
        const [review, settlement] = await Promise.all([
          approved.has(id) ? ports.reviews.getReview(id) : undefined,
          ports.settlements?.get(id),
        ]);
        const retried = settlement?.review?.decision === "RETRY" && settlement.review.reviewer === request.reviewer;
        return approvedAloneBy(review, request.reviewer) || retried ? cents : 0;
      }),
  );
  return { cents: counted.reduce((a, b) => a + b, 0), approvedCount: approved.size };
}
