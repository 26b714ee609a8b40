// A person approving a claim whose customer's words were erased while it waited at its review (issue 38): the
// proposal's idempotency key hashed those words and cannot be computed again, so the approval's re-check passes the
// key check on an erased proposal — and only there: not without an approval, not on a proposal changed otherwise.
import { describe, expect, it } from "vitest";
import { ResponsibilityContractSchema, type ClaimsContract, type Order } from "../integrity/contracts.ts";
import { buildProposal, type PolicyProposal } from "../integrity/proposal.ts";
import { createAgentRegistry } from "../integrity/registry.ts";
import type { Claim } from "../claim/claim.ts";
import { ERASED, readsErased } from "../privacy/sealing.ts";
import { decideClaim, type DecideClaimInput } from "./kernel.ts";

const RECEIVED_AT = "2026-03-16T10:00:00.000Z";
const AGENT = "claims_agent_v1";
const contract: ClaimsContract = {
  allowed_refund_categories: ["electronics"],
  max_refund_without_escalation: 500,
  return_window_days: 14,
};
const responsibility = ResponsibilityContractSchema.parse({
  agent_id: AGENT,
  role: "EXECUTOR",
  allowed_policy_types: ["REFUND", "REPLACE", "ESCALATE"],
  escalate_on_uncertainty: 0.7,
});
const registry = createAgentRegistry({ acceptedMajor: 1 });
registry.handshake({ agent_id: AGENT, version: "1.0.0", contract: responsibility });
const order: Order = {
  order_id: "ord_z",
  purchase_date: "2026-03-13T10:00:00.000Z",
  category: "electronics",
  amount: 900,
  currency: "EUR",
};
const reason = "Zelda Quirinius here, the screen is dead, IBAN DE89370400440532013000";
const claim: Claim = { order_id: "ord_z", amount_eur: 900, category: "electronics", reason };
const proposal: PolicyProposal = buildProposal({
  dfid: "dfid_z",
  agentId: AGENT,
  output: { action: "REFUND", order_id: "ord_z", amount_eur: 900, category: "electronics", reason, confidence: 0.9 },
  createdAt: "2026-03-16T10:01:00.000Z",
  validForMs: 600_000,
});
const input = (over: Partial<DecideClaimInput> = {}): DecideClaimInput => ({
  proposal,
  claim,
  contract,
  responsibility,
  registry: registry.snapshot(),
  order,
  ledgerEntry: undefined,
  receivedAt: RECEIVED_AT,
  decidedAt: "2026-03-16T10:02:00.000Z",
  ...over,
});
/** What the review record's proposal and the claim read after the customer's erasure. */
const erasedProposal = { ...proposal, params: { ...proposal.params, reason: ERASED } };
const erasedClaim = { ...claim, reason: ERASED };

describe("an approval after the customer's erasure", () => {
  it("escalates first (above the bound), and the proposal's words are what its key hashed", () => {
    expect(decideClaim(input()).verdict).toBe("ESCALATE");
    expect(readsErased(proposal)).toBe(false);
    expect(readsErased(erasedProposal)).toBe(true);
  });

  it("is checked on what survives the erasure: the approval passes", () => {
    expect(decideClaim(input({ proposal: erasedProposal, claim: erasedClaim, approval: {} }))).toMatchObject({
      verdict: "ACCEPT",
      reason_code: "VALIDATION_PASSED",
    });
    // The money checks still run: an approval above the order is refused.
    expect(
      decideClaim(input({ proposal: erasedProposal, claim: erasedClaim, approval: { amountEur: 900.01 } })).verdict,
    ).toBe("REJECT");
  });

  it("still refuses an erased proposal without a person's approval", () => {
    expect(decideClaim(input({ proposal: erasedProposal, claim: erasedClaim })).reason_code).toBe(
      "IDEMPOTENCY_KEY_MISMATCH",
    );
  });

  it("still refuses a proposal changed otherwise, approval or not", () => {
    const changed = { ...proposal, params: { ...proposal.params, reason: "another text entirely" } };
    expect(decideClaim(input({ proposal: changed, approval: {} })).reason_code).toBe("IDEMPOTENCY_KEY_MISMATCH");
  });
});
