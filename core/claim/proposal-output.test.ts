// The Decision Maker's proposal schema: what a backend's grammar lets through (it ignores ranges) is refused
// here, so a garbled answer gets its repair round or ends in NEEDS_REVIEW instead of reaching storage.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildProposal } from "../integrity/proposal.ts";
import { proposalOutputOf, RefundProposalOutputSchema } from "./proposal-output.ts";
import type { RefundProposalOutput } from "./proposal-output.ts";

const proposal = {
  action: "REFUND",
  order_id: "ord_001",
  amount_eur: 299.99,
  category: "electronics",
  reason: "Screen is dead",
  confidence: 0.9,
};
const problems = (patch: Record<string, unknown>) => {
  const parsed = RefundProposalOutputSchema.safeParse({ ...proposal, ...patch });
  return parsed.success ? [] : parsed.error.issues.map((i) => i.message);
};

describe("RefundProposalOutputSchema", () => {
  it("accepts a proposal a claim could carry, negative amounts included (the kernel judges those)", () => {
    expect(problems({})).toEqual([]);
    expect(problems({ amount_eur: -50 })).toEqual([]);
    expect(problems({ amount_eur: 0 })).toEqual([]);
  });

  it.each([
    [5e-324, /more than 3 decimals/],
    [123.4567, /more than 3 decimals/],
    [1e21, /between -1000000 and 1000000/],
    [9_007_199_254_740_992, /between -1000000 and 1000000/],
    [Number.NaN, /number/],
  ])(
    "refuses the amount %s, which no claim can carry (found by npm run chaos: DynamoDB refuses 5e-324)",
    (amount, message) => {
      expect(problems({ amount_eur: amount }).join("; ")).toMatch(message);
    },
  );

  it("refuses an amount that is not a number, a blank order id and a confidence outside 0..1", () => {
    expect(problems({ amount_eur: "450" })).toEqual(["amount_eur must be a number"]);
    expect(problems({ order_id: " " })).toEqual(["order_id must not be blank"]);
    expect(problems({ confidence: 1.5 })).toEqual(["confidence must be from 0 to 1"]);
  });
});

describe("proposalOutputOf", () => {
  const build = (output: RefundProposalOutput) =>
    buildProposal({
      dfid: "dfid_1",
      agentId: "claims_agent_v1",
      output,
      createdAt: "2026-06-01T12:00:00Z",
      validForMs: 1,
    });

  it("reads back the output a proposal was built from, byte for byte, through JSON", () => {
    const output = RefundProposalOutputSchema.parse(proposal);
    fc.assert(
      fc.property(
        fc.constantFrom("REFUND", "REPLACE", "ESCALATE"),
        fc.integer({ min: -100_000, max: 100_000 }),
        fc.string(),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (action, cents, reason, confidence) => {
          const o = RefundProposalOutputSchema.parse({
            ...output,
            action,
            amount_eur: cents / 100,
            reason,
            confidence,
          });
          const read = proposalOutputOf(JSON.parse(JSON.stringify(build(o))));
          expect(JSON.stringify(read)).toBe(JSON.stringify(o));
        },
      ),
    );
  });

  it.each([
    ["nothing", undefined],
    ["a string", "proposal"],
    ["a proposal without params", { policy_kind: "REFUND", confidence: 0.9 }],
    [
      "a proposal whose amount is a string",
      { policy_kind: "REFUND", params: { ...proposal, amount_eur: "1" }, confidence: 0.9 },
    ],
  ])("reads no output from %s", (_name, value) => {
    expect(proposalOutputOf(value)).toBeUndefined();
  });
});
