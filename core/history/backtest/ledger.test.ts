// The trusting simulated ledger a backtest runs answers exactly as production's validating ledger functions do:
// over random histories of reservations, reviews, people's decisions and customer-window reservations, the same
// answers and the same entries and windows after every step; and whole backtests of the bundled run, reordered,
// its customers reassigned and under random candidate policies, give the same report on either ledger.
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { AuditEvent } from "../../integrity/audit.ts";
import type { CustomerLimitsCents } from "../../kernel/customer-window.ts";
import type { LineReserve, PersonDecision, ReserveMode } from "../../kernel/ledger.ts";
import { DAY_MS } from "../../integrity/time.ts";
import { backtest } from "./index.ts";
import { trustingLedger, validatingLedger, type SimulatedLedger } from "./ledger.ts";
import { configWithCustomerLimits, configWithLimit, policyOf, recordBundledRun } from "./backtest.test-kit.ts";
import type { BundledRun } from "./backtest.test-kit.ts";

const ORDERS = ["ord_1", "ord_2"];
const CLAIMS = ["c1", "c2", "c3", "c4", "__proto__"];
const CUSTOMERS = ["cus_1", "cus_2"];
const T0 = Date.parse("2026-06-01T12:00:00Z");

type Op =
  | {
      op: "reserve";
      order: string;
      claim: string;
      cents: number;
      orderCents: number;
      mode: ReserveMode;
      lines?: LineReserve | undefined;
    }
  | { op: "mark"; order: string; claim: string }
  | { op: "clear"; order: string; claim: string; decision?: PersonDecision }
  | {
      op: "window";
      customer: string;
      claim: string;
      order: string;
      cents: number;
      at: string;
      limits: CustomerLimitsCents;
    }
  | { op: "release"; customer: string; claim: string }
  | { op: "release_refund"; order: string; claim: string };

const order = fc.constantFrom(...ORDERS);
const claim = fc.constantFrom(...CLAIMS);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc
    .record({
      op: fc.constant("reserve" as const),
      order,
      claim,
      cents: fc.integer({ min: 1, max: 600 }),
      orderCents: fc.integer({ min: 1, max: 1200 }),
      mode: fc.oneof(
        fc.record({ kind: fc.constant("automatic" as const), limitCents: fc.integer({ min: 1, max: 1000 }) }),
        fc.constant({ kind: "approved" as const }),
      ),
      // An order with lines (l1, l2, shipping): the claim on l1, split over both, or on no known line.
      lines: fc.option(
        fc.record({
          l1: fc.integer({ min: 0, max: 700 }),
          l2: fc.integer({ min: 0, max: 700 }),
          shipping: fc.integer({ min: 0, max: 50 }),
          on: fc.constantFrom("l1", "both", "unknown"),
          split: fc.integer({ min: 0, max: 100 }),
        }),
        { nil: undefined },
      ),
    })
    .map(({ lines, ...op }): Op => {
      if (!lines) return op;
      const paid = { l1: lines.l1, l2: lines.l2 };
      const first = Math.floor((op.cents * lines.split) / 100);
      const claimed: Record<string, number> | undefined =
        lines.on === "unknown"
          ? undefined
          : lines.on === "l1"
            ? { l1: op.cents }
            : first === 0 || first === op.cents
              ? { l2: op.cents }
              : { l1: first, l2: op.cents - first };
      return { ...op, lines: { paid, shipping: lines.shipping, ...(claimed ? { claimed } : {}) } };
    }),
  fc.record({ op: fc.constant("mark" as const), order, claim }),
  fc
    .record({
      op: fc.constant("clear" as const),
      order,
      claim,
      decision: fc.option(
        fc.oneof(
          fc.constant({ decision: "DENY" as const }),
          fc.boolean().map((paid) => ({ decision: "CLOSE" as const, paid_out_of_band: paid })),
          fc
            .tuple(fc.integer({ min: 1, max: 500 }), fc.integer({ min: 1, max: 500 }))
            .map(([a, b]) => ({ decision: "APPROVE" as const, approved_cents: a, proposed_cents: a + b })),
        ),
        { nil: undefined },
      ),
    })
    .map(
      ({ decision, ...rest }): Op => (decision ? { ...rest, decision: { ...decision, claim_id: rest.claim } } : rest),
    ),
  fc.record({
    op: fc.constant("window" as const),
    customer: fc.constantFrom(...CUSTOMERS),
    claim,
    order,
    cents: fc.integer({ min: 1, max: 600 }),
    at: fc.integer({ min: 0, max: 40 * 24 }).map((h) => new Date(T0 + h * 3_600_000).toISOString()),
    limits: fc
      .record({
        days: fc.integer({ min: 1, max: 10 }),
        maxRefunds: fc.integer({ min: 1, max: 4 }),
        maxCents: fc.integer({ min: 1, max: 1500 }),
      })
      .map((l) => ({ ...l, windowMs: l.days * DAY_MS })),
  }),
  fc.record({ op: fc.constant("release" as const), customer: fc.constantFrom(...CUSTOMERS), claim }),
  fc.record({ op: fc.constant("release_refund" as const), order, claim }),
);

