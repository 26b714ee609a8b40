// Timers and the sweep, decided without ports: what nudges a claim, when unchanged nudges make it STALLED
// (the claim first, conditionally, then its review), and what ends a claim that ran out of time; each process (a
// timer message, a swept claim, an overdue claim) walked from its first request to its outcome.
import { describe, expect, it } from "vitest";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import type { Effect } from "../effects.ts";
import type { StoredSession } from "../ports.ts";
import { ACCEPTABLE, claimRecord, config, NOW, order, shape, walkDecider } from "./decide.test-kit.ts";
import type { Observation, Request } from "./requests.ts";
import {
  decideOverdue,
  decideSweptClaim,
  decideTimer,
  nudgeEffects,
  overdueDecision,
  startOverdue,
  startSweptClaim,
  startTimer,
  sweepDecision,
  tickEffects,
} from "./timers.ts";

/** A claim on an order with a customer: the contract's customer limits bind it. */
const CUSTOMER = { order_id: "ord_021", amount_eur: 100, category: "electronics", reason: "Broken" };

const REVIEW = [
  "audit CLAIM_NEEDS_REVIEW",
  "audit REVIEW_REQUESTED",
  "review_open",
  "publish ClaimNeedsReview,ReviewRequested",
];

describe("nudgeEffects", () => {
  it.each([
    ["a RECEIVED claim is started as intake starts it", "RECEIVED", undefined, "restarted", ["crew_event claim.start"]],
    ["a RUNNING claim's crew is told the time", "RUNNING", true, "ticked", ["crew_event crew.tick"]],
    // A structured claim is stored RUNNING by the intake that starts it: one whose crew has no session lost its start.
    ["a RUNNING claim whose crew never started is started", "RUNNING", false, "restarted", ["crew_event claim.start"]],
    [
      "a RUNNING claim whose session was not read gets its start and a tick (one of them is ignored)",
      "RUNNING",
      undefined,
      "ticked",
      ["crew_event claim.start", "crew_event crew.tick"],
    ],
  ] as const)("%s", (_name, status, hasSession, nudge, effects) => {
    const decided = nudgeEffects(claimRecord(ACCEPTABLE, { status }), NOW, hasSession);
    expect(decided.nudge).toBe(nudge);
    expect(shape(decided.effects)).toEqual(effects);
  });

  it("ticks at the instant given", () => {
    expect(tickEffects("clm_1", NOW)).toEqual([
      { kind: "crew_event", claimId: "clm_1", message: { type: "crew.tick", crewId: "clm_1", nowMs: NOW } },
    ]);
  });
});

