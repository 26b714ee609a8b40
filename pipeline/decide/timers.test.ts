// Timers and the sweep, decided without ports: what nudges a claim, when unchanged nudges make it STALLED
// (the claim first, conditionally, then its review), and what ends a claim that ran out of time.
import { describe, expect, it } from "vitest";
import { ACCEPTABLE, claimRecord, NOW, shape } from "./decide.test-kit.ts";
import { nudgeEffects, overdueDecision, sweepDecision, tickEffects } from "./timers.ts";

const REVIEW = [
  "audit CLAIM_NEEDS_REVIEW",
  "audit REVIEW_REQUESTED",
  "review_open",
  "publish ClaimNeedsReview,ReviewRequested",
];

describe("nudgeEffects", () => {
  it.each([
    ["a RECEIVED claim is started as intake starts it", "RECEIVED", "restarted", ["crew_event claim.start"]],
    ["a RUNNING claim's crew is told the time", "RUNNING", "ticked", ["crew_event crew.tick"]],
  ] as const)("%s", (_name, status, nudge, effects) => {
    const decided = nudgeEffects(claimRecord(ACCEPTABLE, { status }), NOW);
    expect(decided.nudge).toBe(nudge);
    expect(shape(decided.effects)).toEqual(effects);
  });

  it("ticks at the instant given", () => {
    expect(tickEffects("clm_1", NOW)).toEqual([
      { kind: "crew_event", claimId: "clm_1", message: { type: "crew.tick", crewId: "clm_1", nowMs: NOW } },
    ]);
  });
});

describe("sweepDecision", () => {
  const claim = claimRecord(ACCEPTABLE);
  const seen = `RUNNING|${claim.updated_at}|4`;

  it.each([
    ["a claim seen for the first time", undefined, 4, { nudges: 1, seen }],
    ["a claim seen unchanged", { nudges: 2, seen }, 4, { nudges: 3, seen }],
    [
      "a claim that moved since (its session did)",
      { nudges: 3, seen },
      5,
      { nudges: 1, seen: `RUNNING|${claim.updated_at}|5` },
    ],
  ])("counts one more nudge on %s", (_name, sweep, version, nudged) => {
    expect(sweepDecision({ ...claim, ...(sweep ? { sweep } : {}) }, version, NOW, 3)).toEqual({ nudged });
  });

  it("makes a claim unchanged through maxTicks nudges STALLED: the claim conditionally, then its review", () => {
    const decision = sweepDecision({ ...claim, sweep: { nudges: 3, seen } }, 4, NOW, 3);
    if (!("stalled" in decision)) throw new Error("not stalled");
    expect(decision.stalled.patch).toMatchObject({ status: "NEEDS_REVIEW", reason_code: "STALLED" });
    expect(decision.stalled.patch.reason).toMatch(/no progress through 3 sweeps \(RUNNING since .*, 1 min\)/);
    expect(decision.stalled.onlyFrom).toEqual(["RUNNING"]);
    expect(shape(decision.stalled.effects)).toEqual(REVIEW);
  });
});

describe("overdueDecision", () => {
  it.each(["RECEIVED", "RUNNING"] as const)("sends a claim still %s to a person, the claim first", (status) => {
    const decision = overdueDecision(claimRecord(ACCEPTABLE, { status }), { waitedMs: 90_500, detail: "d" }, NOW);
    expect(decision.patch).toMatchObject({ status: "NEEDS_REVIEW", reason_code: "CLAIM_TIMED_OUT" });
    expect(decision.patch.reason).toMatch(new RegExp(`^No decision within 91 s \\(the claim was ${status}\\)`));
    expect(decision.onlyFrom).toEqual(["RECEIVED", "RUNNING"]);
    expect(shape(decision.effects)).toEqual(REVIEW);
    const audit = decision.effects[0];
    expect(audit?.kind === "audit" && audit.event.details).toMatchObject({
      waited_ms: 90_500,
      last_status: status,
      detail: "d",
    });
  });
});
