// The rules model's analyst holds a claim to the bound of the currency it states (core/agents/rules-assessment.ts):
// other currencies are valid since issue 32, so a USD claim under USD bounds raises no currency flag, one in a
// currency the policy does not bound is for a person (CURRENCY_NOT_IN_POLICY; the old CURRENCY_NOT_EUR is gone).
import { describe, expect, it } from "vitest";
import type { Claim } from "../claim/claim.ts";
import { testContract } from "../kernel/contract.test-kit.ts";
import { assessClaim } from "./rules-assessment.ts";

const contract = { ...testContract, currencies: { USD: { max_refund_without_escalation: 600 } } };
const claim = (over: Partial<Claim>): Claim => ({
  order_id: "ord_1",
  amount_eur: 100,
  category: "electronics",
  reason: "Broken",
  ...over,
});
// Only the currency's and the amount's flags (a claim without a purchase date is flagged for that too).
const codes = (c: Claim) =>
  assessClaim(c, contract)
    .flags.map((f) => f.code)
    .filter((code) => code !== "NO_PURCHASE_DATE");

describe("assessClaim's currency", () => {
  it("raises no currency flag for a claim in a currency the policy bounds, and holds it to that bound", () => {
    expect(codes(claim({ currency: "usd", amount_eur: 550 }))).toEqual([]);
    expect(codes(claim({ currency: "USD", amount_eur: 650 }))).toEqual(["AMOUNT_ABOVE_LIMIT"]);
    expect(codes(claim({ amount_eur: 100 }))).toEqual([]);
  });

  it("leaves a claim in a currency the policy does not bound to a person, never comparing it with EUR's bound", () => {
    const flags = assessClaim(claim({ currency: "JPY", amount_eur: 12800 }), contract).flags;
    expect(flags).toContainEqual(expect.objectContaining({ code: "CURRENCY_NOT_IN_POLICY", weight: "human" }));
    expect(codes(claim({ currency: "JPY", amount_eur: 12800 }))).toEqual(["CURRENCY_NOT_IN_POLICY"]);
    expect(flags.map((f) => f.code)).not.toContain("CURRENCY_NOT_EUR");
  });
});