function apply(ledger: SimulatedLedger, op: Op): string | undefined {
  switch (op.op) {
    case "reserve":
      return ledger.reserve(op.order, op.claim, op.cents, op.orderCents, op.mode, op.lines);
    case "mark":
      ledger.markReviewPending(op.order, op.claim);
      return undefined;
    case "clear":
      ledger.clearReviewPending(op.order, op.claim, op.decision);
      return undefined;
    case "window":
      return ledger.reserveOnWindow(
        op.customer,
        { claim_id: op.claim, order_id: op.order, cents: op.cents, at: op.at },
        op.limits,
      );
    case "release":
      ledger.releaseFromWindow(op.customer, op.claim);
      return undefined;
    case "release_refund":
      ledger.releaseRefund(op.order, op.claim);
      return undefined;
  }
}

/** What either ledger holds, as plain data (JSON drops nothing here: every value is a string, number or list). */
const state = (ledger: SimulatedLedger) =>
  JSON.parse(
    JSON.stringify({
      orders: ORDERS.map((o) => ledger.get(o) ?? null),
      windows: CUSTOMERS.map((c) => ledger.window(c) ?? null),
    }),
  ) as unknown;

describe("the trusting simulated ledger", () => {
  it("answers, and holds, exactly what production's validating functions do over random histories", () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 60 }), (ops) => {
        const [trusting, validating] = [trustingLedger(), validatingLedger()];
        for (const op of ops) {
          expect(apply(trusting, op)).toBe(apply(validating, op));
          expect(state(trusting)).toEqual(state(validating));
        }
      }),
      { numRuns: 400 },
    );
  });

  it("refuses as the ledger's rules do, with their messages", () => {
    const ledger = trustingLedger();
    expect(ledger.reserve("ord_1", "c1", 300, 500, { kind: "automatic", limitCents: 400 })).toBeUndefined();
    expect(ledger.reserve("ord_1", "c2", 200, 500, { kind: "automatic", limitCents: 400 })).toBe(
      "Automatic refunds on order ord_1 would reach 5.0 EUR, above the 4.0 EUR a refund may reach without a human",
    );
    ledger.markReviewPending("ord_1", "c3");
    expect(ledger.reserve("ord_1", "c2", 50, 500, { kind: "automatic", limitCents: 400 })).toBe(
      "Order ord_1 has a claim awaiting human review (c3)",
    );
    expect(ledger.reserve("ord_1", "c3", 200, 500, { kind: "approved" })).toBeUndefined();
    expect(ledger.get("ord_1")).toEqual({
      order_id: "ord_1",
      refunded_cents: 500,
      claims: { c1: 300, c3: 200 },
      automatic_cents: 300,
      approved: ["c3"],
    });
  });
});

let run: BundledRun;
beforeAll(async () => {
  run = await recordBundledRun();
}, 60_000);

/** The bundled run with its claims in another order and the customers of their orders reassigned. */
function reshuffled(order: number[], customers: (string | undefined)[]): AuditEvent[] {
  const byClaim = new Map<string, AuditEvent[]>();
  for (const e of run.events) {
    const id = String(e.details.claim_id ?? "");
    byClaim.set(id, [...(byClaim.get(id) ?? []), e]);
  }
  const groups = [...byClaim.values()];
  const sorted = groups.map((g, i) => ({ g, k: order[i % order.length]! + i / 1000 })).sort((a, b) => a.k - b.k);
  return sorted.flatMap(({ g }, i) => {
    const customer = customers[i % customers.length];
    return g.map((e) => withCustomer(e, customer));
  });
}

/** The event with the decision's order and claim bound to `customer` (none when undefined). */
function withCustomer(e: AuditEvent, customer: string | undefined): AuditEvent {
  const wrapper =
    e.event_type === "PROPOSAL_SUBMITTED" ? "kernel_inputs" : e.event_type === "CLAIM_TRIAGED" ? "triage_inputs" : "";
  const inputs = wrapper ? (e.details[wrapper] as { order?: object | null; claim?: object }) : undefined;
  if (!inputs?.order || !inputs.claim) return e;
  const bind = (o: object) => {
    const { customer_id: _drop, ...rest } = o as { customer_id?: string };
    return customer ? { ...rest, customer_id: customer } : rest;
  };
  return {
    ...e,
    details: { ...e.details, [wrapper]: { ...inputs, order: bind(inputs.order), claim: bind(inputs.claim) } },
  };
}

describe("a backtest on the trusting ledger", () => {
  it("reports exactly what it reports on the validating ledger, over reordered runs and random policies", () => {
    let limited = 0;
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.constantFrom(undefined, "cus_a", "cus_b"), { minLength: 1, maxLength: 40 }),
        fc.constantFrom(100, 300, 500, 1000),
        fc.option(
          fc.record({
            window_days: fc.integer({ min: 1, max: 30 }),
            max_automatic_refunds: fc.integer({ min: 1, max: 4 }),
            max_automatic_eur: fc.constantFrom(60, 119.99, 120, 250, 500),
          }),
          { nil: undefined },
        ),
        (order, customers, limit, customerLimits) => {
          const events = reshuffled(order, customers);
          const policy = policyOf(configWithCustomerLimits(customerLimits, configWithLimit(limit)));
          const input = { histories: [{ id: "h", events }], policy };
          const trusting = backtest(input);
          expect(trusting).toEqual(backtest({ ...input, ledger: "validating" }));
          if (trusting.totals.after.by_reason.CUSTOMER_LIMIT_EXCEEDED) limited++;
        },
      ),
      { numRuns: 40 },
    );
    // The histories drawn did exercise the customer windows.
    expect(limited).toBeGreaterThan(5);
  });
});
