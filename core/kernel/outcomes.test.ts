// Which outcome an ACCEPT gives (docs/returns.md#outcomes): the claim asks, the policy allows, REFUND is the fallback.
import { describe, expect, it } from "vitest";
import { ClaimsContractSchema } from "../integrity/contracts.ts";
import type { ClaimsContract } from "../integrity/contracts.ts";
import { creditBonus, creditFields, outcomeOfClaim, resolveOutcome } from "./outcomes.ts";
import { eur, money } from "./money.ts";

const policy: Pick<ClaimsContract, "outcomes"> = {
  outcomes: {
    outcome: "REFUND",
    store_credit_bonus_pct: 5,
    categories: {
      home: { allows: ["STORE_CREDIT"], store_credit_bonus_pct: 10 },
      garden: { outcome: "STORE_CREDIT", store_credit_bonus_pct: 15 },
      books: { allows: ["EXCHANGE"] },
    },
  },
};

describe("the outcome of an ACCEPT", () => {
  it.each([
    ["no policy, no ask: a refund", {}, ["home"], undefined, { outcome: "REFUND" }],
    ["no ask: the policy's outcome (refund)", policy, ["home"], undefined, { outcome: "REFUND" }],
    [
      "an allowed ask: store credit with the category's bonus",
      policy,
      ["home"],
      "STORE_CREDIT",
      { outcome: "STORE_CREDIT", bonusPct: 10, bonus: eur(800) },
    ],
    [
      "the category's default: store credit without an ask",
      policy,
      ["garden"],
      undefined,
      { outcome: "STORE_CREDIT", bonusPct: 15, bonus: eur(1200) },
    ],
    [
      "an ask the policy does not allow falls back to a refund",
      policy,
      ["electronics"],
      "STORE_CREDIT",
      { outcome: "REFUND", asked: "STORE_CREDIT" },
    ],
    [
      "no policy at all: an ask for credit is refunded",
      {},
      ["home"],
      "STORE_CREDIT",
      { outcome: "REFUND", asked: "STORE_CREDIT" },
    ],
    ["a refund is always allowed, over a store-credit default", policy, ["garden"], "REFUND", { outcome: "REFUND" }],
    [
      "lines of several categories: what all allow, the smallest bonus",
      policy,
      ["home", "garden"],
      "STORE_CREDIT",
      { outcome: "STORE_CREDIT", bonusPct: 10, bonus: eur(800) },
    ],
    ["lines whose defaults differ and no ask: a refund", policy, ["home", "garden"], undefined, { outcome: "REFUND" }],
    ["an exchange where allowed", policy, ["books"], "EXCHANGE", { outcome: "EXCHANGE" }],
  ] as const)("%s", (_, contract, categories, asked, expected) => {
    expect(resolveOutcome(contract, categories, asked, eur(8000))).toEqual(expected);
  });

  it("rounds the bonus down to the currency's minor unit", () => {
    expect(creditBonus(eur(999), 10)).toEqual(eur(99));
    expect(creditBonus(money(1999, "JPY"), 15)).toEqual(money(299, "JPY"));
    expect(creditBonus(eur(5000), 0)).toEqual(eur(0));
  });

  it("puts the credit on the refund's events only for store credit", () => {
    expect(creditFields({ outcome: "REFUND" })).toEqual({});
    expect(creditFields({ outcome: "STORE_CREDIT", bonusPct: 10, bonus: eur(800) })).toEqual({
      credit: { bonus: { value: "8.00", currency: "EUR" }, bonus_pct: 10 },
    });
  });

  it("reads the categories of the claim's lines on the order", () => {
    const order = {
      order_id: "o1",
      purchase_date: "2026-11-01",
      currency: "EUR",
      lines: [
        { line_id: "l1", category: "home", quantity: 1, amount: "40.00" },
        { line_id: "l2", category: "electronics", quantity: 1, amount: "60.00" },
      ],
    };
    const ask = { category: "home", outcome: "STORE_CREDIT" as const };
    expect(outcomeOfClaim(policy, order as never, { ...ask, lines: [{ line_id: "l1" }] }, 4000, "EUR")).toMatchObject({
      outcome: "STORE_CREDIT",
    });
    expect(outcomeOfClaim(policy, order as never, { ...ask, lines: [{ line_id: "l2" }] }, 6000, "EUR")).toEqual({
      outcome: "REFUND",
      asked: "STORE_CREDIT",
    });
  });
});

describe("the outcome policy as configured", () => {
  const base = { allowed_refund_categories: ["home"], max_refund_without_escalation: 500, return_window_days: 14 };
  it.each([
    [{ outcome: "CASH" }, "an outcome is one of REFUND, STORE_CREDIT, EXCHANGE"],
    [{ store_credit_bonus_pct: 120 }, "store_credit_bonus_pct is at most 100"],
    [{ store_credit_bonus_pct: 2.5 }, "store_credit_bonus_pct is a whole percentage"],
    [{ categories: { home: { allows: [] } } }, "allows names at least one outcome"],
  ])("refuses %j naming what is wrong", (outcomes, message) => {
    const parsed = ClaimsContractSchema.safeParse({ ...base, outcomes });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.message)).toContain(message);
  });
});
