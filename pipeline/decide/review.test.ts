// A reviewer's decision on a claim's review, walked without ports from the request to the answer: the checks, the
// intent claimed on the review with a conditional write (a lost race read again), the approval's reject checks and
// reservation, a resubmission through intake, the decision announced, then recorded.
import { describe, expect, it } from "vitest";
import type { ReserveResult } from "../../core/kernel/index.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { ReviewRecord } from "../../core/kernel/review.ts";
import { claimRecord, ESCALATED, NOW, order, policy, walkDecider } from "./decide.test-kit.ts";
import { decideProposal } from "./kernel-decision.ts";
import { messageFor } from "./kernel.test-kit.ts";
import { reviewFor } from "./needs-review.ts";
import type { Observation, Request } from "./requests.ts";
import { decideReview, startReview, startReviewRepair } from "./review.ts";

const record: ClaimRecord = claimRecord(ESCALATED, { status: "DECIDED", verdict: "ESCALATE" });
const escalated: ReviewRecord = decideProposal(
  claimRecord(ESCALATED),
  messageFor(claimRecord(ESCALATED)).proposal,
  { order: order("ord_002"), ledgerEntry: undefined, decidedAt: new Date(NOW).toISOString(), now: NOW },
  policy,
).review!;

const needingReview: ReviewRecord = reviewFor(claimRecord(ESCALATED), {
  origin: "NEEDS_REVIEW",
  reasonCode: "CLAIMS_SELF_CHECK_FAILED",
  reason: "the proposal failed the self-check",
  now: NOW,
  orderId: "ord_002",
});

interface Stores {
  review?: ReviewRecord;
  /** Intent updates that lose a race before one takes. */
  races?: number;
  orderDown?: boolean;
  reserve?: ReserveResult;
}

function walk(
  body: unknown,
  stores: Stores,
  start = startReview("clm_1", body, undefined, { ...policy, settlements: false }),
) {
  let races = stores.races ?? 0;
  let review = stores.review;
  const answer = (request: Request): Observation => {
    switch (request.kind) {
      case "claim":
        return { kind: "claim", claim: record };
      case "review":
        return { kind: "review", review };
      case "now":
        return { kind: "now", now: NOW + 60_000 };
      case "review_update":
        if (races-- > 0) return { kind: "review_update", changed: false, review };
        review = request.review;
        return { kind: "review_update", changed: true, review };
      case "order":
        if (stores.orderDown) return { kind: "failed", code: "ORDER_SOURCE_UNAVAILABLE", message: "the shop is down" };
        return { kind: "order", order: order(request.orderId) };
      case "ledger":
        return { kind: "ledger", entry: undefined };
      case "approved_alone":
        return { kind: "approved_alone", cents: 0, approvedCount: 0 };
      case "reserve":
        return {
          kind: "reserve",
          result: stores.reserve ?? {
            ok: true,
            entry: {
              order_id: request.request.orderId,
              refunded_cents: request.request.cents,
              claims: { clm_1: request.request.cents },
            },
          },
        };
      case "create_claim":
        return { kind: "create_claim", result: { created: true, record: request.record } };
      default:
        throw new Error(`asked ${request.kind}`);
    }
  };
  const decide = (state: Parameters<typeof decideReview>[0], observed: Observation) =>
    decideReview(state, observed, { ...policy, settlements: false });
  return walkDecider(start, decide, answer);
}

/** A carrier reads the review again before it announces (a stale carrier announces nothing: review-decision.ts `staleCarrier`). */
const REREAD = "? review";
const DECIDED = "audit REVIEW_DECIDED + review_closed + publish ReviewDecided";
const APPROVED =
  "audit CLAIM_REFUND_EXECUTED + audit REVIEW_DECIDED + review_closed + publish RefundExecuted,ReviewDecided + claim_update";

