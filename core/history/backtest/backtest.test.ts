// The policy backtest on the bundled run (recorded as `claims batch --in-process` records it): the live
// policy flips nothing; a tighter or looser limit flips what it should, and a later claim on the same order
// sees the candidate's own ledger; a person's decision stays; what cannot be re-decided is listed with why.
import { beforeAll, describe, expect, it } from "vitest";
import type { AuditEvent } from "../../integrity/audit.ts";
import { backtest, readHistories } from "./index.ts";
import type { BacktestReport, Outcome } from "./index.ts";
import {
  BUNDLED_CONFIG_TEXT,
  configWithCustomerLimits,
  configWithLimit,
  policyOf,
  recordBundledRun,
} from "./backtest.test-kit.ts";
import type { BundledRun } from "./backtest.test-kit.ts";

let run: BundledRun;
beforeAll(async () => {
  run = await recordBundledRun();
}, 60_000);

const report = (limit: number, events: readonly AuditEvent[] = run.events, extra = {}) =>
  backtest({ histories: [{ id: run.simulationId, events }], policy: policyOf(configWithLimit(limit)), ...extra });

const o = (verdict: Outcome["verdict"], reason_code: string): Outcome => ({ verdict, reason_code });
const ACCEPTED = o("ACCEPT", "VALIDATION_PASSED");
const ABOVE_LIMIT = o("ESCALATE", "AMOUNT_ABOVE_LIMIT");
const PENDING = o("ESCALATE", "REVIEW_PENDING_ON_ORDER");

/** Scenario ids of the bundled run (R+ is the claim R's reviewer resubmitted) → claim ids. */
const idOf = (scenario: string) => (scenario === "R+" ? run.resubmittedOf("R") : run.claimOf(scenario));

type Case = {
  name: string;
  limit: number;
  flips: [scenario: string, from: Outcome, to: Outcome][];
  after: BacktestReport["totals"]["after"];
  /** Scenarios a person decided, with the candidate's verdict. */
  people: [scenario: string, decision: string, candidate: Outcome][];
  /** Triaged scenarios the candidate's triage sends to the crew: not evaluable. */
  toCrew?: string[];
};

/**
 * The bundled run's decided claims: its 51 claims (47 scenarios, R's resubmitted claim, 3 after the reviews) but R,
 * which never reached a verdict (NEEDS_REVIEW).
 */
const DECIDED = 52;

/** The other currencies' automatic refunds, each apart (US's 549 and LT1's 20 USD, JP1's 12800 JPY): no EUR bound moves them. */
const OTHER_CURRENCIES = [
  { value: "12800", currency: "JPY" },
  { value: "569.00", currency: "USD" },
];

const BEFORE = {
  // EUR only: US's and LT1's USD and JP1's 12800 JPY are never added to it. The returns: RT1's 280 (paid on its delivery)
  // and RT2's 25 (kept); RT3's 150 and RT4's 420 were released (never received; a person denied it), never paid.
  // SC1's 80 (store credit) and EX1's 45 (reserved for an exchange) count as the ledger counts them.
  auto_refunded_eur: 2778.98,
  auto_refunded: OTHER_CURRENCIES,
  reviews: 18,
  by_reason: {
    AGENT_REQUESTED_ESCALATION: 1,
    AMOUNT_ABOVE_LIMIT: 7, // B, F, K, S2, DB, FE, FS1
    CUSTOMER_LIMIT_EXCEEDED: 2,
    CUSTOMER_UNVERIFIED: 1,
    PRIOR_DECISION_ON_ORDER: 3, // DB2, B2, PB2 (PB's failed refund CLOSEd as paid out of band binds ord_027)
    PURCHASE_DATE_IN_FUTURE: 1,
    RESUBMITTED_CLAIM: 1,
    REVIEW_PENDING_ON_ORDER: 2, // S3, FS2
  },
};