describe("nudgeEffects on free text", () => {
  it("ticks a RUNNING free-text claim, session read or not: its extraction's stored outbox is what starts it", () => {
    const running = claimRecord(ACCEPTABLE, { status: "RUNNING", input: { claim_text: "Order ord_001 …" } });
    for (const hasSession of [undefined, false, true])
      expect(shape(nudgeEffects(running, NOW, hasSession).effects)).toEqual(["crew_event crew.tick"]);
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

/** What the stores answer a timer, a swept claim or an overdue claim. */
interface Stores {
  claim?: ClaimRecord;
  session?: StoredSession;
  hasTime?: boolean;
  changed?: boolean;
  /** The order's ledger holds the claim's refund. */
  refunded?: boolean;
}
const answer =
  (stores: Stores) =>
  (request: Request): Observation => {
    switch (request.kind) {
      case "now":
        return { kind: "now", now: NOW };
      case "claim":
        return { kind: "claim", claim: stores.claim };
      case "session":
        return { kind: "session", session: stores.session };
      case "has_time":
        return { kind: "has_time", hasTime: stores.hasTime ?? true };
      case "claim_update":
        return { kind: "claim_update", changed: stores.changed ?? true, record: stores.claim };
      case "order":
        return { kind: "order", order: order(request.orderId) };
      case "ledger":
        return {
          kind: "ledger",
          entry: stores.refunded ? { order_id: request.orderId, refunded_cents: 1, claims: { clm_1: 1 } } : undefined,
        };
      case "release_customer":
        return { kind: "release_customer" };
      default:
        throw new Error(`asked ${request.kind}`);
    }
  };

describe("a timer message", () => {
  const timer = (dueMs: number) => ({ claim_id: "clm_1", due_ms: dueMs });
  const walk = (dueMs: number, stores: Stores) =>
    walkDecider(startTimer(timer(dueMs)), (s, o) => decideTimer(s, o, {}), answer(stores));
  const decidedClaim = claimRecord(ACCEPTABLE, { status: "DECIDED" });
  const session = (outbox: Effect[]): StoredSession => ({ claimId: "clm_1", version: 3, snapshot: {}, outbox });

  it.each<[string, number, Stores, string[], string]>([
    ["re-arms a timer not yet due", NOW + 60_000, {}, ["? now", "timer"], "REARMED"],
    [
      "ticks an open claim's crew",
      NOW,
      { claim: claimRecord(ACCEPTABLE) },
      ["? now", "? claim", "crew_event crew.tick"],
      "TICKED",
    ],
    [
      "drops the timer of a final claim whose outbox is performed",
      NOW,
      { claim: decidedClaim, session: session([]) },
      ["? now", "? claim", "? session"],
      "SETTLED",
    ],
    [
      "ticks a final claim whose outbox nothing proves performed",
      NOW,
      { claim: decidedClaim, session: session([{ kind: "timer", claimId: "clm_1", dueMs: NOW }]) },
      ["? now", "? claim", "? session", "crew_event crew.tick"],
      "TICKED",
    ],
  ])("%s", (_name, dueMs, stores, trace, outcome) => {
    expect(walk(dueMs, stores)).toEqual({ trace, outcome });
  });
});

describe("a swept claim", () => {
  const cutoff = new Date(NOW - 5 * 60_000).toISOString();
  const stale = new Date(NOW - 10 * 60_000).toISOString();
  const policy = { agent: config.agent, settings: { llmOutageHoldMs: 3_600_000 }, maxTicks: 3 };
  const walk = (claim: ClaimRecord, stores: Stores = {}) =>
    walkDecider(
      startSweptClaim(claim, NOW, cutoff, policy),
      (s, o) => decideSweptClaim(s, o, policy),
      answer({ claim, ...stores }),
    );
  const running = claimRecord(CUSTOMER, { updated_at: stale });
  const seen = `RUNNING|${stale}|2`;

  it.each<[string, ClaimRecord, Stores, string[], string]>([
    ["leaves a claim updated since the cutoff", claimRecord(ACCEPTABLE), {}, [], "recent"],
    [
      "leaves a claim waiting for the model",
      { ...running, llm_hold: { since: new Date(NOW - 60_000).toISOString(), key: "k" } },
      {},
      [],
      "held",
    ],
    ["stops when the run has no time left", running, { hasTime: false }, ["? has_time"], "out_of_time"],
    [
      "counts a nudge on the claim, then ticks its crew",
      running,
      { session: { claimId: "clm_1", version: 2, snapshot: {}, outbox: [] } },
      ["? has_time", "? session", "? claim_update", "crew_event crew.tick"],
      "ticked",
    ],
    [
      "ends a claim nudges no longer move STALLED: the claim first, its review, the customer's reservation released",
      { ...running, sweep: { nudges: 3, seen } },
      { session: { claimId: "clm_1", version: 2, snapshot: {}, outbox: [] } },
      [
        "? has_time",
        "? session",
        "? claim_update",
        "audit CLAIM_NEEDS_REVIEW + audit REVIEW_REQUESTED + review_open + publish ClaimNeedsReview,ReviewRequested",
        "? order",
        "? ledger",
        "? release_customer",
      ],
      "stalled",
    ],
    [
      "keeps the reservation of a claim whose refund the order's ledger holds",
      { ...running, sweep: { nudges: 3, seen } },
      { session: { claimId: "clm_1", version: 2, snapshot: {}, outbox: [] }, refunded: true },
      [
        "? has_time",
        "? session",
        "? claim_update",
        "audit CLAIM_NEEDS_REVIEW + audit REVIEW_REQUESTED + review_open + publish ClaimNeedsReview,ReviewRequested",
        "? order",
        "? ledger",
      ],
      "stalled",
    ],
    [
      "gives a claim that moved on since it was read no review",
      { ...running, sweep: { nudges: 3, seen } },
      { session: { claimId: "clm_1", version: 2, snapshot: {}, outbox: [] }, changed: false },
      ["? has_time", "? session", "? claim_update"],
      "moved_on",
    ],
  ])("%s", (_name, claim, stores, trace, outcome) => {
    expect(walk(claim, stores)).toEqual({ trace, outcome });
  });
});

describe("an overdue claim", () => {
  const walk = (stores: Stores) =>
    walkDecider(
      startOverdue("clm_1", { waitedMs: 600_000 }),
      (s, o) => decideOverdue(s, o, { agent: config.agent }),
      answer(stores),
    );

  it("goes to a person, the claim first, then its review, then the customer's reservation released", () => {
    const walked = walk({ claim: claimRecord(CUSTOMER) });
    expect(walked.trace).toEqual([
      "? claim",
      "? now",
      "? claim_update",
      "audit CLAIM_NEEDS_REVIEW + audit REVIEW_REQUESTED + review_open + publish ClaimNeedsReview,ReviewRequested",
      "? order",
      "? ledger",
      "? release_customer",
    ]);
    expect(walked.outcome).toMatchObject({ claim_id: "clm_1" });
  });

  it("keeps the outcome of a claim that became final meanwhile", () => {
    const final = claimRecord(CUSTOMER, { status: "DECIDED" });
    expect(walk({ claim: final })).toEqual({ trace: ["? claim"], outcome: final });
    expect(walk({ claim: claimRecord(CUSTOMER), changed: false }).trace).toEqual([
      "? claim",
      "? now",
      "? claim_update",
    ]);
  });
});
