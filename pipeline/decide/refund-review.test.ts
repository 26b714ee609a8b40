// A failed refund's review request (RETRY / CLOSE), walked without ports from the body to the answer: what it reads,
// the decision recorded on the settlement with a conditional write (a conflict read again), its effects performed
// and marked performed; any other decision refused while the refund's review is pending.
import { describe, expect, it } from "vitest";
import type { SettlementRecord } from "../../core/kernel/settlement.ts";
import { ACCEPTABLE, claimRecord, failedSettlement, walkDecider } from "./decide.test-kit.ts";
import { decidePerformed, decideRefundReview, startPerformed, startRefundReview } from "./refund-review.ts";
import type { Observation, Request } from "./requests.ts";

const AT = "2026-11-27T10:00:00.000Z";
const failed: SettlementRecord = failedSettlement(AT);

/** The settlement as each read finds it, in turn (the last one repeats); `conflicts`: updates that lose a race. */
function walk(body: unknown, reads: (SettlementRecord | undefined)[], conflicts = 0, settlements = true) {
  let read = 0;
  let lost = 0;
  const answer = (request: Request): Observation => {
    switch (request.kind) {
      case "claim":
        return { kind: "claim", claim: claimRecord(ACCEPTABLE, { status: "DECIDED" }) };
      case "settlement":
        return { kind: "settlement", settlement: reads[Math.min(read++, reads.length - 1)] };
      case "now":
        return { kind: "now", now: Date.parse(AT) };
      case "announce":
        return { kind: "announce" };
      case "settlement_update":
        return { kind: "settlement_update", conflict: lost++ < conflicts };
      default:
        throw new Error(`asked ${request.kind}`);
    }
  };
  return walkDecider(startRefundReview("clm_1", body, undefined, { settlements }), decideRefundReview, answer);
}

const PERFORMED_RETRY = "audit REVIEW_DECIDED + audit CLAIM_REFUND_EXECUTED + publish ReviewDecided,RefundExecuted";

describe("decideRefundReview", () => {
  it("takes a RETRY: recorded on the settlement, performed, marked performed", () => {
    const walked = walk({ decision: "RETRY", reviewer: "ana" }, [failed]);
    expect(walked.trace).toEqual([
      "? claim",
      "? settlement",
      "? now",
      "? settlement_update",
      PERFORMED_RETRY,
      "? settlement",
      "? settlement_update",
    ]);
    expect(walked.outcome).toMatchObject({ ok: true, body: { executed: true, execution_id: expect.any(String) } });
  });

  it("reads the settlement again after a lost race, at most three times", () => {
    expect(walk({ decision: "RETRY" }, [failed], 1).trace.filter((t) => t === "? settlement_update")).toHaveLength(3);
    expect(walk({ decision: "RETRY" }, [failed], 3).outcome).toMatchObject({ code: "REVIEW_ALREADY_DECIDED" });
  });

  it("announces a failure not yet announced before deciding on it", () => {
    const unannounced = { ...failed, announced: undefined };
    expect(walk({ decision: "RETRY" }, [unannounced, failed]).trace.slice(0, 5)).toEqual([
      "? claim",
      "? settlement",
      "? announce",
      "? settlement",
      "? now",
    ]);
  });

  it.each<[string, unknown, (SettlementRecord | undefined)[], boolean, string[], unknown]>([
    [
      "refuses a CLOSE without a note",
      { decision: "CLOSE", paid_out_of_band: false },
      [failed],
      true,
      ["? claim", "? settlement"],
      { code: "NOTE_REQUIRED" },
    ],
    [
      "refuses another decision while the refund's review is pending",
      { decision: "APPROVE" },
      [failed],
      true,
      ["? settlement"],
      { status: 409, code: "DECISION_NOT_ALLOWED" },
    ],
    [
      "leaves another decision to the claim's review otherwise",
      { decision: "DENY" },
      [undefined],
      true,
      ["? settlement"],
      undefined,
    ],
    [
      "leaves every decision to the claim's review where nothing pays refunds",
      { decision: "DENY" },
      [],
      false,
      [],
      undefined,
    ],
  ])("%s", (_name, body, reads, settlements, trace, outcome) => {
    const walked = walk(body, reads, 0, settlements);
    expect(walked.trace).toEqual(trace);
    if (outcome === undefined) expect(walked.outcome).toBeUndefined();
    else expect(walked.outcome).toMatchObject(outcome as object);
  });
});

describe("startPerformed", () => {
  it("performs the effects, then marks them performed on the settlement as read again (a lost race left to the sweep)", () => {
    const answer = (request: Request): Observation =>
      request.kind === "settlement"
        ? { kind: "settlement", settlement: failed }
        : { kind: "settlement_update", conflict: true };
    const decided = {
      ...failed,
      review: { ...failed.review!, status: "CLOSED" as const, decision: "CLOSE" as const, decided_at: AT },
    };
    expect(walkDecider(startPerformed(decided), decidePerformed, answer)).toEqual({
      trace: [
        "refund_released + review_closed + audit REVIEW_DECIDED + publish ReviewDecided",
        "? settlement",
        "? settlement_update",
      ],
      outcome: true,
    });
    expect(
      walkDecider(
        startPerformed({ ...decided, review: { ...decided.review, performed: true } }),
        decidePerformed,
        answer,
      ),
    ).toEqual({
      trace: ["refund_released + review_closed + audit REVIEW_DECIDED + publish ReviewDecided"],
      outcome: true,
    });
  });
});
