// Crew completion, decided without ports: step requests go to the worker, a valid proposal that passes the
// self-check goes to the kernel, everything else to a person; a claim already final spends nothing more.
import { describe, expect, it } from "vitest";
import type { OutboundCrewEvent } from "../../core/crew/index.ts";
import type { ClaimRecord } from "../../core/kernel/claim-record.ts";
import { crewEffects } from "./crew-completion.ts";
import { ACCEPTABLE, audits, claimRecord, NOW, policy, shape } from "./decide.test-kit.ts";

const OUTPUT = { action: "REFUND", ...ACCEPTABLE, confidence: 0.9 };
const completed = (output: unknown) => ({ type: "crew.completed", output }) as OutboundCrewEvent;
const requested = { type: "agent.step.requested", role: "analyst" } as unknown as OutboundCrewEvent;
const NEEDS_REVIEW = [
  "audit CLAIM_NEEDS_REVIEW",
  "audit REVIEW_REQUESTED",
  "review_open",
  "publish ClaimNeedsReview,ReviewRequested",
  "claim_update",
];

describe("crewEffects", () => {
  it("sends the proposal of a valid output to the kernel after auditing the decision, writing no claim update", () => {
    const effects = crewEffects([completed(OUTPUT)], claimRecord(ACCEPTABLE), NOW, policy);
    // The claim keeps the proposal from its final update on (the kernel writes it): no write of its own here.
    expect(shape(effects)).toEqual(["audit AGENT_DECISION", "proposal"]);
    const proposal = effects[1];
    expect(proposal).toMatchObject({
      kind: "proposal",
      message: {
        claim_id: "clm_1",
        dfid: "dfid_clm_1",
        proposal: {
          agent_id: policy.agent.agentId,
          params: { order_id: "ord_001", amount_eur: 299.99 },
          valid_for_ms: policy.settings.proposalValidityMs,
          created_at: new Date(NOW).toISOString(),
        },
      },
    });
    expect(audits(effects)[0]?.details).toMatchObject({ self_check: "passed", output: OUTPUT });
  });

  it.each([
    [
      "an output that is no proposal",
      { nonsense: true },
      "CREW_OUTPUT_INVALID",
      ["audit CREW_FAILED", ...NEEDS_REVIEW],
    ],
    [
      "a proposal for another order fails the self-check",
      { ...OUTPUT, order_id: "ord_002" },
      "CLAIMS_SELF_CHECK_FAILED",
      ["audit CLAIMS_SELF_CHECK_FAILED", ...NEEDS_REVIEW],
    ],
    [
      "a proposal below the confidence bar fails the self-check",
      { ...OUTPUT, confidence: 0.1 },
      "CLAIMS_SELF_CHECK_FAILED",
      ["audit CLAIMS_SELF_CHECK_FAILED", ...NEEDS_REVIEW],
    ],
  ])("sends %s to a person", (_name, output, reasonCode, expected) => {
    const effects = crewEffects([completed(output)], claimRecord(ACCEPTABLE), NOW, policy);
    expect(shape(effects)).toEqual(expected);
    expect(effects.at(-1)).toMatchObject({ patch: { status: "NEEDS_REVIEW", reason_code: reasonCode } });
    // A proposal that failed the self-check is kept with the claim's NEEDS_REVIEW update (one write); garbage is not.
    const patch = (effects.at(-1) as { patch: Record<string, unknown> }).patch;
    if (reasonCode === "CLAIMS_SELF_CHECK_FAILED") expect(patch.proposal).toEqual(output);
    else expect(patch).not.toHaveProperty("proposal");
  });

  it.each([
    ["a failed crew", undefined, "CREW_FAILED"],
    ["a crew whose model could not be used, named", { code: "LLM_UNREACHABLE", message: "refused" }, "LLM_UNREACHABLE"],
  ])("sends %s to a person", (_name, cause, reasonCode) => {
    const failed = {
      type: "crew.failed",
      code: "STEP_FAILED",
      role: "analyst",
      reason: "gave up",
    } as OutboundCrewEvent;
    const effects = crewEffects([failed], claimRecord(ACCEPTABLE), NOW, policy, cause);
    expect(shape(effects)).toEqual(["audit CREW_FAILED", ...NEEDS_REVIEW]);
    expect(audits(effects)[0]?.details).toMatchObject({
      code: "STEP_FAILED",
      role: "analyst",
      reason_code: reasonCode,
    });
  });

  it("asks the worker for each requested step, in order, naming the claim's flow", () => {
    const second = { ...requested, role: "decision" } as unknown as OutboundCrewEvent;
    const effects = crewEffects([requested, second], claimRecord(ACCEPTABLE), NOW, policy);
    expect(effects).toEqual([
      {
        kind: "agent_step",
        message: { claim_id: "clm_1", dfid: "dfid_clm_1", root_dfid: "dfid_clm_1", request: requested },
      },
      {
        kind: "agent_step",
        message: { claim_id: "clm_1", dfid: "dfid_clm_1", root_dfid: "dfid_clm_1", request: second },
      },
    ]);
  });

  it.each<ClaimRecord["status"]>(["DECIDED", "NEEDS_REVIEW"])(
    "spends nothing on a claim already %s: a late proposal is only audited, never sent",
    (status) => {
      const effects = crewEffects([requested, completed(OUTPUT)], claimRecord(ACCEPTABLE, { status }), NOW, policy);
      expect(shape(effects)).toEqual(["audit CREW_COMPLETED"]);
      expect(audits(effects)[0]).toMatchObject({ state: status, severity: "WARN", details: { output: OUTPUT } });
      expect(crewEffects([requested], claimRecord(ACCEPTABLE, { status }), NOW, policy)).toEqual([]);
    },
  );
});
