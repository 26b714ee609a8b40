// Opening a review, decided without ports: the effects that end a claim in NEEDS_REVIEW come in the order that
// makes a crash safe (the claim's record last), and a repeat builds the same review and the same events.
import { describe, expect, it } from "vitest";
import { reviewIdFor } from "../../core/kernel/review.ts";
import { ACCEPTABLE, audits, claimRecord, NOW, shape } from "./decide.test-kit.ts";
import { needsReview, reviewFor, reviewOpenedFor } from "./needs-review.ts";

describe("needsReview", () => {
  it.each([
    [
      "with the failing step's event",
      { type: "CREW_FAILED" as const, details: { code: "X" } },
      ["audit CREW_FAILED", "audit CLAIM_NEEDS_REVIEW", "audit REVIEW_REQUESTED"],
    ],
    ["without one", undefined, ["audit CLAIM_NEEDS_REVIEW", "audit REVIEW_REQUESTED"]],
  ])("audits, opens the review, publishes, and records the claim last — %s", (_name, cause, audited) => {
    const effects = needsReview(claimRecord(ACCEPTABLE), NOW, "STALLED", "stuck", { nudges: 3 }, cause);
    expect(shape(effects)).toEqual([
      ...audited,
      "review_open",
      "publish ClaimNeedsReview,ReviewRequested",
      "claim_update",
    ]);
    expect(effects.at(-1)).toMatchObject({
      kind: "claim_update",
      patch: { status: "NEEDS_REVIEW", reason_code: "STALLED", reason: "stuck" },
    });
    const needs = audits(effects).find((e) => e.event_type === "CLAIM_NEEDS_REVIEW");
    expect(needs?.details).toMatchObject({ reason_code: "STALLED", nudges: 3, review_id: reviewIdFor("clm_1") });
    expect(needs?.severity).toBe("WARN");
  });

  it("names the claim's order and amount on the review of a structured claim, none for free text", () => {
    const structured = needsReview(claimRecord(ACCEPTABLE), NOW, "R", "r");
    expect(structured.find((e) => e.kind === "review_open")).toMatchObject({
      review: { order_id: "ord_001", amount_eur: 299.99, origin: "NEEDS_REVIEW", status: "PENDING", version: 1 },
    });
    const text = claimRecord(ACCEPTABLE, { input: { claim_text: "my order" }, claim: undefined });
    const review = needsReview(text, NOW, "R", "r").find((e) => e.kind === "review_open");
    expect(review).toMatchObject({ kind: "review_open", review: { origin: "NEEDS_REVIEW" } });
    expect(review?.kind === "review_open" && "order_id" in review.review).toBe(false);
  });

  it("builds the same effects when repeated, and the sweep's variant leaves only the claim's record out", () => {
    const record = claimRecord(ACCEPTABLE, { simulation_id: "sim_1" });
    expect(needsReview(record, NOW, "R", "r", { nudges: 1 })).toEqual(
      needsReview(record, NOW, "R", "r", { nudges: 1 }),
    );
    expect(reviewOpenedFor(record, NOW, "R", "r", { nudges: 1 })).toEqual(
      needsReview(record, NOW, "R", "r", { nudges: 1 }).filter((e) => e.kind !== "claim_update"),
    );
  });
});

describe("reviewFor", () => {
  it("opens a PENDING review carrying the escalation's verdict and proposal, in the claim's simulation", () => {
    const review = reviewFor(claimRecord(ACCEPTABLE, { simulation_id: "sim_1" }), {
      origin: "ESCALATE",
      reasonCode: "AMOUNT_ABOVE_LIMIT",
      reason: "too much",
      now: NOW,
      orderId: "ord_001",
      amountEur: 10,
      verdictId: "vrd_1",
      verdictDecidedAt: "2026-06-01T11:00:00.000Z",
      proposal: { p: 1 },
    });
    expect(review).toEqual({
      review_id: reviewIdFor("clm_1"),
      claim_id: "clm_1",
      dfid: "dfid_clm_1",
      origin: "ESCALATE",
      status: "PENDING",
      reason_code: "AMOUNT_ABOVE_LIMIT",
      reason: "too much",
      order_id: "ord_001",
      amount_eur: 10,
      requested_at: new Date(NOW).toISOString(),
      simulation_id: "sim_1",
      verdict_id: "vrd_1",
      verdict_decided_at: "2026-06-01T11:00:00.000Z",
      proposal: { p: 1 },
      version: 1,
    });
  });
});
