import { describe, expect, it } from "vitest";
import { ResponsibilityContractSchema } from "../integrity/contracts.ts";
import type { RefundProposalOutput } from "../claim/proposal-output.ts";
import { selfCheck } from "./self-check.ts";

const responsibility = ResponsibilityContractSchema.parse({
  agent_id: "a1",
  role: "EXECUTOR",
  allowed_policy_types: ["REFUND", "ESCALATE"],
  escalate_on_uncertainty: 0.7,
});
const output: RefundProposalOutput = {
  action: "REFUND",
  order_id: "ord_001",
  amount_eur: 299.99,
  category: "electronics",
  reason: "dead",
  confidence: 0.9,
};
const claim = { order_id: "ord_001", amount_eur: 299.99 };

describe("selfCheck", () => {
  it.each([
    ["an allowed kind with confidence 0.9", {}, []],
    ["confidence exactly at the threshold", { confidence: 0.7 }, []],
    ["confidence 0.69", { confidence: 0.69 }, ["confidence"]],
    ["a kind outside allowed_policy_types", { action: "REPLACE" }, ["policy_kind"]],
    ["both at once", { action: "REPLACE", confidence: 0.1 }, ["policy_kind", "confidence"]],
    ["a NaN confidence", { confidence: Number.NaN }, ["confidence"]],
  ] as const)("%s", (_name, over, failed) => {
    const result = selfCheck({ ...output, ...over }, responsibility, claim);
    if (failed.length === 0) expect(result).toEqual({ ok: true });
    else {
      expect(result).toMatchObject({ ok: false, code: "CLAIMS_SELF_CHECK_FAILED" });
      if (!result.ok) expect(result.failures.map((f) => f.check)).toEqual(failed);
    }
  });

  it.each([
    ["the claim's own order id and amount", {}, claim, []],
    ["a partial refund (less than claimed)", { amount_eur: 100 }, claim, []],
    ["another order id", { order_id: "ord_002" }, claim, ["order_id"]],
    ["a garbled order id", { order_id: ")" }, claim, ["order_id"]],
    ["more than claimed", { amount_eur: 300 }, claim, ["amount"]],
    [
      "float noise compared in cents (0.1 + 0.2 against 0.3 claimed)",
      { amount_eur: 0.1 + 0.2 },
      { order_id: "ord_001", amount_eur: 0.3 },
      [],
    ],
    ["a negative amount for a positive claim", { amount_eur: -9 }, claim, ["amount"]],
    ["zero for a positive claim", { amount_eur: 0 }, claim, ["amount"]],
    ["a fourth decimal (no currency has one)", { amount_eur: 299.9891 }, claim, ["amount"]],
    [
      "a negative claim proposed as claimed (the kernel rejects it as INVALID_AMOUNT)",
      { amount_eur: -45 },
      { order_id: "ord_001", amount_eur: -45 },
      [],
    ],
    ["a zero claim proposed as claimed", { amount_eur: 0 }, { order_id: "ord_001", amount_eur: 0 }, []],
    [
      "the garbled stand-in proposal",
      { action: "REPLACE", order_id: ")", amount_eur: -9, confidence: 1 },
      claim,
      ["policy_kind", "order_id", "amount"],
    ],
  ] as const)("compares the proposal with its claim: %s", (_name, over, against, failed) => {
    const result = selfCheck({ ...output, ...over }, responsibility, against);
    expect(result.ok ? [] : result.failures.map((f) => f.check)).toEqual(failed);
  });

  it("names the claim's order id and amount when the proposal does not answer it", () => {
    const result = selfCheck({ ...output, order_id: "ord_9", amount_eur: 450 }, responsibility, {
      order_id: "ord_001",
      amount_eur: 45,
    });
    expect(result.ok ? [] : result.failures.map((f) => f.message)).toEqual([
      'Order id "ord_9" is not the claim\'s order id "ord_001"',
      "Amount 450 EUR is more than the 45 EUR claimed",
    ]);
  });

  it("names the numbers in the failure message", () => {
    const result = selfCheck({ ...output, confidence: 0.69 }, responsibility, claim);
    expect(result.ok ? [] : result.failures.map((f) => f.message)).toEqual([
      "Confidence 0.69 below escalate_on_uncertainty (0.7)",
    ]);
  });
});