const CASES: Case[] = [
  {
    name: "the live policy itself flips nothing and moves no total",
    limit: 500,
    flips: [],
    after: BEFORE,
    people: [
      ["B", "APPROVE", ABOVE_LIMIT],
      ["F", "APPROVE", ABOVE_LIMIT], // a junior reviewer's first approval, completed by demo-reviewer (reviewer limits)
      ["S2", "APPROVE", ABOVE_LIMIT],
      ["S3", "APPROVE", PENDING],
      ["T3", "DENY", o("ESCALATE", "CUSTOMER_UNVERIFIED")],
      ["DB", "DENY", ABOVE_LIMIT],
      ["FE", "APPROVE", ABOVE_LIMIT], // approved by two people (four eyes): the second is the one recorded
      ["FS1", "APPROVE", ABOVE_LIMIT],
      ["FS2", "APPROVE", PENDING], // approved by two people (four eyes per order): the second is the one recorded
      ["RT4", "DENY", ACCEPTED], // denied after its return failed inspection (docs/returns.md)
    ],
  },
  {
    // G (after A on ord_001) was triaged: nothing was left on ord_001. With A sent to a person, the candidate's triage
    // lets G through to the crew, whose proposal a backtest cannot make: G is listed as not evaluable.
    name: "a 100 EUR limit sends every automatic refund above 100 to a person, and G (after A on ord_001) is no longer triaged",
    limit: 100,
    toCrew: ["G"],
    flips: [
      ["A", ACCEPTED, ABOVE_LIMIT],
      ["E", ACCEPTED, ABOVE_LIMIT],
      ["J", ACCEPTED, ABOVE_LIMIT],
      ["S1", ACCEPTED, ABOVE_LIMIT],
      ["PB", ACCEPTED, ABOVE_LIMIT],
      ["RT1", ACCEPTED, ABOVE_LIMIT],
      ["RT3", ACCEPTED, ABOVE_LIMIT],
      // The candidate never refunded PB, so no refund of it failed or was CLOSEd: PB's own review holds ord_027.
      ["PB2", o("ESCALATE", "PRIOR_DECISION_ON_ORDER"), PENDING],
      // R+ (the corrected claim of R) is no flip: a resubmitted claim goes to a person whatever the limit.
    ],
    after: {
      auto_refunded_eur: 599, // O 60 + P1 60 + T2 89 + CL1, CL2 60 each + ML1 40 + ML4 80 + RT2 25 + SC1 80 + EX1 45
      auto_refunded: OTHER_CURRENCIES,
      reviews: 26,
      by_reason: {
        AGENT_REQUESTED_ESCALATION: 1,
        AMOUNT_ABOVE_LIMIT: 14, // + A, E, J, S1, PB, RT1, RT3, RT4 (which a person denied); S2 now waits for S1's review (REVIEW_PENDING_ON_ORDER)
        CUSTOMER_LIMIT_EXCEEDED: 2,
        CUSTOMER_UNVERIFIED: 1,
        PRIOR_DECISION_ON_ORDER: 2,
        PURCHASE_DATE_IN_FUTURE: 1,
        RESUBMITTED_CLAIM: 1,
        REVIEW_PENDING_ON_ORDER: 4, // S2, S3, FS2, PB2
      },
    },
    people: [
      ["B", "APPROVE", ABOVE_LIMIT],
      ["F", "APPROVE", ABOVE_LIMIT], // a junior reviewer's first approval, completed by demo-reviewer (reviewer limits)
      ["S2", "APPROVE", PENDING], // S1 now waits for a person on ord_016
      ["S3", "APPROVE", PENDING],
      ["T3", "DENY", o("ESCALATE", "CUSTOMER_UNVERIFIED")],
      ["DB", "DENY", ABOVE_LIMIT],
      ["FE", "APPROVE", ABOVE_LIMIT], // approved by two people (four eyes): the second is the one recorded
      ["FS1", "APPROVE", ABOVE_LIMIT],
      ["FS2", "APPROVE", PENDING],
      ["RT4", "DENY", ABOVE_LIMIT],
    ],
  },
  {
    name: "a 1000 EUR limit refunds K automatically and would not have sent S2 to a person, whose approval stays",
    limit: 1000,
    flips: [["K", ABOVE_LIMIT, ACCEPTED]],
    after: {
      auto_refunded_eur: 3278.99, // + K's 500.01 (S2 was refunded by the person's approval, as recorded)
      auto_refunded: OTHER_CURRENCIES,
      reviews: 15,
      by_reason: {
        AGENT_REQUESTED_ESCALATION: 1,
        AMOUNT_ABOVE_LIMIT: 4, // B, F, DB, FE: K, S2 and FS1 fit 1000 EUR
        CUSTOMER_LIMIT_EXCEEDED: 2,
        CUSTOMER_UNVERIFIED: 1,
        PRIOR_DECISION_ON_ORDER: 3,
        PURCHASE_DATE_IN_FUTURE: 1,
        RESUBMITTED_CLAIM: 1,
        REVIEW_PENDING_ON_ORDER: 2, // S3, FS2 (FS1's review, as recorded, still held ord_026)
      },
    },
    people: [
      ["B", "APPROVE", ABOVE_LIMIT],
      ["F", "APPROVE", ABOVE_LIMIT], // a junior reviewer's first approval, completed by demo-reviewer (reviewer limits)
      ["S2", "APPROVE", ACCEPTED],
      ["S3", "APPROVE", PENDING], // S2's review still held ord_016 until the person decided it
      ["T3", "DENY", o("ESCALATE", "CUSTOMER_UNVERIFIED")],
      ["DB", "DENY", ABOVE_LIMIT],
      ["FE", "APPROVE", ABOVE_LIMIT], // approved by two people (four eyes): the second is the one recorded
      ["FS1", "APPROVE", ACCEPTED], // fits 1000 EUR; the person's approval stays as recorded
      ["FS2", "APPROVE", PENDING], // FS1's review, as recorded, still held ord_026
      ["RT4", "DENY", ACCEPTED],
    ],
  },
];

