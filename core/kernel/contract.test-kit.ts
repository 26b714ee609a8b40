// Contracts shared by the claims and LLM tests: the seed's claims bounds and a responsibility contract.
import type { ClaimsContract, ResponsibilityContract } from "../integrity/contracts.ts";

/** The seed's claims bounds: electronics, clothing, home; 500 EUR; 14 days. */
export const testContract: ClaimsContract = {
  allowed_refund_categories: ["electronics", "clothing", "home"],
  max_refund_without_escalation: 500,
  return_window_days: 14,
};

/** A responsibility contract allowed to propose REFUND and ESCALATE, escalating below 0.7 confidence. */
export const testResponsibility: ResponsibilityContract = {
  agent_id: "claims-agent-1",
  role: "claims",
  mission: "Process customer claims fairly, within policy boundaries.",
  allowed_policy_types: ["REFUND", "ESCALATE"],
  escalate_on_uncertainty: 0.7,
  authorized_categories: [],
};
