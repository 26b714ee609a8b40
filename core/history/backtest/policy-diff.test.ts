// The backtest's header says what the candidate changes against the recorded policy: "500 → 100".
import { describe, expect, it } from "vitest";
import { formatPolicyChanges, policyChanges, recordedPolicy } from "./policy-diff.ts";
import type { ComparedPolicy } from "./policy-diff.ts";
import type { AuditEvent } from "../../integrity/audit.ts";

const live: ComparedPolicy = {
  contract: {
    allowed_refund_categories: ["electronics", "home"],
    max_refund_without_escalation: 500,
    return_window_days: 14,
    customer_limits: { window_days: 30, max_automatic_refunds: 2, max_automatic_eur: 500 },
  },
  escalate_on_uncertainty: 0.7,
};

describe("policyChanges", () => {
  it("names each changed setting with both values, in the config's order, and nothing else", () => {
    const candidate: ComparedPolicy = {
      contract: {
        ...live.contract,
        max_refund_without_escalation: 100,
        allowed_refund_categories: ["home", "electronics"],
        customer_limits: { window_days: 30, max_automatic_refunds: 1, max_automatic_eur: 500 },
      },
      escalate_on_uncertainty: 0.8,
    };
    const changes = policyChanges(live, candidate);
    expect(changes).toEqual([
      { setting: "max_refund_without_escalation", from: "500", to: "100" },
      { setting: "escalate_on_uncertainty", from: "0.7", to: "0.8" },
      { setting: "customer_limits.max_automatic_refunds", from: "2", to: "1" },
    ]);
    expect(formatPolicyChanges(changes)).toBe(
      "max_refund_without_escalation 500 → 100; escalate_on_uncertainty 0.7 → 0.8; customer_limits.max_automatic_refunds 2 → 1",
    );
    expect(formatPolicyChanges(policyChanges(live, live))).toBe("none");
  });

  it("says a customer limit added or removed", () => {
    const { customer_limits: _none, ...unbounded } = live.contract;
    expect(policyChanges(live, { ...live, contract: unbounded })[0]).toEqual({
      setting: "customer_limits.window_days",
      from: "30",
      to: "none",
    });
  });
});

describe("recordedPolicy", () => {
  const submitted = (contract: unknown): AuditEvent =>
    ({
      event_type: "PROPOSAL_SUBMITTED",
      details: { kernel_inputs: { contract, responsibility: { escalate_on_uncertainty: 0.7 } } },
    }) as unknown as AuditEvent;

  it("reads the policy of the last recorded decision, skipping what does not parse", () => {
    const later = { ...live.contract, max_refund_without_escalation: 300 };
    expect(recordedPolicy([submitted(live.contract), submitted(later), submitted({ nonsense: 1 })])).toEqual({
      contract: later,
      escalate_on_uncertainty: 0.7,
    });
    expect(recordedPolicy([])).toBeUndefined();
  });
});
