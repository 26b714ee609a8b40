// The shadow policy: a second policy decided beside the live one on the same recorded inputs, recorded in the
// KERNEL_VERDICT audit and never acted on (docs/backtest.md, "Shadow policy"). One definition for the kernel
// shell that records it and the replay that verifies it.
import { decideClaim } from "./kernel.ts";
import type { ClaimVerdict, DecideClaimInput } from "./kernel.ts";
import type { ClaimsContract, ResponsibilityContract } from "../integrity/contracts.ts";

/** The shadow policy as recorded beside its verdict: enough to decide it again. */
export type ShadowPolicy = {
  agent_id: string;
  version: string;
  contract: ClaimsContract;
  responsibility: ResponsibilityContract;
};

/** What the shadow policy decided, whether it agrees with the live verdict (same verdict and reason code), and the policy. */
export type ShadowRecord = {
  verdict: ClaimVerdict["verdict"];
  reason_code: ClaimVerdict["reason_code"];
  layer: ClaimVerdict["layer"];
  agrees: boolean;
  policy: ShadowPolicy;
};

/** The live inputs with the shadow's claims bounds, responsibility contract and registration in their place. */
function shadowInputs(live: DecideClaimInput, policy: ShadowPolicy): DecideClaimInput {
  return {
    ...live,
    contract: policy.contract,
    responsibility: policy.responsibility,
    registry: {
      agents: {
        ...live.registry.agents,
        [policy.agent_id]: {
          agent_id: policy.agent_id,
          version: policy.version,
          contract: policy.responsibility,
          status: "ACTIVE",
        },
      },
    },
  };
}

/**
 * Decides the live inputs again under the shadow policy and compares with the live verdict. A shadow policy the
 * kernel cannot run with records nothing (`undefined`): it never stands in the way of the live decision.
 */
export function decideShadow(
  live: DecideClaimInput,
  verdict: ClaimVerdict,
  policy: ShadowPolicy,
): ShadowRecord | undefined {
  let shadow: ClaimVerdict;
  try {
    shadow = decideClaim(shadowInputs(live, policy));
  } catch {
    return undefined;
  }
  return {
    verdict: shadow.verdict,
    reason_code: shadow.reason_code,
    layer: shadow.layer,
    agrees: shadow.verdict === verdict.verdict && shadow.reason_code === verdict.reason_code,
    policy,
  };
}
