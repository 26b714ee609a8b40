import { describe, expect, it } from "vitest";
import { KernelInputError } from "../integrity/errors.ts";
import { buildProposal } from "../integrity/proposal.ts";
import type { ClaimsContract, ResponsibilityContract } from "../integrity/contracts.ts";
import { buildVerdictRecord, planExecution, verdictIdFor } from "./execution.ts";
import { ClaimVerdictDetailSchema } from "./events.ts";
import type { ClaimVerdict } from "./kernel.ts";

const DECIDED_AT = "2026-03-16T10:02:00.000Z";
const POLICY: { contract: ClaimsContract; responsibility: ResponsibilityContract } = {
  contract: { allowed_refund_categories: ["electronics"], max_refund_without_escalation: 500, return_window_days: 14 },
  responsibility: {
    agent_id: "claims_agent_v1",
    role: "EXECUTOR",
    mission: "m",
    allowed_policy_types: ["REFUND" as const],
    escalate_on_uncertainty: 0.7,
    authorized_categories: [],
  },
};
const proposalFor = (dfid: string, amount = 299.99, action: "REFUND" | "ESCALATE" = "REFUND") =>
  buildProposal({
    dfid,
    agentId: "claims_agent_v1",
    output: {
      action,
      order_id: "ord_001",
      amount_eur: amount,
      category: "electronics",
      reason: "dead",
      confidence: 0.9,
    },
    createdAt: "2026-03-16T10:01:00Z",
    validForMs: 600_000,
  });
const accept: ClaimVerdict = {
  verdict: "ACCEPT",
  reason_code: "VALIDATION_PASSED",
  reason: "Validation passed",
  layer: 12,
  checks: [],
};
const escalate: ClaimVerdict = {
  verdict: "ESCALATE",
  reason_code: "AMOUNT_ABOVE_LIMIT",
  reason: "Amount 1200.0 EUR exceeds max_refund_without_escalation (500.0 EUR). Human approval required.",
  layer: 11,
  checks: [],
};
const reject: ClaimVerdict = {
  verdict: "REJECT",
  reason_code: "SCHEMA_INVALID",
  reason: "Proposal does not parse: (root): …",
  layer: 1,
  checks: [],
};

describe("verdict record", () => {
  it("carries the policy version: the same bounds and contract give the same one, any change another", () => {
    const at = (policy: typeof POLICY) =>
      buildVerdictRecord({
        policy,
        verdict: accept,
        proposal: proposalFor("d1"),
        claimId: "c1",
        dfid: "d1",
        decidedAt: DECIDED_AT,
      }).policy_version;
    expect(at(POLICY)).toMatch(/^pol_[0-9a-f]{16}$/);
    expect(at(structuredClone(POLICY))).toBe(at(POLICY));
    expect(at({ ...POLICY, contract: { ...POLICY.contract, max_refund_without_escalation: 501 } })).not.toBe(
      at(POLICY),
    );
    expect(
      at({
        ...POLICY,
        contract: {
          ...POLICY.contract,
          customer_limits: { window_days: 30, max_automatic_refunds: 3, max_automatic_eur: 500 },
        },
      }),
    ).not.toBe(at(POLICY));
    expect(at({ ...POLICY, responsibility: { ...POLICY.responsibility, escalate_on_uncertainty: 0.8 } })).not.toBe(
      at(POLICY),
    );
  });

  it("matches the ClaimVerdict detail of docs/events.md and is deterministic", () => {
    const input = {
      policy: POLICY,
      verdict: accept,
      proposal: proposalFor("d1"),
      claimId: "c1",
      dfid: "d1",
      decidedAt: DECIDED_AT,
      simulationId: "sim_1",
    };
    const a = buildVerdictRecord(input);
    expect(Object.keys(a).sort()).toEqual([
      "amount_eur",
      "claim_id",
      "decided_at",
      "dfid",
      "idempotency_key",
      "order_id",
      "policy_kind",
      "policy_version",
      "reason",
      "reason_code",
      "simulation_id",
      "verdict",
      "verdict_id",
    ]);
    expect(a).toMatchObject({
      claim_id: "c1",
      dfid: "d1",
      verdict: "ACCEPT",
      order_id: "ord_001",
      amount_eur: 299.99,
      policy_kind: "REFUND",
      idempotency_key: proposalFor("d1").idempotency_key,
    });
    expect(a.verdict_id).toBe(verdictIdFor(a.idempotency_key));
    expect(buildVerdictRecord(JSON.parse(JSON.stringify(input)))).toEqual(a);
    expect(ClaimVerdictDetailSchema.parse(a)).toEqual(a);
  });
  it("gives another verdict id to another proposal or another flow", () => {
    const id = (p: unknown, dfid = "d1") =>
      buildVerdictRecord({ policy: POLICY, verdict: accept, proposal: p, claimId: "c1", dfid, decidedAt: DECIDED_AT })
        .verdict_id;
    expect(
      new Set([id(proposalFor("d1")), id(proposalFor("d2")), id(proposalFor("d1", 100)), id("junk"), id("junk", "d2")])
        .size,
    ).toBe(5);
  });
  it("a proposal claiming another proposal's key still gets its own verdict id", () => {
    const victim = proposalFor("d1");
    const forged = { ...proposalFor("d1", 1), idempotency_key: victim.idempotency_key };
    const id = (p: unknown) =>
      buildVerdictRecord({
        policy: POLICY,
        verdict: reject,
        proposal: p,
        claimId: "c1",
        dfid: "d1",
        decidedAt: DECIDED_AT,
      }).verdict_id;
    expect(id(forged)).not.toBe(id(victim));
  });
  it("records nulls for what an unparseable proposal does not carry", () => {
    const r = buildVerdictRecord({
      policy: POLICY,
      verdict: reject,
      proposal: { params: { amount_eur: "12" }, policy_kind: "NUKE" },
      claimId: "c1",
      dfid: "d1",
      decidedAt: DECIDED_AT,
    });
    expect(r).toMatchObject({ order_id: null, amount_eur: null, policy_kind: null, verdict: "REJECT" });
    expect(r).not.toHaveProperty("simulation_id");
  });
  it("throws KernelInputError for a bad decision time", () => {
    expect(() =>
      buildVerdictRecord({
        policy: POLICY,
        verdict: accept,
        proposal: proposalFor("d1"),
        claimId: "c1",
        dfid: "d1",
        decidedAt: "now",
      }),
    ).toThrow(KernelInputError);
  });
});

describe("planExecution", () => {
  it("plans a reservation for ACCEPT, a review for ESCALATE, nothing for REJECT", () => {
    expect(planExecution(accept, proposalFor("d1"), "c1")).toEqual([
      { type: "refund.reserve", claim_id: "c1", order_id: "ord_001", amount_cents: 29999, amount_eur: 299.99 },
    ]);
    expect(planExecution(escalate, proposalFor("d1"), "c1")).toEqual([
      { type: "review.create", claim_id: "c1", reason_code: "AMOUNT_ABOVE_LIMIT", reason: escalate.reason },
    ]);
    expect(planExecution(reject, "junk", "c1")).toEqual([]);
  });
  it("refuses to plan a refund for an ACCEPT without a valid amount", () => {
    expect(() => planExecution(accept, { params: { order_id: "ord_001", amount_eur: "299.99" } }, "c1")).toThrow(
      KernelInputError,
    );
  });
});