describe("decideReview", () => {
  it.each<[string, unknown, Stores, string[], Record<string, unknown>]>([
    [
      "DENY: the intent claimed, carried out, announced, then recorded (the ledger's mark cleared again)",
      { decision: "DENY", reviewer: "ana", note: "not covered" },
      { review: escalated },
      ["? claim", "? review", "? now", "? review_update", "? now", REREAD, DECIDED, "? review_update", "review_closed"],
      { ok: true, body: { executed: false, review: { status: "DENIED" } } },
    ],
    [
      "APPROVE: checked before anything is claimed, checked again and reserved once, the refund announced",
      { decision: "APPROVE", reviewer: "ana" },
      { review: escalated },
      [
        "? claim",
        "? review",
        "? approved_alone",
        "? order",
        "? ledger",
        "? now",
        "? review_update",
        "? now",
        "? order",
        "? ledger",
        "? reserve",
        REREAD,
        APPROVED,
        "? review_update",
        "review_closed + claim_update",
      ],
      { ok: true, body: { executed: true, review: { status: "APPROVED" } } },
    ],
    [
      "APPROVE while the shop cannot answer: refused 503 before anything is claimed",
      { decision: "APPROVE" },
      { review: escalated, orderDown: true },
      ["? claim", "? review", "? approved_alone", "? order"],
      { ok: false, status: 503, code: "ORDER_SOURCE_UNAVAILABLE" },
    ],
    [
      "APPROVE the ledger refuses when reserved: the intent withdrawn, the review stays PENDING",
      { decision: "APPROVE" },
      {
        review: escalated,
        reserve: {
          ok: false,
          code: "EXCEEDS_ORDER_AMOUNT",
          message: "no balance",
          entry: { order_id: "ord_002", refunded_cents: 120000, claims: { clm_2: 120000 } },
        },
      },
      [
        "? claim",
        "? review",
        "? approved_alone",
        "? order",
        "? ledger",
        "? now",
        "? review_update",
        "? now",
        "? order",
        "? ledger",
        "? reserve",
        "? review_update",
      ],
      { ok: false, status: 409, code: "EXCEEDS_REFUNDABLE_BALANCE" },
    ],
    [
      "RESUBMIT: the corrected claim submitted through intake, then the review recorded",
      { decision: "RESUBMIT", note: "the amount was wrong", claim: { ...ESCALATED, amount_eur: 900 } },
      { review: needingReview },
      [
        "? claim",
        "? review",
        "? now",
        "? review_update",
        "? now",
        "? now",
        "? create_claim",
        "crew_event claim.start",
        REREAD,
        DECIDED,
        "? review_update",
        "review_closed",
      ],
      { ok: true, body: { review: { status: "RESUBMITTED" }, resubmitted_claim_id: expect.any(String) } },
    ],
    [
      "a decision whose intent keeps losing races: 409, changing concurrently",
      { decision: "DENY", note: "not covered" },
      { review: escalated, races: 3 },
      [
        "? claim",
        "? review",
        "? now",
        "? review_update",
        "? review",
        "? now",
        "? review_update",
        "? review",
        "? now",
        "? review_update",
      ],
      { ok: false, status: 409, code: "REVIEW_CHANGED" },
    ],
    [
      "no review: 409",
      { decision: "DENY", note: "not covered" },
      {},
      ["? claim", "? review"],
      { ok: false, code: "NO_PENDING_REVIEW" },
    ],
    [
      "an invalid body: 400, nothing read",
      { decision: "MAYBE" },
      {},
      [],
      { ok: false, status: 400, code: "INVALID_INPUT" },
    ],
  ])("%s", (_name, body, stores, trace, outcome) => {
    const walked = walk(body, stores);
    expect({ trace: walked.trace, outcome: walked.outcome }).toMatchObject({ trace, outcome });
  });

  it("answers a decided review repeated with the same decision, announcing it again", () => {
    const denied = walk({ decision: "DENY", reviewer: "ana", note: "not covered" }, { review: escalated });
    const stored = (denied.outcome as unknown as { body: { review: ReviewRecord } }).body.review;
    expect(stored).toMatchObject({ status: "DENIED" });
    const again = walk(
      { decision: "DENY", reviewer: "ana", note: "not covered" },
      { review: { ...escalated, ...stored } as ReviewRecord },
    );
    expect(again.trace).toEqual(["? claim", "? review", DECIDED]);
  });

  it("repairs for the sweep a decision claimed but not finished, from its carry-out", () => {
    const claimed = {
      ...escalated,
      intent: {
        decision: "DENY" as const,
        reviewer: "ana",
        note: "not covered",
        decided_at: new Date(NOW).toISOString(),
      },
    };
    const walked = walk(undefined, { review: claimed }, startReviewRepair(claimed));
    expect(walked.trace).toEqual(["? claim", "? now", REREAD, DECIDED, "? review_update", "review_closed"]);
    expect(walked.outcome).toMatchObject({ ok: true });
  });
});
