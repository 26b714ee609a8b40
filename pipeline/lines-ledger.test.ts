// Refunds per line through the real pipeline (in memory): a claim on one line of an order with lines is judged and
// reserved against that line, a later claim on the other line against its own, and two claims racing on one line
// never refund more than was paid for it (the ledger's per-line guard, core/kernel/ledger.ts; docs/orders.md).
import { describe, expect, it } from "vitest";
import { createRulesModel } from "../core/agents/rules-model.ts";
import type { Order } from "../core/integrity/index.ts";
import { assertLedgerEntry } from "../core/kernel/ledger.ts";
import { createInProcessPipeline } from "./in-process.ts";
import { decideReview } from "./review.ts";
import { raceClaims, raceOutcome } from "./race.test-kit.ts";
import { bundledConfig } from "./bundled-config.test-kit.ts";
import { TV_AND_SHIRTS } from "../core/kernel/order-lines.test-kit.ts";

const NOW = Date.parse("2026-06-01T12:00:00Z");
const config = bundledConfig(NOW);

// A TV (499.00) and two shirts (40.00 for both), 9.99 shipping (never refunded: the bundled policy says nothing).
const ORDER: Order = {
  order_id: "ord_lines",
  purchase_date: "2026-05-29T10:00:00Z",
  currency: "EUR",
  shipping: "9.99",
  lines: TV_AND_SHIRTS.map((line) => ({ ...line })),
} as Order;

function pipeline() {
  const { contract } = config.agent;
  return createInProcessPipeline({
    agent: config.agent,
    orders: [...config.orders, ORDER],
    llm: createRulesModel({ contract, responsibility: config.agent.responsibility }),
    clock: { now: () => NOW },
  });
}

const claim = (category: string, amount_eur: number) => ({
  claim: { order_id: "ord_lines", amount_eur, category, reason: "Arrived damaged" },
});

describe("refunds per line", () => {
  it("refunds a line at most what was paid for it, over claims, and judges the other line against its own amount", async () => {
    const p = pipeline();
    expect((await p.decide(claim("clothing", 30), { claimId: "clm_a" })).record?.verdict).toBe("ACCEPT");
    // 11 more on the shirts' line would pass its 40.00 (the order has 509.00 left): rejected on the line's balance.
    const over = (await p.decide(claim("clothing", 11), { claimId: "clm_b" })).record;
    expect(over).toMatchObject({ verdict: "REJECT", reason_code: "EXCEEDS_REFUNDABLE_BALANCE" });
    expect(over?.reason).toContain("refundable balance of line l2");
    expect((await p.decide(claim("clothing", 10), { claimId: "clm_c" })).record?.verdict).toBe("ACCEPT");
    // The TV's line is its own: 450 (under the 500 limit with the 40 already refunded automatically).
    expect((await p.decide(claim("electronics", 450), { claimId: "clm_d" })).record?.verdict).toBe("ACCEPT");
    const entry = (await p.deps.ledger.get("ord_lines"))!;
    assertLedgerEntry(entry);
    expect(entry).toMatchObject({ refunded_cents: 49_000, line_cents: { l1: 45_000, l2: 4_000 } });
  });

  it("never refunds a line twice when two claims on it race (one ACCEPT, the other judged on what is left)", async () => {
    const p = pipeline();
    await raceClaims(p, [claim("clothing", 30), claim("clothing", 30)]);
    const { accepted, records, refundedCents } = await raceOutcome(p, 2);
    expect(accepted).toHaveLength(1);
    expect(records.find((r) => r?.verdict !== "ACCEPT")).toMatchObject({
      verdict: "REJECT",
      reason_code: "EXCEEDS_REFUNDABLE_BALANCE",
    });
    expect(refundedCents).toBe(3_000);
    expect((await p.deps.ledger.get("ord_lines"))?.line_cents).toEqual({ l2: 3_000 });
  });

  it("reserves a claim that names its line and units on that line, whatever its category says", async () => {
    const p = pipeline();
    const one = { claim: { ...claim("electronics", 20).claim, lines: [{ line_id: "l2", quantity: 1 }] } };
    expect((await p.decide(one, { claimId: "clm_one" })).record?.verdict).toBe("ACCEPT");
    expect((await p.deps.ledger.get("ord_lines"))?.claim_lines).toEqual({ clm_one: { lines: { l2: 2_000 } } });
    const unknown = { claim: { ...claim("clothing", 5).claim, lines: [{ line_id: "l3" }] } };
    expect((await p.decide(unknown, { claimId: "clm_unknown" })).record).toMatchObject({
      verdict: "REJECT",
      reason_code: "LINE_NOT_IN_ORDER",
    });
    // Both lines: 499 on the TV, the other 20 on the shirts' 20 left.
    const both = { claim: { ...claim("electronics", 519).claim, lines: [{ line_id: "l1" }, { line_id: "l2" }] } };
    const { record } = await p.decide(both, { claimId: "clm_both" });
    // Above the 500 automatic limit with the 20 refunded: a person decides, and nothing is reserved yet.
    expect(record).toMatchObject({ verdict: "ESCALATE", reason_code: "AMOUNT_ABOVE_LIMIT" });
    expect((await decideReview("clm_both", { decision: "APPROVE", reviewer: "r" }, p.deps)).ok).toBe(true);
    const entry = (await p.deps.ledger.get("ord_lines"))!;
    expect(entry).toMatchObject({ refunded_cents: 53_900, line_cents: { l1: 49_900, l2: 4_000 } });
    expect(entry.claim_lines?.clm_both).toEqual({ lines: { l1: 49_900, l2: 2_000 } });
  });

  it("a person's approval of a claim whose line is not known counts on every line", async () => {
    const p = pipeline();
    // 'home' matches no line of the order: only a person can say which item is meant.
    const { record } = await p.decide(claim("home", 35), { claimId: "clm_amb" });
    expect(record).toMatchObject({ verdict: "ESCALATE", reason_code: "LINE_AMBIGUOUS" });
    expect((await decideReview("clm_amb", { decision: "APPROVE", reviewer: "r" }, p.deps)).ok).toBe(true);
    expect((await p.deps.ledger.get("ord_lines"))?.line_cents).toEqual({ l1: 3_500, l2: 3_500 });
    // The shirts' line has at most 5.00 left.
    expect((await p.decide(claim("clothing", 6), { claimId: "clm_x" })).record).toMatchObject({
      verdict: "REJECT",
      reason_code: "EXCEEDS_REFUNDABLE_BALANCE",
    });
    expect((await p.decide(claim("clothing", 5), { claimId: "clm_y" })).record?.verdict).toBe("ACCEPT");
  });
});