describe("backtest of the bundled run", () => {
  it.each(CASES)("$name", ({ limit, flips, after, people, toCrew = [] }) => {
    const r = report(limit);
    expect(r.evaluated).toBe(DECIDED - toCrew.length);
    expect(r.not_evaluable).toEqual(
      toCrew.map((s) => ({
        claim_id: idOf(s),
        reason: expect.stringContaining("the candidate's triage sends it to the crew"),
      })),
    );
    expect(r.flips).toEqual(flips.map(([s, from, to]) => ({ claim_id: idOf(s), from, to })));
    expect(r.totals).toEqual({ before: BEFORE, after });
    expect(r.human_decisions.map((p) => [p.claim_id, p.decision, p.candidate, p.candidate_sends_to_person])).toEqual(
      people.map(([s, decision, candidate]) => [idOf(s), decision, candidate, candidate.verdict === "ESCALATE"]),
    );
    expect(new Set(r.human_decisions.map((p) => p.reviewer))).toEqual(new Set(["demo-reviewer", "second-reviewer"]));
    // A person's decision is never a flip.
    const flipped = new Set(r.flips.map((f) => f.claim_id));
    expect(people.filter(([s]) => flipped.has(idOf(s)))).toEqual([]);
  });

  it("holds a later claim on an order for a person once a person denied a claim on it", () => {
    // T2 (89 EUR on ord_017, refunded automatically) moved after T3's review was denied: the DENY binds the order.
    const t2 = run.claimOf("T2");
    // A history where T2 came later: the claims decided after it in the run no longer saw it in the customer's window.
    const unseen = (e: AuditEvent): AuditEvent => {
      const inputs = e.details.kernel_inputs as
        | { customerWindow?: { reservations?: { claim_id: string }[] } }
        | undefined;
      const window = inputs?.customerWindow;
      if (!window?.reservations?.some((r) => r.claim_id === t2)) return e;
      const reservations = window.reservations.filter((r) => r.claim_id !== t2);
      return {
        ...e,
        details: { ...e.details, kernel_inputs: { ...inputs, customerWindow: { ...window, reservations } } },
      };
    };
    const [moved, rest] = [
      run.events.filter((e) => e.details.claim_id === t2),
      run.events.filter((e) => e.details.claim_id !== t2).map(unseen),
    ];
    const r = report(500, [...rest, ...moved]);
    expect(r.flips).toEqual([{ claim_id: t2, from: ACCEPTED, to: o("ESCALATE", "PRIOR_DECISION_ON_ORDER") }]);
    expect(r.evaluated).toBe(DECIDED);
    // Before the denial, T3's pending review holds the order: T2 moved right after T3's verdict waits for a person.
    const t3Verdict = rest.findIndex(
      (e) => e.details.claim_id === run.claimOf("T3") && e.event_type === "KERNEL_VERDICT",
    );
    const early = report(500, [...rest.slice(0, t3Verdict + 1), ...moved, ...rest.slice(t3Verdict + 1)]);
    expect(early.flips).toEqual([{ claim_id: t2, from: ACCEPTED, to: PENDING }]);
  });

  it("binds an order once a person CLOSEd a failed refund on it, paid out of band or not, as live", () => {
    // PB's refund (ord_027) was declined and CLOSEd as paid out of band: PB2 on ord_027 went to a person.
    const [pb, pb2] = [run.claimOf("PB"), run.claimOf("PB2")];
    const isClose = (e: AuditEvent) => e.event_type === "REVIEW_DECIDED" && e.details.claim_id === pb;
    expect(run.events.filter(isClose).map((e) => [e.dfid, e.details.decision, e.details.paid_out_of_band])).toEqual([
      [`dfid_pay_${pb}`, "CLOSE", true],
    ]);
    // Not paid out of band: the reservation is released, and the order is bound all the same.
    const unpaid = run.events.map((e) =>
      isClose(e) ? { ...e, details: { ...e.details, paid_out_of_band: false } } : e,
    );
    expect(report(500, unpaid)).toMatchObject({ evaluated: DECIDED, flips: [] });
    // Without the CLOSE nothing binds ord_027: PB2 would have been refunded automatically.
    expect(
      report(
        500,
        run.events.filter((e) => !isClose(e)),
      ).flips,
    ).toEqual([{ claim_id: pb2, from: o("ESCALATE", "PRIOR_DECISION_ON_ORDER"), to: ACCEPTED }]);
  });

  it("re-decides claims of one instant in the order their customer's window took them, whatever order their audits landed in", () => {
    // The customer-limit race CL1–CL4 (one instant): two were refunded, two escalated CUSTOMER_LIMIT_EXCEEDED. On the
    // local stack the escalated claims' audits can land first; the live policy must still flip nothing.
    const race = ["CL1", "CL2", "CL3", "CL4"].map((s) => run.claimOf(s));
    const isRace = (e: AuditEvent) => race.includes(e.details.claim_id as string);
    const raceEvents = run.events.filter(isRace);
    const escalatedFirst = [...raceEvents].sort(
      (a, b) =>
        Number(refundedIn(b, raceEvents) === undefined) - Number(refundedIn(a, raceEvents) === undefined) ||
        raceEvents.indexOf(a) - raceEvents.indexOf(b),
    );
    const at = run.events.findIndex(isRace);
    const reordered = [
      ...run.events.filter((e) => !isRace(e)).slice(0, at),
      ...escalatedFirst,
      ...run.events.filter((e) => !isRace(e)).slice(at),
    ];
    expect(reordered).toHaveLength(run.events.length);
    const r = report(500, reordered);
    expect(r.flips).toEqual([]);
    expect(r.totals).toEqual({ before: BEFORE, after: BEFORE });
  });

  it("prints exactly the named JSON shape (extras beside it), the drill-down holding each side's checks", () => {
    const r = report(100);
    expect(Object.keys(r.totals.before).sort()).toEqual(["auto_refunded", "auto_refunded_eur", "by_reason", "reviews"]);
    for (const f of r.flips) expect(Object.keys(f).sort()).toEqual(["claim_id", "from", "to"]);
    const a = r.flip_details.find((f) => f.claim_id === run.claimOf("A"))!;
    expect(a.from.checks.at(-1)).toEqual({ layer: 11, name: "amount_limit", passed: true });
    expect(a.to.checks.at(-1)).toEqual({
      layer: 11,
      name: "amount_limit",
      passed: false,
      reason_code: "AMOUNT_ABOVE_LIMIT",
    });
    expect(a.to.reason).toBe(
      "Amount 299.99 EUR exceeds max_refund_without_escalation (100.0 EUR). Human approval required.",
    );
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
  });

  it("lists a claim whose recorded inputs are missing or unparseable, with the reason, and re-decides the rest", () => {
    const [a, c, h] = [run.claimOf("A"), run.claimOf("C"), run.claimOf("H")];
    const garbled = (e: AuditEvent, kind: string, key: string) =>
      e.details.claim_id !== (kind === "CLAIM_TRIAGED" ? c : h) || e.event_type !== kind
        ? e
        : { ...e, details: { ...e.details, [key]: { ...(e.details[key] as object), claim: "garbled" } } };
    const events = run.events
      .filter((e) => !(e.details.claim_id === a && e.event_type === "PROPOSAL_SUBMITTED"))
      .map((e) => garbled(garbled(e, "PROPOSAL_SUBMITTED", "kernel_inputs"), "CLAIM_TRIAGED", "triage_inputs"));
    const r = report(500, events);
    expect(r.not_evaluable).toEqual(
      expect.arrayContaining([
        { claim_id: a, reason: "the kernel's recorded inputs (PROPOSAL_SUBMITTED) are missing" },
        { claim_id: c, reason: expect.stringMatching(/^the triage's recorded inputs do not parse \(claim: /) },
        { claim_id: h, reason: expect.stringMatching(/^the kernel's recorded inputs do not parse \(claim: /) },
      ]),
    );
    expect(r.not_evaluable).toHaveLength(3);
    expect(r.evaluated).toBe(DECIDED - 3);
    // A's recorded refund still holds ord_001 on the simulated ledger: G is still rejected, nothing flips.
    expect(r.flips).toEqual([]);
  });

  it("reads a recorded verdict's reason, layer and checks for the flips that show them: a flip without them is not evaluable", () => {
    // Garbled checks on A (an ACCEPT that flips under 100 EUR) and on C (a REJECT that flips under no policy here).
    const [a, c] = [run.claimOf("A"), run.claimOf("C")];
    const garbled = run.events.map((e) =>
      (e.details.claim_id === a || e.details.claim_id === c) && e.event_type === "KERNEL_VERDICT"
        ? { ...e, details: { ...e.details, checks: [{ layer: 99, name: "" }] } }
        : e,
    );
    const flipped = report(100, garbled);
    expect(flipped.not_evaluable).toEqual([
      { claim_id: a, reason: expect.stringMatching(/^the recorded verdict does not parse \(checks\.0\.layer: /) },
    ]);
    expect(flipped.evaluated).toBe(DECIDED - 1);
    // A's recorded refund still holds ord_001 as recorded: G is rejected as recorded, so it no longer flips.
    expect(flipped.flips.map((f) => f.claim_id)).not.toContain(run.claimOf("G"));
    expect(flipped.flips).toHaveLength(7);
    // Under the live policy nothing flips: the re-decision does not depend on what the report would show.
    expect(report(500, garbled)).toMatchObject({ evaluated: DECIDED, not_evaluable: [], flips: [] });
  });

  it("leaves out a policy whose agent did not make the proposals, naming both agents", () => {
    const other = configWithLimit(500).replace(/claims_agent_v1/g, "other_agent");
    const r = backtest({ histories: [{ id: "run", events: run.events }], policy: policyOf(other) });
    expect(r.evaluated).toBe(0);
    expect(r.not_evaluable).toHaveLength(DECIDED);
    expect(r.not_evaluable[0]!.reason).toContain(
      "proposed by agent claims_agent_v1, and the policy's agent is other_agent",
    );
  });

  it("re-decides only the decisions inside --since/--until", () => {
    const decidedMs = Date.parse(String(run.events.find((e) => e.event_type === "KERNEL_VERDICT")!.details.decided_at));
    expect(report(100, run.events, { untilMs: decidedMs - 1 })).toMatchObject({ evaluated: 0, flips: [] });
    expect(report(100, run.events, { sinceMs: decidedMs + 1 })).toMatchObject({ evaluated: 0, flips: [] });
    expect(report(100, run.events, { sinceMs: decidedMs, untilMs: decidedMs }).flips).toHaveLength(8);
  });

  it("decides the same from a history read once, for one policy after another", () => {
    const read = readHistories([{ id: run.simulationId, events: run.events }]);
    for (const limit of [100, 500, 1000]) {
      const policy = policyOf(configWithLimit(limit));
      expect(backtest({ histories: read, policy })).toEqual(report(limit));
    }
  });

  it("simulates each history on a ledger of its own", () => {
    const policy = policyOf(configWithLimit(100));
    const one = backtest({ histories: [{ id: "a", events: run.events }], policy });
    const two = backtest({
      histories: [
        { id: "a", events: run.events },
        { id: "b", events: run.events },
      ],
      policy,
    });
    expect(two.flips).toEqual([...one.flips, ...one.flips]);
    expect(two.histories).toEqual([
      { id: "a", evaluated: DECIDED - 1, flips: 8 }, // G goes to the crew under 100 EUR: not evaluable
      { id: "b", evaluated: DECIDED - 1, flips: 8 },
    ]);
  });
});

describe("backtest of a customer limit, on windows simulated from the candidate's own refunds", () => {
  // CL1–CL4: cus_0100 claims 60 EUR on each of four orders; the live limit (2 refunds, 500 EUR in 30 days) refunded
  // two automatically and sent two to a person. T2 (cus_0042, 89 EUR) is the one other automatic refund bound to a
  // customer; every other order has no customer and is not bound.
  const limited = (max_automatic_refunds: number, max_automatic_eur: number, events = run.events) =>
    backtest({
      histories: [{ id: run.simulationId, events }],
      policy: policyOf(configWithCustomerLimits({ window_days: 30, max_automatic_refunds, max_automatic_eur })),
    });
  const LIMITED = o("ESCALATE", "CUSTOMER_LIMIT_EXCEEDED");
  const flipsOf = (r: BacktestReport) => r.flips.map((f) => [f.claim_id, f.from, f.to]);

  it("a tighter count sends the customer's later claims to a person, counting the candidate's own refunds", () => {
    const r = limited(1, 500);
    expect(flipsOf(r)).toEqual([[run.claimOf("CL2"), ACCEPTED, LIMITED]]);
    expect(r.flip_details[0]!.to.reason).toBe(
      "Customer cus_0100 already has 1 automatic refund (60.0 EUR) in the last 30 days; max_automatic_refunds is 1. Human approval required.",
    );
    expect(r.totals.after.auto_refunded_eur).toBe(BEFORE.auto_refunded_eur - 60);
    expect(r.totals.after.by_reason.CUSTOMER_LIMIT_EXCEEDED).toBe(3);
  });

  it("a tighter amount passes exactly at the limit and sends one cent more to a person", () => {
    expect(limited(10, 120).flips).toEqual([]);
    const over = limited(10, 119.99);
    expect(flipsOf(over)).toEqual([[run.claimOf("CL2"), ACCEPTED, LIMITED]]);
    expect(over.flip_details[0]!.to.reason).toContain(
      "Amount 60.0 EUR plus 60.0 EUR refunded automatically to customer cus_0100 in the last 30 days exceeds max_automatic_eur (119.99 EUR)",
    );
  });

  it("a looser count refunds recorded escalations automatically while the simulated window allows", () => {
    // Three refunds: CL3 now passes, and its own refund fills the window, so CL4 still waits for a person.
    expect(flipsOf(limited(3, 500))).toEqual([[run.claimOf("CL3"), LIMITED, ACCEPTED]]);
    expect(flipsOf(limited(4, 500))).toEqual([
      [run.claimOf("CL3"), LIMITED, ACCEPTED],
      [run.claimOf("CL4"), LIMITED, ACCEPTED],
    ]);
    // 180 EUR: the count allows all four, the amount only a third 60 EUR refund.
    expect(flipsOf(limited(4, 180))).toEqual([[run.claimOf("CL3"), LIMITED, ACCEPTED]]);
  });

  it("does not depend on the windows the live kernel recorded", () => {
    // As if the live kernel had recorded no window at all (a live policy without customer limits).
    const unrecorded = run.events.map((e) =>
      e.event_type === "PROPOSAL_SUBMITTED"
        ? {
            ...e,
            details: { ...e.details, kernel_inputs: { ...(e.details.kernel_inputs as object), customerWindow: null } },
          }
        : e,
    );
    expect(limited(2, 500, unrecorded).flips).toEqual([]);
    expect(flipsOf(limited(1, 500, unrecorded))).toEqual([[run.claimOf("CL2"), ACCEPTED, LIMITED]]);
    expect(flipsOf(limited(3, 500, unrecorded))).toEqual([[run.claimOf("CL3"), LIMITED, ACCEPTED]]);
  });

  it("without customer limits, nothing is bound by one", () => {
    const r = backtest({
      histories: [{ id: run.simulationId, events: run.events }],
      policy: policyOf(configWithCustomerLimits(undefined)),
    });
    expect(flipsOf(r)).toEqual([
      [run.claimOf("CL3"), LIMITED, ACCEPTED],
      [run.claimOf("CL4"), LIMITED, ACCEPTED],
    ]);
  });
});

/** The claim of `event` when its verdict was a refund (ACCEPT), else undefined. */
function refundedIn(event: AuditEvent, events: readonly AuditEvent[]): string | undefined {
  const claimId = event.details.claim_id as string;
  const accepted = events.some(
    (e) => e.event_type === "KERNEL_VERDICT" && e.details.claim_id === claimId && e.details.verdict === "ACCEPT",
  );
  return accepted ? claimId : undefined;
}

describe("backtest of the money paid before the item was back (issue 33)", () => {
  const KEEP_LINE = "sports: { return_required: true, keep_item_below: { EUR: 30 } }";
  const candidate = (text: string) =>
    backtest({ histories: [{ id: run.simulationId, events: run.events }], policy: policyOf(text) }).paid_before_return;
  const withReturns = (edit: (text: string) => string) => {
    const text = edit(BUNDLED_CONFIG_TEXT);
    if (text === BUNDLED_CONFIG_TEXT) throw new Error("the bundled returns policy moved");
    return text;
  };
  // Recorded: every automatic refund but RT1's 280 EUR, which waited for its delivery (RT3's and RT4's were released,
  // never paid); RT2's kept 25 EUR yoga mat was paid at once. Each currency apart: US's 549 and LT1's 20 USD, JP1's 12800 JPY.
  const BEFORE_PAID = [
    { value: "2498.98", currency: "EUR" },
    { value: "12800", currency: "JPY" },
    { value: "569.00", currency: "USD" },
  ];

  it("under the live policy, pays at once exactly what was paid at once", () => {
    const r = candidate(BUNDLED_CONFIG_TEXT);
    // 13 EUR refunds (A, E, J, S1, PB, O, P1, T2, CL1, CL2, ML1, ML4, RT2), SC1's 80 EUR given as store credit and
    // EX1's 45 EUR kettle exchanged (value handed over while the customer keeps the item), US's, LT1's and JP1's.
    expect(r.before).toEqual({ claims: 18, paid: BEFORE_PAID });
    expect(r.after).toEqual(r.before);
  });

  it("without a return policy, adds RT1's refund and RT3's, whose tent never came back", () => {
    const r = candidate(withReturns((t) => t.replace(/^ {6}returns:\n(?: {8}.*\n)+/m, "")));
    expect(r.before.paid).toEqual(BEFORE_PAID);
    expect(r.after.paid).toEqual([{ value: "2928.98", currency: "EUR" }, ...BEFORE_PAID.slice(1)]);
    expect(r.after.claims).toBe(r.before.claims + 2);
  });

  it("asking the kept yoga mat back too, takes RT2's 25 EUR off", () => {
    const r = candidate(withReturns((t) => t.replace(KEEP_LINE, "sports: { return_required: true }")));
    expect(r.after.paid).toEqual([{ value: "2473.98", currency: "EUR" }, ...BEFORE_PAID.slice(1)]);
    expect(r.after.claims).toBe(r.before.claims - 1);
  });
});
