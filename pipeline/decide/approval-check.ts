// An approval's check, decided (docs/reviews.md#deciding): the order read from the shop (a source that cannot answer
// is a 503 to try again, unusable data ORDER_DATA_INVALID), then its ledger entry, then the reject checks run again
// on them (decide/review-decision.ts approvalChecks) — before a decision is claimed, and again when carried out.
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { ReviewRecord } from "../../core/kernel/review.ts";
import { ORDER_SOURCE_UNAVAILABLE } from "../../core/kernel/reason-codes.ts";
import type { Order } from "../../core/integrity/index.ts";
import { approvalChecks, notApprovable } from "./review-decision.ts";
import type { ApprovalChecked, ApprovalPolicy } from "./review-decision.ts";
import type { Observation } from "./requests.ts";
import { ask, done, observedAs } from "./step.ts";
import type { Next, Step } from "./step.ts";

/** Where an approval's check stands: the order read, then its ledger entry. */
export type ApprovalCheckState =
  | { at: "order"; record: ClaimRecord; review: ReviewRecord; amountEur: number }
  | { at: "ledger"; record: ClaimRecord; review: ReviewRecord; amountEur: number; order: Order };

type Outcome<O, S> = Step<Next<O, S>>;

/** Loads the order and its ledger entry as they stand now, then checks the approval of `amountEur` on them. */
export function startApprovalCheck(
  record: ClaimRecord,
  review: ReviewRecord,
  amountEur: number,
): Outcome<ApprovalChecked, ApprovalCheckState> {
  const refused = notApprovable(record, review);
  if (refused) return done(refused);
  return ask({ kind: "order", orderId: review.order_id! }, { at: "order", record, review, amountEur }, "order_source");
}

export function decideApprovalCheck(
  state: ApprovalCheckState,
  observed: Observation,
  policy: ApprovalPolicy,
): Outcome<ApprovalChecked, ApprovalCheckState> {
  const { record, review, amountEur } = state;
  if (state.at === "order") {
    if (observed.kind === "failed")
      return done(
        observed.code === ORDER_SOURCE_UNAVAILABLE
          ? {
              ok: false,
              code: ORDER_SOURCE_UNAVAILABLE,
              message: `the shop's orders cannot be read now, so the approval cannot be checked; nothing changed, try again later (${observed.message})`,
            }
          : { ok: false, code: "ORDER_DATA_INVALID", message: observed.message },
      );
    const { order } = observedAs(observed, "order");
    if (!order) return done(approvalChecks({ record, review, amountEur, order, ledgerEntry: undefined }, policy));
    return ask(
      { kind: "ledger", orderId: order.order_id, scope: record.simulation_id },
      { ...state, at: "ledger", order },
    );
  }
  const ledgerEntry = observedAs(observed, "ledger").entry;
  return done(approvalChecks({ record, review, amountEur, order: state.order, ledgerEntry }, policy));
}
